"""A command killed in the middle of its work: the next run of the same command completes, and
gives the bytes of a run that was never killed. The kill is injected at a named step
(`FDBU_KILL_AT`, fdbu.faults), not timed."""
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from builders import fdbu_main, untranscribed

FDBU = str(Path(sys.executable).parent / "fdbu")


def run(*args, kill_at=None):
    """The killed run in a process of its own; the others in this one (fast: nothing to load again)."""
    if kill_at is None:
        return fdbu_main(*args)
    env = {**os.environ, "FDBU_KILL_AT": kill_at}
    return subprocess.run([FDBU, *args], capture_output=True, text=True, env=env, timeout=600)


def contents(folder: Path) -> dict:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("point", ["score:staged:unified.json", "score:moved:0"])
def test_score(synth_tree, tmp_path, point):
    clean, tree = tmp_path / "clean", tmp_path / "tree"
    shutil.copytree(synth_tree, clean)
    shutil.copytree(synth_tree, tree)
    assert run("score", f"tree={clean}", "progress=false").returncode == 0
    assert run("score", f"tree={tree}", "progress=false", kill_at=point).returncode == -9
    if point == "score:moved:0":  # half moved in: a reader refuses the tree until a score finishes the move
        read = run("compare", f"trees=[{tree},{tree}]", f"out={tmp_path / 'compared'}")
        assert read.returncode == 2 and "stopped while moving its outputs in" in read.stderr, read.stderr
    again = run("score", f"tree={tree}", "progress=false")
    assert again.returncode == 0, again.stderr
    assert contents(tree) == contents(clean)  # no staging folder left either


def test_sweep(synth_tree, tmp_path):
    args = ["sweep.thresholds=[0.4,0.5]", "sweep.min_silence_ms=[100]", "progress=false", "plot=true"]
    assert run("sweep", f"tree={synth_tree}", f"out={tmp_path / 'clean'}", *args).returncode == 0
    assert run("sweep", f"tree={synth_tree}", f"out={tmp_path / 'out'}", *args, kill_at="sweep:moved:1").returncode == -9
    again = run("sweep", f"tree={synth_tree}", f"out={tmp_path / 'out'}", *args)
    assert again.returncode == 0, again.stderr
    assert contents(tmp_path / "out") == contents(tmp_path / "clean")


def test_export(synth_tree, tmp_path):
    from builders import release_dataset

    data = release_dataset(synth_tree, tmp_path / "data")
    assert run("export", f"dataset={data}", f"out={tmp_path / 'clean'}", "progress=false").returncode == 0
    killed = run("export", f"dataset={data}", f"out={tmp_path / 'tree'}", "progress=false", kill_at="export:sample:5")
    assert killed.returncode == -9 and not (tmp_path / "tree").exists()
    assert len(list(tmp_path.glob(".tree.*"))) == 1  # what the killed run left
    again = run("export", f"dataset={data}", f"out={tmp_path / 'tree'}", "progress=false")
    assert again.returncode == 0 and "removed .tree." in again.stderr, again.stderr
    assert contents(tmp_path / "tree") == contents(tmp_path / "clean") and not list(tmp_path.glob(".tree.*"))


def test_asr(synth_tree, tmp_path, built):
    pytest.importorskip("nemo.collections.asr", reason="the asr extra is not installed")
    checkpoint = built("rnnt")[0]
    trees = {name: untranscribed(synth_tree, tmp_path / name) for name in ("clean", "tree")}
    args = [f"asr.checkpoint={checkpoint}", "asr.cache=false", "asr.batch_size=4", "progress=false", "device=cpu"]
    assert run("asr", f"tree={trees['clean']}", *args).returncode == 0
    assert run("asr", f"tree={trees['tree']}", *args, kill_at="asr:batch:1").returncode == -9
    assert not (trees["tree"] / "asr.json").exists()
    again = run("asr", f"tree={trees['tree']}", *args)
    assert again.returncode == 0, again.stderr
    assert "kept" in again.stdout and " 0 kept" not in again.stdout
    assert contents(trees["tree"]) == contents(trees["clean"])
