"""A command killed in the middle of its work: the next run of the same command completes, and
gives the bytes of a run that was never killed. The kill is injected at a named step
(`FDBU_KILL_AT`, fdbu.common.faults), not timed."""
import hashlib
import json
import shutil
from pathlib import Path

import pytest

from builders import fdbu_forked, fdbu_main, untranscribed, needs_nemo


def run(*args, kill_at=None):
    """The killed run in a forked copy of this process (SIGKILL ends that copy: nothing of it runs after, as in a
    process of its own, and nothing is imported again); the others in this one."""
    if kill_at is None:
        return fdbu_main(*args)
    return fdbu_forked(*args, env={"FDBU_KILL_AT": kill_at})


def contents(folder: Path) -> dict:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def clean(synth_tree, tmp_path_factory, built):
    """command -> the contents a run never stopped leaves (each computed once for the module, when first asked for:
    the stopped runs of every kill point end with the same bytes)."""
    made: dict = {}

    def get(command: str) -> dict:
        if command not in made:
            folder = tmp_path_factory.mktemp(f"clean-{command}") / "tree"
            if command == "score":
                shutil.copytree(synth_tree, folder)
                assert run("score", f"tree={folder}", "progress=false").returncode == 0
            else:  # asr
                untranscribed(synth_tree, folder)
                assert run("asr", f"tree={folder}", *_asr_args(built)).returncode == 0
            made[command] = contents(folder)
        return made[command]
    return get


def _asr_args(built) -> list[str]:
    return [f"asr.checkpoint={built('rnnt')[0]}", "asr.cache=false", "asr.batch_size=4", "progress=false",
            "device=cpu"]


@pytest.mark.slow
@pytest.mark.parametrize("point", ["score:staged:unified.json", "score:moved:0"])
def test_score(synth_tree, tmp_path, point, clean):
    tree = tmp_path / "tree"
    shutil.copytree(synth_tree, tree)
    assert run("score", f"tree={tree}", "progress=false", kill_at=point).returncode == -9
    if point == "score:moved:0":  # half moved in: a reader refuses the tree until a score finishes the move
        read = run("compare", f"trees=[{tree},{tree}]", f"out={tmp_path / 'compared'}")
        assert read.returncode == 2 and "stopped while moving its outputs in" in read.stderr, read.stderr
    again = run("score", f"tree={tree}", "progress=false")
    assert again.returncode == 0, again.stderr
    assert contents(tree) == clean("score")  # no staging folder left either


@pytest.mark.slow
def test_sweep(synth_tree, tmp_path):
    args = ["sweep.threshold=[0.4,0.5]", "sweep.min_silence_duration_ms=[100]", "progress=false", "plot=true"]
    assert run("sweep", f"tree={synth_tree}", f"out={tmp_path / 'clean'}", *args).returncode == 0
    assert run("sweep", f"tree={synth_tree}", f"out={tmp_path / 'out'}", *args, kill_at="sweep:moved:1").returncode == -9
    again = run("sweep", f"tree={synth_tree}", f"out={tmp_path / 'out'}", *args)
    assert again.returncode == 0, again.stderr
    assert contents(tmp_path / "out") == contents(tmp_path / "clean")


@pytest.mark.slow
@pytest.mark.parametrize("point", ["export:sample:5", "export:complete"])
def test_export(synth_tree, tmp_path, point):
    """export's tree is built beside out= and renamed into place: stopped midway or once whole (before the rename),
    nothing is at out=, and the next run removes the leftover and writes the same tree."""
    from builders import release_dataset

    data = release_dataset(synth_tree, tmp_path / "data")
    assert run("export", f"dataset={data}", f"out={tmp_path / 'clean'}", "progress=false").returncode == 0
    killed = run("export", f"dataset={data}", f"out={tmp_path / 'tree'}", "progress=false", kill_at=point)
    assert killed.returncode == -9 and not (tmp_path / "tree").exists()
    assert len(list(tmp_path.glob(".tree.*"))) == 1  # what the killed run left
    again = run("export", f"dataset={data}", f"out={tmp_path / 'tree'}", "progress=false")
    assert again.returncode == 0 and "removed .tree." in again.stderr, again.stderr
    assert contents(tmp_path / "tree") == contents(tmp_path / "clean") and not list(tmp_path.glob(".tree.*"))


@pytest.mark.slow
@pytest.mark.parametrize("point", ["asr:batch:1", "asr:written"])
def test_asr(synth_tree, tmp_path, built, point, clean):
    """Stopped in the middle (some transcripts written) or once complete (asr.json written, its journal not yet
    removed): the next run keeps what was written (or, complete, only removes the journal) and ends with a clean
    run's bytes, the journal gone."""
    needs_nemo()
    tree = untranscribed(synth_tree, tmp_path / "tree")
    args = _asr_args(built)
    assert run("asr", f"tree={tree}", *args, kill_at=point).returncode == -9
    assert (tree / "asr.json").exists() == (point == "asr:written")
    again = run("asr", f"tree={tree}", *args)
    assert again.returncode == 0, again.stderr
    if point == "asr:written":  # finished: nothing transcribed, the journal removed
        assert "a stopped run had left all" in again.stdout, again.stdout
    else:
        assert "kept" in again.stdout and " 0 kept" not in again.stdout
    assert contents(tree) == clean("asr")


def _scored(synth_tree: Path, folder: Path) -> tuple[Path, Path]:
    """Two scored copies of the tree (system A, and B the same tree: compare and report need two)."""
    pair = []
    for name in ("A", "B"):
        shutil.copytree(synth_tree, folder / name)
        assert fdbu_main("score", f"tree={folder / name}", "progress=false").returncode == 0
        pair.append(folder / name)
    return pair[0], pair[1]


def _runs(command: str, synth_tree: Path, work: Path, pair: tuple[Path, Path]) -> tuple[list[str], Path]:
    """The command line of `command` (its registry entry's `example`) writing into a fresh folder under `work`, and
    that folder: {out} where the example names one, else a copy of the synthetic tree ({tree}) it writes into;
    {a} and {b} the scored `pair`."""
    from fdbu.registry import COMMANDS

    example = COMMANDS[command].example
    tree, out = work / "tree", work / "out"
    if any("{tree}" in arg for arg in example):
        shutil.copytree(synth_tree, tree)
    args = [arg.format(tree=tree, out=out, a=pair[0], b=pair[1]) for arg in example]
    return args, out if any("{out}" in arg for arg in example) else tree


@pytest.mark.slow
def test_every_command_stopped_after_its_commit_is_finished_by_the_next_run(synth_tree, tmp_path):
    """Each command that writes through fdbu.common.outputs (the registry says which), killed after COMMIT with some
    files moved in: the next run of it finishes the move and ends with a clean run's bytes (report's could not
    be recovered once: the writer's own list of names lacked it)."""
    from fdbu.registry import COMMANDS

    writers = [c.name for c in COMMANDS.values() if c.writes]  # every writer the registry holds, each by its example
    assert {"score", "report"} <= set(writers)
    pair = _scored(synth_tree, tmp_path)  # read only: scored once for compare and report
    for command in writers:
        args, clean = _runs(command, synth_tree, tmp_path / command / "clean", pair)
        assert run(command, *args).returncode == 0
        args, folder = _runs(command, synth_tree, tmp_path / command / "stopped", pair)
        killed = run(command, *args, kill_at=f"{command}:moved:0")
        assert killed.returncode == -9, (command, killed.stderr)
        assert list(folder.glob(".fdbu-staging-*/COMMIT")), command  # stopped after its commit
        again = run(command, *args)
        assert again.returncode == 0, (command, again.stderr)
        assert "finished moving in" in again.stdout, (command, again.stdout)
        assert contents(folder) == contents(clean), command


class _Checkpoint:
    """What the check of a stopped asr run reads of the model: its checkpoint's hash and device (no NeMo)."""

    def __init__(self, sha256: str):
        self.checkpoint_sha256, self.device = sha256, "cpu"


def test_asr_finishes_only_a_stopped_run_that_left_everything_for_this_request(synth_tree, tmp_path):
    """A journal beside asr.json (a run stopped after writing it): finished when the journal covers every
    transcript under this run's keys and each output.json is as recorded; otherwise the tree is a transcribed
    tree as any other (asr.json there: refused without asr.resume), the journal kept."""
    from fdbu.asr import stage
    from fdbu.errors import FdbuError

    tree = tmp_path / "tree"
    shutil.copytree(synth_tree, tree)
    jobs = stage._jobs(tree)
    ours = "a" * 64
    (tree / stage.Journal.NAME).write_text("".join(
        json.dumps({"sample_id": j.sample_id, "key": stage.cache_key(j, ours, "cpu"),
                    "sha256": hashlib.sha256((j.folder / "output.json").read_bytes()).hexdigest()}) + "\n"
        for j in jobs))
    receipt = (tree / "asr.json").read_bytes()
    with pytest.raises(FdbuError, match="already has asr.json"):  # another checkpoint asks
        stage.run(tree, lambda: _Checkpoint("b" * 64))
    edited = jobs[0].folder / "output.json"
    original = edited.read_bytes()
    edited.write_bytes(original + b" ")
    with pytest.raises(FdbuError, match="already has asr.json"):  # a transcript changed since
        stage.run(tree, lambda: _Checkpoint(ours))
    edited.write_bytes(original)
    assert (tree / stage.Journal.NAME).exists()
    path, counts = stage.run(tree, lambda: _Checkpoint(ours))
    assert counts["completed"] == counts["kept"] == len(jobs) and counts["transcribed"] == 0
    assert not (tree / stage.Journal.NAME).exists() and path.read_bytes() == receipt
