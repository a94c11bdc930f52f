"""ARCHITECTURE.md held to the code: every module it maps, every name it gives, every test its recipes cite and
the layer ratchet it states are checked here, so the page cannot drift from the package."""
import importlib
import json
import re
from pathlib import Path

import pytest

import fdbu

ROOT = Path(fdbu.__file__).parent
REPO = ROOT.parent
PAGE = REPO / "ARCHITECTURE.md"


def text() -> str:
    return PAGE.read_text()


def test_every_module_is_on_the_map():
    """Each module of fdbu/ and kernels/ is named on the page (its path or, in a folder's row, its file name)."""
    page = text()
    missing = [str(p.relative_to(REPO)) for p in [*ROOT.rglob("*.py"), *(REPO / "kernels").glob("*.py")]
               if p.name != "__init__.py" and p.name not in page and str(p.relative_to(REPO)) not in page]
    assert missing == []


def _resolve(dotted: str):
    """`module.attr` (a module of fdbu, with or without the `fdbu.` prefix) to the object it names."""
    parts = dotted.removeprefix("fdbu.").split(".")
    for k in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module("fdbu." + ".".join(parts[:k]))
        except ImportError:
            continue
        for attr in parts[k:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(dotted)


def test_every_dotted_name_it_gives_exists():
    """A backticked `module.name` (fdbu's) names a real module and attribute: a renamed function fails here."""
    import fdbu.cli.main  # noqa: F401  (the consoles attach)
    import fdbu.config.store  # noqa: F401

    modules = {p.stem for p in ROOT.rglob("*.py")} | {p.name for p in ROOT.iterdir() if p.is_dir()}
    names = set()
    for code in re.findall(r"`([^`\s]+)`", text()):
        code = re.sub(r"\(.*$", "", code)
        if re.fullmatch(r"[A-Za-z_][\w]*(\.[A-Za-z_]\w*)+", code) and code.removeprefix("fdbu.").split(".")[0] in \
                modules and not code.endswith((".py", ".json", ".jsonl", ".wav", ".yaml", ".md", ".csv", ".tex")):
            names.add(code)
    assert len(names) > 25, sorted(names)
    unresolved = []
    for name in sorted(names):
        try:
            _resolve(name)
        except (ImportError, AttributeError):
            unresolved.append(name)
    assert unresolved == []


def test_the_tests_it_cites_exist_and_the_ratchet_is_the_tests():
    page = text()
    for cited in set(re.findall(r"`(tests/[\w/.]+\.py)`", page)):
        assert (REPO / cited).is_file(), cited
    stated = int(re.search(r"longest\s+chain is at most (\d+) modules", page).group(1))
    layers = (REPO / "tests" / "test_layers.py").read_text()
    assert stated == int(re.search(r"len\(longest_chain\(graph\)\) <= (\d+)", layers).group(1))


def test_the_families_and_commands_it_names_are_the_registries():
    from fdbu import registry, tasks

    page = text()
    assert "v1.0, v1.5 and v2 are registered this way" in page and [f.name for f in tasks.RELEASES] == ["v1.0", "v1.5",
                                                                                                    "v2"]
    assert "three parts" in page and {"config", "run", "show"} <= set(vars(registry.Command("x", "", "")))


def test_the_suite_s_schedule_names_test_files_that_exist_and_puts_nemo_s_on_one_worker():
    """conftest.LONGEST_FIRST (the order `make test` hands files to its workers) and NEMO_FILES (the files one worker
    takes together) name files of tests/, each once: a renamed file would silently fall back to the end, or to a
    worker of its own; NeMo's files are one unit of work, every other file one of its own."""
    from conftest import LONGEST_FIRST, NEMO_FILES, unit_of

    here = {p.name for p in (REPO / "tests").glob("test_*.py")}
    assert len(set(LONGEST_FIRST)) == len(LONGEST_FIRST)
    assert set(LONGEST_FIRST) - here == set() and set(NEMO_FILES) - here == set()
    units = {unit_of(f"tests/{name}::test_x") for name in here}
    assert len(units) == len(here) - len(NEMO_FILES) + 1
    assert len({unit_of(f"tests/{name}::test_x[a]") for name in NEMO_FILES}) == 1


def test_the_suite_s_processes_have_openblas_s_idle_threads_sleep_at_once(request):
    """conftest sets OPENBLAS_THREAD_TIMEOUT before numpy loads OpenBLAS (which reads it once): numpy was not loaded
    before conftest; a worker has it from its start (its controller set it); and a process it starts has it too, so
    after a call on two threads OpenBLAS's other thread sleeps instead of spinning for about 0.1 s on a core another
    worker needs."""
    import os
    import subprocess
    import sys

    # the conftest pytest loaded (`import conftest` here would run it again, numpy long loaded)
    loaded = [p for p in request.config.pluginmanager.get_plugins()
              if str(getattr(p, "__file__", "")).endswith(str(Path("tests") / "conftest.py"))]
    assert os.environ["OPENBLAS_THREAD_TIMEOUT"] == "4"
    assert len(loaded) == 1 and loaded[0].NUMPY_BEFORE_CONFTEST is False
    if os.environ.get("PYTEST_XDIST_WORKER"):
        at_start = Path("/proc/self/environ").read_bytes().split(b"\0")
        assert b"OPENBLAS_THREAD_TIMEOUT=4" in at_start
    spin = ("import json, resource, time, numpy as np\n"
            "from threadpoolctl import threadpool_info, threadpool_limits\n"
            "a = np.ones((300, 300), np.float32)\n"
            "with threadpool_limits(2, user_api='blas'):\n"
            "    blas = [b for b in threadpool_info() if b['user_api'] == 'blas' and 'numpy' in b['filepath']]\n"
            "    a @ a\n"
            "    a @ a\n"
            "    cpu = resource.getrusage(resource.RUSAGE_SELF)\n"
            "    time.sleep(0.3)\n"
            "    after = resource.getrusage(resource.RUSAGE_SELF)\n"
            "print(json.dumps([after.ru_utime + after.ru_stime - cpu.ru_utime - cpu.ru_stime, blas]))")
    used, blas = json.loads(subprocess.run([sys.executable, "-c", spin], capture_output=True, text=True,
                                           check=True).stdout)
    if not (blas and blas[0]["internal_api"] == "openblas" and blas[0]["threading_layer"] == "pthreads"
            and blas[0]["num_threads"] == 2):
        pytest.skip(f"numpy's BLAS here is not OpenBLAS on two pthreads: {blas}")
    # the CPU of 0.3 s asleep after the product has returned, so no product's own cost is in it, on any CPU: with the
    # setting the idle thread waits 2^4 cycles, then sleeps (about 0.001 s measured); without it, it spins 2^28
    # cycles of the time-stamp counter, at least 54 ms at any counter rate up to 5 GHz (0.10 s measured)
    assert used < 0.02


def test_the_folders_drawn_are_the_package_and_the_root_holds_no_flat_room():
    """The page's drawing of `fdbu/` is `ls fdbu/`: every folder (a layer, the releases, the commands) and root
    module is drawn, nothing drawn is missing, and the root holds only the package's face (the API, the CLI's entry,
    the errors, the version) and the registries with their contract: a new module goes into its layer's folder."""
    page = text()
    drawing = page[page.index("```\nfdbu/\n"):]
    drawing = drawing[4:drawing.index("```", 4)]
    drawn = {line.split()[0].rstrip("/") for line in drawing.splitlines()[1:] if line.startswith("  ")}
    folders = {p.name for p in ROOT.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
    modules = {p.name for p in ROOT.glob("*.py")} - {"__init__.py", "__main__.py", "errors.py", "version.py"}
    assert drawn == folders | modules
    assert modules == {"api.py", "tasks.py", "family.py", "registry.py"}
    assert len(folders) >= 15
