import math
import os
import shutil
import sys
import tempfile

# Before numpy loads OpenBLAS (read once, at load), here and in every worker and process the suite starts (they
# inherit it): after each call on two threads, OpenBLAS's second thread spins for about 0.1 s waiting for more work
# (2^28 cycles) before it sleeps. With three workers on two cores that spin takes a core from another worker (2.3% of
# the suite's CPU in a perf profile). 4 (its least) lets it sleep at once. Only how its idle thread waits changes:
# the suite sets no thread count and no result changes (fdbu's free-core sampling may see a core idle more often)
# (benchmarks/RESULTS.md, "The test suite on 2 cores").
NUMPY_BEFORE_CONFTEST = "numpy" in sys.modules
os.environ["OPENBLAS_THREAD_TIMEOUT"] = "4"

import pytest  # noqa: E402

from fdbu.metrics.stats import Bootstrap  # noqa: E402
from fdbu.vad import SileroVAD, SpeechDetector  # noqa: E402

# tests/leaks.py: a test that leaves the process changed (a signal handler, the environment, logging, ...) fails
pytest_plugins = ("leaks",)

Z = 1.959963984540054
_CACHE = None


SHARED = "FDBU_TEST_CACHE"  # the session's cache root, set by the process that made it, inherited by its workers


def pytest_configure(config):
    """One cache root for the session, every xdist worker and every fdbu they start: the batched backend
    calibrates once per device (fdbu.vad.calibration; processes started together wait for the first, which
    holds the calibration's lock), speech probabilities computed by one worker are the other's, and nothing
    lands in the user's own cache. The process that made the folder removes it."""
    global _CACHE
    _plugins()
    if os.environ.get(SHARED) and os.environ.get("PYTEST_XDIST_WORKER"):  # a worker: its controller's folder
        os.environ["XDG_CACHE_HOME"] = os.environ[SHARED]
        return  # and its controller's order (ORDER, inherited: xdist needs every worker to collect one order)
    import secrets

    given = config.getoption("order_seed", None)
    os.environ[ORDER] = str(given if given is not None else secrets.randbelow(2**32))
    _CACHE = tempfile.mkdtemp(prefix="fdbu-test-cache-")
    os.environ["XDG_CACHE_HOME"] = os.environ[SHARED] = _CACHE


def _plugins() -> None:
    """FDBU_PLUGINS=made_up_plugin: the whole suite with a plugin's family and command registered, in this process
    (every worker) and in every fdbu it starts (tests/ on their PYTHONPATH, so they import the plugin as the CLI
    loads it): the tests read the registries, and pass with a release or a command they do not name."""
    from fdbu import registry

    if not os.environ.get(registry.PLUGINS):
        return
    here = os.path.dirname(os.path.abspath(__file__))
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if here not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join([here, *paths])
    registry.load_plugins()


def pytest_unconfigure(config):
    if _CACHE:
        shutil.rmtree(_CACHE, ignore_errors=True)


# The test files that load NeMo into the worker that runs them (its imports alone are about 8 s of CPU): `make test`
# hands them to one worker together, as one unit (pytest_xdist_make_scheduler), so one worker pays for them, not
# each of the three, and the session's tiny checkpoints (`built`) are built once there. A file not listed that loads
# NeMo costs that worker its imports and a build, nothing else (test_cluster.py's one test does: the SLURM tests
# share one cluster on one worker). test_ctrl_c.py (its asr rerun) and test_v15.py (its fdbu asr) joined for issue 78:
# measured 10-12 s of CPU each in the worker that ran them.
NEMO_FILES = ("test_asr.py", "test_v2.py", "test_shards.py", "test_kill.py", "test_asr_by_name.py", "test_ctrl_c.py",
              "test_v15.py")

# The units of work (a file, or NeMo's files together: about 200 s) that take longest on one worker, longest first:
# their wall seconds in one `make test` (2 cores, 3 workers) were 200 to 3. `make test` hands workers whole units
# in collection order (--dist loadfile, xdist's reorder turned off), so these start first and the short files fill in
# after them: no worker is left alone with a minute-long file at the end (measured before: test_readme.py, 6 tests
# and so last in xdist's order by number of tests, started 347 s in and ended 46 s after the other two workers).
# Only the time depends on it.
LONGEST_FIRST = (
    *NEMO_FILES, "test_cluster.py", "test_batched_vad.py", "test_readme.py", "test_figures.py",
    "test_refusals_surfaces.py", "test_views.py", "test_official_scripts.py", "test_first_output.py",
    "test_compare_decisions.py", "test_refusals.py", "test_at_scale.py", "test_sweep.py", "test_registry.py",
    "test_overlap.py", "test_site.py", "test_segment_kernel.py", "test_report_browser.py", "test_docs.py",
    "test_real_captures.py", "test_report_inputs.py", "test_v2_official.py", "test_official_run.py",
    "test_official_v15.py", "test_compare.py", "test_layers.py", "test_official_layout.py", "test_user_surfaces_2.py",
    "test_leaks.py", "test_vad_cache.py", "test_kernels.py", "test_unprivileged.py", "test_links_and_jobs.py",
    "test_reference_column.py", "test_cli.py", "test_judge.py",
)


ORDER = "FDBU_TEST_ORDER_SEED"  # the random order's seed, chosen by the process that starts the workers


def pytest_addoption(parser):
    parser.addoption("--order-seed", type=int, default=None,
                     help="fdbu: the seed of the tests' random order (default: a new one each run, printed first)")


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Every run in another order (issue 78): the test files, and each file's tests, shuffled by a seed that is printed
    first (`--order-seed=N` repeats that order), before pytest groups the tests that share a parametrized fixture;
    then the units of LONGEST_FIRST first, in its order, and every other file after them in the seed's order (a
    stable sort: the NeMo unit's files, which share one worker, stay in the seed's order too, so which test runs
    after which in a worker changes from run to run, while the long units still start first). A test that leaves its
    worker changed (tests/leaks.py) or needs another to run first then fails on some seed, not on one machine."""
    import random

    seed = int(os.environ[ORDER])
    draw = random.Random(seed)
    files: dict[str, list] = {}
    for item in items:
        files.setdefault(item.path.name, []).append(item)
    for tests in files.values():  # the tests of a class stay together (its fixtures are set up once)
        groups: dict[object, list] = {}
        for item in tests:
            groups.setdefault(getattr(item, "cls", None), []).append(item)
        for group in groups.values():
            draw.shuffle(group)
        order = list(groups.values())
        draw.shuffle(order)
        tests[:] = [item for group in order for item in group]
    names = list(files)
    draw.shuffle(names)
    items[:] = [item for name in names for item in files[name]]
    result = yield
    rank = {name: k for k, name in enumerate(LONGEST_FIRST)}
    for name in NEMO_FILES:
        rank[name] = 0  # one unit, one worker: its files in the seed's order
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))
    return result


def pytest_sessionstart(session):
    """The seed, first on the screen (even under -q, which hides pytest's header) and again in the summary."""
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None and not os.environ.get("PYTEST_XDIST_WORKER"):
        reporter.write_line(_order_line())


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    terminalreporter.write_line(_order_line())


def _order_line() -> str:
    return f"random order: --order-seed={os.environ[ORDER]} (add it to pytest's line to run the tests in this order again)"


def unit_of(nodeid: str) -> str:
    """The unit of work a test belongs to under --dist loadfile: its file, or all of NEMO_FILES as one."""
    file = nodeid.split("::", 1)[0]
    return "NeMo's test files" if file.rsplit("/", 1)[-1] in NEMO_FILES else file


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook: without xdist, no workers to schedule
def pytest_xdist_make_scheduler(config, log):
    """--dist loadfile with units of `unit_of`, handed out in collection order (LONGEST_FIRST), not xdist's order by
    number of tests (--loadscope-reorder, on by default, is turned off here)."""
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class NemoTogether(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return unit_of(nodeid)

    config.option.loadscopereorder = False
    return NemoTogether(config, log)


@pytest.fixture(scope="session")
def silero():
    return SileroVAD()


@pytest.fixture(scope="session")
def vad():
    """The default detector (batched backend, guarded), without the on-disk cache."""
    return SpeechDetector(backend="batched", device="cpu", cache=False)


@pytest.fixture(scope="session")
def calibrated():
    """The batched backend calibrated on this machine, once per session, in the session's cache root
    (on every core this process may use, at 1 thread and at the cores free now), so tests that copy it into a new
    cache root do not calibrate again. The most threads first: the corpus' reference pass, the dear half every
    thread count shares, then runs a model per core while the other workers' first tests wait for it (it ran on one
    core, 13 s)."""
    from fdbu.common.device import allowed_cores, free_cores

    for threads in sorted({allowed_cores(), 1, free_cores()}, reverse=True):
        SpeechDetector(backend="batched", device="cpu", cache=False, threads=threads).calibration()


@pytest.fixture(scope="session")
def boot():
    return Bootstrap(2000, 0)


def wilson_closed_form(k, n):
    """The Wilson interval written the other textbook way, for cross-checking."""
    z2 = Z * Z
    root = Z * math.sqrt(z2 + 4 * k * (n - k) / n)
    return [(2 * k + z2 - root) / (2 * (n + z2)), (2 * k + z2 + root) / (2 * (n + z2))]


def check_share(m, k, n, selected, unknown, better):
    """A share record: value, Wilson interval (exact 0/1 ends), count and selected bounds."""
    assert m["kind"] == "share" and m["better"] == better
    assert (m["count"], m["n"]) == (k, n)
    assert m["value"] == k / n
    lo, hi = wilson_closed_form(k, n)
    assert m["interval"][0] == (0.0 if k == 0 else pytest.approx(lo, abs=1e-12))
    assert m["interval"][1] == (1.0 if k == n else pytest.approx(hi, abs=1e-12))
    assert m["selected_bounds"] == [k / selected, (k + unknown) / selected]


def percentile_interval(values):
    """Q(0.025) and Q(0.975) of bootstrap values by the ceil(qN)-th smallest rule."""
    v = sorted(values)
    return [v[math.ceil(len(v) / 40) - 1], v[math.ceil(len(v) * 39 / 40) - 1]]


@pytest.fixture(scope="session")
def synth_tree(tmp_path_factory):
    """A small synthetic tree of every system behaviour, shared read-only by several tests."""
    from fdbu.synth import synthesize

    return synthesize(tmp_path_factory.mktemp("synth") / "tree", n=12, seed=3, system="mixed", ineligible=0.1)


@pytest.fixture(scope="session")
def built(tmp_path_factory):
    """kind -> (checkpoint, loaded model), each built once per session when first asked for."""
    cache = {}

    def get(kind):
        if kind not in cache:
            import tiny_asr
            from fdbu.asr.nemo_model import ParakeetASR

            environ = dict(os.environ)  # NeMo's loading sets the offline switches and TOKENIZERS_PARALLELISM:
            path = tiny_asr.build(tmp_path_factory.mktemp(f"tiny-{kind}"), kind=kind)  # not the tests' after it
            cache[kind] = (path, ParakeetASR(path, device="cpu"))
            os.environ.clear()
            os.environ.update(environ)
        return cache[kind]

    return get
