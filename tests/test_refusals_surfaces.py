"""The one-line-refusal promise on the surfaces added later (issue 25): compare's inputs, staged-output
recovery, config extremes, FIFOs, the Python API, Ctrl-C at start-up. Each root cause is one test with
its reproduction: one line on stderr (`fdbu: error: ...`), exit status 2 (130 for Ctrl-C), no
traceback, nothing outside fdbu's outputs changed; plus a fuzz test of what compare reads.
"""
import hashlib
import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from builders import fdbu_main
from fdbu.errors import FdbuError
from test_refusals import FDBU, ROOT, _mutate, fdbu, refused, snapshot, tmp_path, tree  # noqa: F401 (fixtures)

@pytest.fixture(scope="module")
def scored_pair(tmp_path_factory, vad, boot):
    """A and B: scored synthetic trees of n=2 (every scored subset), shared read-only."""
    from fdbu.scoring.pipeline import score_path
    from fdbu.scoring.unified import write
    from fdbu.synth import synthesize

    root = tmp_path_factory.mktemp("scored")
    out = []
    for name, system in (("A", "mixed"), ("B", "prompt")):
        t = synthesize(root / name, n=2, seed=1, system=system, ineligible=0.0, progress=False)
        write(score_path(t, vad, boot), t)
        out.append(t)
    return tuple(out)


def copy(src: Path, dest: Path) -> Path:
    shutil.copytree(src, dest)
    return dest


# 2. compare reads unified.json and unified-samples.jsonl as strictly as a tree is read
def _edit_unified(tree: Path, edit) -> None:
    doc = json.loads((tree / "unified.json").read_text())
    edit(doc)
    (tree / "unified.json").write_text(json.dumps(doc))


def _edit_rows(tree: Path, edit, keep_hash: bool = True) -> None:
    """Change the rows; with `keep_hash`, unified.json records the new rows' SHA-256, so only their
    content is wrong."""
    lines = (tree / "unified-samples.jsonl").read_text().splitlines()
    edit(lines)
    data = ("\n".join(lines) + "\n").encode()
    (tree / "unified-samples.jsonl").write_bytes(data)
    if keep_hash:
        _edit_unified(tree, lambda d: d.__setitem__("samples_sha256", hashlib.sha256(data).hexdigest()))


def _edit_row(tree: Path, k: int, **changes) -> None:
    def edit(lines):
        lines[k] = json.dumps({**json.loads(lines[k]), **changes})
    _edit_rows(tree, edit)


@pytest.mark.parametrize("edit,fragment", [
    (lambda d: d["subsets"].__setitem__("candor_turn_taking", 5), "subsets.candor_turn_taking is not an object"),
    (lambda d: d["subsets"]["candor_turn_taking"].__setitem__("coverage", 10**400), "coverage is an integer of"),
    (lambda d: d["subsets"]["candor_turn_taking"].__setitem__("coverage", [1]), "coverage is [1], not a number"),
    (lambda d: d["subsets"]["candor_turn_taking"]["metrics"]["early_start_rate"].__setitem__("interval", "x"),
     "early_start_rate.interval is 'x'"),
    (lambda d: d["bootstrap"].__setitem__("seed", 10**30), "bootstrap.seed is an integer of 31 digits"),
    (lambda d: d["share_interval"].__setitem__("z", float("nan")), "share_interval.z is nan;"),
])
@pytest.mark.slow
def test_compare_refuses_a_unified_json_fdbu_did_not_write(scored_pair, tmp_path, edit, fragment):
    a, b = scored_pair
    b = copy(b, tmp_path / "B")
    _edit_unified(b, edit)
    before = snapshot(a, b)
    refused(fdbu_main("compare", f"trees=[{a},{b}]", f"out={tmp_path / 'out'}"), f"{b}: unified.json:", fragment)
    assert snapshot(a, b) == before and not (tmp_path / "out").exists()


@pytest.mark.parametrize("line,changes,fragment", [
    (4, {"T_s": 1e300}, "T_s is 1e+300, not a number of seconds"),
    (4, {"latency_s": "1"}, "latency_s is '1'"),
    (6, {"segments": [[1, 10**400]]}, "segments is"),
    (6, {"restarts": -1}, "restarts is -1, not a whole number"),
    (6, {"outcome": "maybe"}, "outcome is 'maybe', not one of"),
    (0, {"eligible": 1}, "eligible is 1, not true or false"),
    (0, {"subset": "candor_turn_taking"}, "is not 'candor_turn_taking/<id>'"),
    (0, {"pause_intrusion": "flip"}, "its rows give"),  # the same types, another run's value
])
def test_compare_refuses_rows_fdbu_did_not_write(scored_pair, tmp_path, line, changes, fragment):
    a, b = scored_pair
    b = copy(b, tmp_path / "B")
    if changes == {"pause_intrusion": "flip"}:
        row = json.loads((b / "unified-samples.jsonl").read_text().splitlines()[line])
        changes = {"pause_intrusion": not row["pause_intrusion"]}
    _edit_row(b, line, **changes)
    before = snapshot(a, b)
    refused(fdbu_main("compare", f"trees=[{a},{b}]"), f"{b}: unified-samples.jsonl:", fragment)
    assert snapshot(a, b) == before


def test_compare_pairs_the_two_files_by_hash(scored_pair, tmp_path):
    a, b = scored_pair
    b = copy(b, tmp_path / "B")
    _edit_rows(b, lambda lines: lines.reverse(), keep_hash=False)  # every row intact, the file another one
    refused(fdbu_main("compare", f"trees=[{a},{b}]"), f"{b}: unified-samples.jsonl: has SHA-256",
            "samples_sha256", "not from one run")


# 3. a manifest compare cannot read is one line (run as another user: root reads anything)
@pytest.mark.slow
@pytest.mark.skipif(not ROOT, reason="runs fdbu as another user to meet a permission error")
def test_compare_names_an_unreadable_manifest(scored_pair, tmp_path):
    a, b = (copy(t, tmp_path / t.name) for t in scored_pair)  # where nobody may read them
    (b / "manifest.json").chmod(0)
    before = snapshot(a, b)
    refused(fdbu("compare", f"trees=[{a},{b}]", unprivileged=True), f"{b}: manifest.json: cannot be read",
            "Permission denied")
    assert snapshot(a, b) == before


# 1. a FIFO (or any non-regular file) where a file is expected is refused by name, before it is opened
@pytest.mark.parametrize("file", ["synthetic_user_interruption/1/output.wav", "candor_turn_taking/1/output.json",
                                  "manifest.json"])
@pytest.mark.slow
def test_a_fifo_is_refused_not_read(tree, file):
    path = tree / file
    path.unlink()
    os.mkfifo(path)
    before = snapshot(tree)
    out = subprocess.run([FDBU, "score", f"tree={tree}", "progress=false"], capture_output=True, text=True,
                         timeout=120)  # before the fix it never returned
    refused(out, file.rsplit("/", 1)[-1], "is a FIFO (named pipe), not a regular file")
    assert snapshot(tree) == before


def test_compare_refuses_a_fifo_in_place_of_its_rows(scored_pair, tmp_path):
    a, b = scored_pair
    b = copy(b, tmp_path / "B")
    (b / "unified-samples.jsonl").unlink()
    os.mkfifo(b / "unified-samples.jsonl")
    refused(fdbu_main("compare", f"trees=[{a},{b}]"), "unified-samples.jsonl: is a FIFO")


# the fuzz test: whatever unified.json and unified-samples.jsonl hold, compare raises FdbuError or nothing
ODD = st.one_of(st.none(), st.booleans(), st.integers(0, 3), st.floats(0, 1), st.integers(-10**30, 10**30),
                st.sampled_from([10**400, -1, 2**63, 2**53]),
                st.floats(allow_nan=True, allow_infinity=True), st.sampled_from(["not reached", "", "response"]),
                st.text(max_size=4))
VALUES = st.recursive(ODD, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                   st.dictionaries(st.text(max_size=3), inner, max_size=3)),
                      max_leaves=6)


@settings(max_examples=250, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.sampled_from(["unified.json", "unified-samples.jsonl"]), st.lists(st.integers(0, 40), min_size=1,
                                                                            max_size=6), VALUES, st.booleans(),
       st.booleans())
@pytest.mark.slow
def test_compare_raises_only_fdbu_errors(scored_pair, tmp_path, file, path, value, keep_hash, against_itself):
    """Against itself, the mutated tree shares its signature, so a mutation load accepts reaches compare."""
    from fdbu.comparison.pairwise import compare
    from fdbu.comparison.files import files, leaderboard
    from fdbu.comparison.systems import load

    a, src = scored_pair
    b = tmp_path / "b"
    shutil.rmtree(b, ignore_errors=True)
    shutil.copytree(src, b)
    if file == "unified.json":
        _edit_unified(b, lambda d: _mutate(d, path, value))
    else:
        def edit(lines):
            k = path[0] % len(lines)
            lines[k] = json.dumps(_mutate(json.loads(lines[k]), path[1:], value), allow_nan=True)
        _edit_rows(b, edit, keep_hash)
    try:
        systems = [load(b if against_itself else a, "a"), load(b, "b")]
        result = compare(systems, allow_different_samples=True)
        leaderboard(result)
        files(result, systems, plot=False)
    except FdbuError:
        pass



# 4. recovery trusts no COMMIT file: an empty one (a power loss before it was on disk) or one naming a file
# outside the outputs is refused, nothing moved, the message naming the folder to delete
def _stopped_run(tree: Path, commit: bytes) -> Path:
    staging = tree / ".fdbu-staging-score-x1y2z3"
    staging.mkdir()
    (staging / "LOCK").write_bytes(b"")
    (staging / "unified.json").write_text("{}")
    (staging / "COMMIT").write_bytes(commit)
    return staging


@pytest.mark.parametrize("commit", [b"", b'["../notes.txt"]', b'["notes.txt"]', b'["unified.json", "x/../y"]',
                                    b'{"a": 1}', b"[" * 100000])
def test_a_commit_fdbu_cannot_trust_is_refused_touching_nothing(scored_pair, tmp_path, commit):
    tree = copy(scored_pair[0], tmp_path / "A")
    (tmp_path / "notes.txt").write_text("the user's notes")
    (tree / "notes.txt").write_text("the user's notes in the tree")
    staging = _stopped_run(tree, commit)
    before = snapshot(tmp_path)
    refused(fdbu_main("score", f"tree={tree}", "progress=false"), f"{staging / 'COMMIT'}",
            f"nothing was moved: delete the folder {staging}")
    assert snapshot(tmp_path) == before


def test_the_commit_is_on_disk_before_it_counts(tmp_path, monkeypatch):
    """COMMIT is fsynced, then renamed, then its folder fsynced, before the first output moves."""
    from fdbu.common import outputs

    calls = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(os, "fsync", lambda fd: calls.append(("fsync", os.readlink(f"/proc/self/fd/{fd}")))
                        or real_fsync(fd))
    monkeypatch.setattr(os, "replace", lambda a, b: calls.append(("replace", str(b))) or real_replace(a, b))
    outputs.Outputs(tmp_path, "score", ["unified.json"], head="unified.json").commit({"unified.json": b"{}"})
    staging = next(Path(p) for kind, p in calls if kind == "replace" and p.endswith("/COMMIT")).parent
    want = [("fsync", str(staging / "COMMIT.tmp")), ("replace", str(staging / "COMMIT")), ("fsync", str(staging)),
            ("replace", str(tmp_path / "unified.json"))]
    assert calls[-4:] == want, calls


# 9. Ctrl-C: one line and exit 130 at any moment of the start-up; during the move, what the next run does
def _started_at(args, delay, env=None):
    proc = subprocess.Popen([FDBU, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **(env or {})},
                            # a shell's background job inherits SIGINT ignored; Ctrl-C reaches a foreground one
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    if delay is not None:
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=300)
    return proc.returncode, err


def _interpreter_start() -> float:
    """How long this machine takes to start Python itself (site, .pth files) before any fdbu code runs:
    a Ctrl-C in that window is the interpreter's, which no program can catch."""
    runs = []
    for _ in range(3):
        t = time.perf_counter()
        subprocess.run([os.sys.executable, "-c", "pass"], check=True)
        runs.append(time.perf_counter() - t)
    return max(runs)


@pytest.mark.slow
def test_ctrl_c_at_any_moment_of_the_start_up(scored_pair, tmp_path):
    """Interrupts spread over the first 40% of the run after the interpreter's own start (the fastest of three runs
    measured here, uninterrupted, once the cache is warm: a run that loads no torch is over in about a second)."""
    start = 2 * _interpreter_start()
    args = ["score", f"tree={scored_pair[0]}", f"out={tmp_path / 'whole'}"]
    assert _started_at(args, None)[0] == 0  # fills the probability cache
    runs = []
    for _ in range(3):
        t0 = time.perf_counter()
        assert _started_at(args, None)[0] == 0
        runs.append(time.perf_counter() - t0)
    whole = min(runs)
    for share in (0.05, 0.12, 0.2, 0.3, 0.4):
        delay = start + share * max(whole - start, 0.1)
        code, err = _started_at(["score", f"tree={scored_pair[0]}", f"out={tmp_path}"], delay)
        assert code == 130 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, (delay, whole, err)
        assert err.startswith("fdbu: error: interrupted (Ctrl-C)"), err


@pytest.mark.slow
def test_ctrl_c_during_the_move_says_what_the_next_run_does(scored_pair, tmp_path):
    tree = copy(scored_pair[0], tmp_path / "A")
    # vad.threads=1: calibrated by the session (the default, the cores free now, depends on the machine's load)
    code, err = _started_at(["score", f"tree={tree}", "progress=false", "vad.cache=false", "vad.threads=1"], None,
                            env={"FDBU_INTERRUPT_AT": "score:moved:0"})
    assert code == 130 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert "some outputs in" in err and "which the next fdbu score there moves in" in err, err
    assert "nothing half-written" not in err
    again = fdbu_main("score", f"tree={tree}", "progress=false")
    assert again.returncode == 0 and "finished moving in" in again.stdout, again.stderr


# 5, 6. config extremes: NaN, infinities and integers no float holds, refused before any work (CLI and API)
BIG = "1" + "0" * 400


@pytest.mark.parametrize("command,args,fragment", [
    ("sweep", ["sweep.neg_threshold_offset=[nan]"], "sweep.neg_threshold_offset=[... nan ...]: a number from 0 to 1"),
    ("sweep", ["sweep.min_silence_duration_ms=[inf]"], "sweep.min_silence_duration_ms=[... inf ...]: milliseconds from 0 to"),
    ("sweep", [f"sweep.min_speech_duration_ms=[250,{BIG}]"], "sweep.min_speech_duration_ms=<an integer of 401 digits>"),
    ("score", [f"vad.min_speech_duration_ms={BIG}"], "vad.min_speech_duration_ms=<an integer of 401 digits>"),
    ("score", [f"vad.threshold={BIG}"], "vad.threshold=<an integer of 401 digits>"),
    ("score", ["vad.min_silence_duration_ms=10000000000000000"], "vad.min_silence_duration_ms=10000000000000000: mil"),
    ("score", ["bootstrap.seed=9223372036854775808"], "bootstrap.seed=<an integer of 19 digits>"),
    ("score", ["vad.threshold=nan"], "vad.threshold=nan: a number in (0, 1)"),
    ("sweep", ["sweep.threshold=[0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9]",
               "sweep.min_silence_duration_ms=[" + ",".join(map(str, range(0, 1200, 10))) + "]"],
     "the sweep grid has 1080 points, more than 1000"),
])
def test_config_extremes_are_refused_before_any_work(tree, tmp_path, command, args, fragment):
    before = snapshot(tree)
    refused(fdbu_main(command, f"tree={tree}", f"out={tmp_path / 'out'}", *args), "config:", fragment)
    assert snapshot(tree) == before and not (tmp_path / "out").exists()


def test_the_api_refuses_what_the_cli_refuses(tree):
    import fdbu as api

    for call, fragment in [(lambda: api.sweep(tree, sweep={"neg_threshold_offset": [float("nan")]}),
                            "sweep.neg_threshold_offset=[... nan ...]"),
                           (lambda: api.score(tree, vad={"min_speech_duration_ms": int(BIG)}),
                            "vad.min_speech_duration_ms=<an integer of 401 digits>"),
                           (lambda: api.compare(5), "trees=5: a list of paths"),  # 8. argument types
                           (lambda: api.compare([tree, 5]), "trees=5: a path"),
                           (lambda: api.score(None), "tree is required: fdbu.score(tree=...)"),
                           (lambda: api.score(tree, write="yes"), "write='yes': True or False"),
                           (lambda: api.sweep({"a": 1}), "tree={'a': 1}: a path")]:
        with pytest.raises(FdbuError, match="^config: ") as caught:
            call()
        assert fragment in str(caught.value), (fragment, str(caught.value))


def test_a_sweep_grid_beyond_the_bound_runs_with_allow_large():
    from fdbu.config import keys as config

    grid = {"threshold": [0.5], "min_silence_duration_ms": list(range(1001))}
    with pytest.raises(FdbuError, match="has 1001 points, more than 1000"):
        config.build("sweep", {"tree": "t", "sweep": grid})
    assert len(config.build("sweep", {"tree": "t", "sweep": {**grid, "allow_large": True}}).sweep.points()) == 1001


def test_a_sweep_of_too_many_points_x_files_is_refused_before_any_work(tree, tmp_path, monkeypatch):
    from fdbu.scoring import sweep as sweep_grid

    monkeypatch.setattr(sweep_grid, "MAX_WORK", 5)  # the tree has 1 interruption file: 6 points pass it
    before = snapshot(tree)
    refused(fdbu_main("sweep", f"tree={tree}", f"out={tmp_path / 'out'}", "sweep.threshold=[0.3,0.5,0.7]",
                      "sweep.min_silence_duration_ms=[100,200]"), "config: the sweep is 6 points x 1 files = 6, more than 5",
            "sweep.allow_large=true")
    assert snapshot(tree) == before and not (tmp_path / "out").exists()
    ok = fdbu_main("sweep", f"tree={tree}", f"out={tmp_path / 'out'}", "sweep.threshold=[0.3,0.5,0.7]",
                   "sweep.min_silence_duration_ms=[100,200]", "sweep.allow_large=true", "plot=false", "progress=false")
    assert ok.returncode == 0, ok.stderr


# 7. vad.threads beyond the cores this process may use is capped, and said
def test_vad_threads_is_capped_to_the_allowed_cores(tree):
    from fdbu.common.device import allowed_cores

    out = fdbu_main("score", f"tree={tree}", "vad.threads=1000000000", "progress=false")
    assert out.returncode == 0, out.stderr
    said = [line for line in out.stderr.splitlines() if not line.startswith("fdbu: calibrating")]  # at those cores
    assert said == [f"fdbu: note: vad.threads=1000000000 is more than the {allowed_cores()} cores this "
                    f"process may use; using {allowed_cores()}"]


# Hydra's lexer refuses an unquoted newline or non-ASCII letter: the message says to quote the path
@pytest.mark.parametrize("name", ["caf\u00e9", "a\nb"])
def test_a_path_hydra_cannot_lex_says_to_quote_it(tmp_path, name):
    line = refused(fdbu_main("score", f"tree={tmp_path / name}"), "config: cannot read the override",
                   "quote a value holding spaces, tabs, newlines or non-ASCII letters")
    assert f"\"tree='{tmp_path / name}'\"".replace("\n", "\\n") in line
    (tmp_path / name).mkdir()
    quoted = fdbu_main("score", f"tree='{tmp_path / name}'")
    shown = str(tmp_path / name).replace("\n", "\\n")  # read, and named in one line
    refused(quoted, f"{shown} is an empty folder, not a reference tree")
