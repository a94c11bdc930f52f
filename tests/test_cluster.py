"""The sharded stages through Hydra's launchers on real engines: joblib on this machine, and SLURM
(submitit) on a one-node cluster the tests start (tests/slurm/cluster.py). The assembled outputs
equal a one-process run's, byte for byte."""
import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from builders import fdbu_main, untranscribed
from test_shards import SUB, fresh_cache, ok
from fdbu.synth import synthesize

FDBU = str(Path(sys.executable).parent / "fdbu")
LAUNCHER = pytest.importorskip("hydra_plugins.hydra_submitit_launcher", reason="the cluster extra is not installed")


@pytest.fixture(scope="session")
def slurm(tmp_path_factory):
    """A running one-node SLURM cluster, stopped at the end of the session (skipped if it cannot run)."""
    sys.path.insert(0, str(Path(__file__).parent / "slurm"))
    from cluster import LocalSlurm, Unavailable

    cluster = LocalSlurm(tmp_path_factory.mktemp("slurm"))
    try:
        cluster.start()
    except Unavailable as e:
        pytest.skip(f"no SLURM cluster here: {e}")
    yield cluster
    cluster.stop()


@pytest.fixture(scope="module")
def tree(tmp_path_factory, calibrated):
    return synthesize(tmp_path_factory.mktemp("cluster") / "tree", n={SUB: 6}, seed=31, ineligible=0.0)


def multirun(*args, env=None, cwd=None):
    return subprocess.run([FDBU, *args], capture_output=True, text=True, timeout=600, cwd=cwd,
                          env={**os.environ, **(env or {})})


def assembled_equals_one_process(tree, tmp_path, cache):
    ok(fdbu_main("score", f"tree={tree}", f"out={tmp_path / 'one'}", f"cache_dir={fresh_cache(tmp_path / 'c1')}"))
    printed = ok(fdbu_main("score", f"tree={tree}", f"out={tmp_path / 'many'}", f"cache_dir={cache}")).stdout
    assert " 0 computed" in printed and "from the caches of shards" in printed
    for f in ("unified.json", "unified-samples.jsonl"):
        assert (tmp_path / "many" / f).read_bytes() == (tmp_path / "one" / f).read_bytes()


def test_vad_shards_through_the_joblib_launcher(tree, tmp_path):
    cache = fresh_cache(tmp_path / "cache")
    out = multirun("vad", "-m", f"tree={tree}", "shard=range(0,3)", "shards=3", f"cache_dir={cache}",
                   "hydra/launcher=local", "hydra.launcher.n_jobs=2", "progress=false",
                   f"hydra.sweep.dir={tmp_path / 'multirun'}")
    assert out.returncode == 0, out.stderr
    assembled_equals_one_process(tree, tmp_path, cache)


def test_vad_shards_on_slurm(slurm, tree, tmp_path):
    cache = fresh_cache(tmp_path / "cache")
    out = multirun("vad", "-m", f"tree={tree}", "shard=range(0,2)", "shards=2", f"cache_dir={cache}",
                   "hydra/launcher=slurm_cpu", "hydra.launcher.cpus_per_task=1", "hydra.launcher.mem_gb=2",
                   "hydra.launcher.timeout_min=10", "progress=false", f"hydra.sweep.dir={tmp_path / 'multirun'}",
                   env=slurm.env)
    assert out.returncode == 0, out.stderr
    logs = sorted((tmp_path / "multirun" / ".submitit").rglob("*_log.out"))
    assert len(logs) == 2 and all("shard " in p.read_text() for p in logs)  # each shard reports its files
    assembled_equals_one_process(tree, tmp_path, cache)


def test_asr_shards_on_slurm(slurm, tree, tmp_path, built):
    pytest.importorskip("nemo.collections.asr", reason="the asr extra is not installed")
    checkpoint = built("rnnt")[0]
    trees = {name: untranscribed(tree, tmp_path / name) for name in ("one", "many")}
    args = [f"asr.checkpoint={checkpoint}", "asr.batch_size=4", "device=cpu", "progress=false"]
    ok(fdbu_main("asr", f"tree={trees['one']}", "asr.cache=false", *args))
    out = multirun("asr", "-m", f"tree={trees['many']}", "shard=range(0,2)", "shards=2",
                   f"cache_dir={tmp_path / 'cache'}", "hydra/launcher=slurm_cpu", "hydra.launcher.cpus_per_task=1",
                   "hydra.launcher.mem_gb=4", "hydra.launcher.timeout_min=10",
                   f"hydra.sweep.dir={tmp_path / 'multirun'}", *args, env=slurm.env)
    assert out.returncode == 0, out.stderr
    assert not list(trees["many"].glob("*/*/output.json"))  # shards only fill the cache
    printed = ok(fdbu_main("asr", f"tree={trees['many']}", f"cache_dir={tmp_path / 'cache'}", *args)).stdout
    assert "0 transcribed" in printed and "made by shards 0/2, 1/2" in printed

    def digest(t):
        return {str(p.relative_to(t)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(t.rglob("*.json"))}

    assert digest(trees["many"]) == digest(trees["one"])
