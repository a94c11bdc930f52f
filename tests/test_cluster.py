"""The sharded stages through Hydra's launchers on real engines: joblib on this machine, and SLURM
(submitit) on a one-node cluster the tests start (tests/slurm/cluster.py). The assembled outputs
equal a one-process run's, byte for byte."""
import hashlib
import json
import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from builders import fdbu_main, untranscribed, needs_nemo
from test_shards import SUB, fresh_cache, ok
from fdbu.synth import synthesize

FDBU = str(Path(sys.executable).parent / "fdbu")
LAUNCHER = pytest.importorskip("hydra_plugins.hydra_submitit_launcher", reason="the cluster extra is not installed")


@pytest.fixture(scope="session")
def slurm(tmp_path_factory):
    """A running one-node SLURM cluster, stopped at the end of the session (skipped if it cannot run)."""
    sys.path.insert(0, str(Path(__file__).parent / "slurm"))
    try:
        from cluster import LocalSlurm, Unavailable
    finally:  # imported once; the tests after this one see sys.path as it was (tests/leaks.py)
        sys.path.remove(str(Path(__file__).parent / "slurm"))

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


@pytest.mark.slow
def test_vad_shards_through_the_joblib_launcher(tree, tmp_path):
    cache = fresh_cache(tmp_path / "cache")
    out = multirun("vad", "-m", f"tree={tree}", "shard=range(0,3)", "shards=3", f"cache_dir={cache}",
                   "hydra/launcher=local", "hydra.launcher.n_jobs=2", "progress=false",
                   f"hydra.sweep.dir={tmp_path / 'multirun'}")
    assert out.returncode == 0, out.stderr
    assembled_equals_one_process(tree, tmp_path, cache)


@pytest.mark.slow
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


@pytest.mark.slow
def test_asr_shards_on_slurm(slurm, tree, tmp_path, built):
    needs_nemo()
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


SMALL = ["hydra/launcher=slurm_cpu", "hydra.launcher.cpus_per_task=1", "hydra.launcher.mem_gb=2",
         "hydra.launcher.timeout_min=10", "progress=false"]


@pytest.mark.slow
def test_the_slurm_launcher_says_what_it_is_doing(slurm, tree, tmp_path):
    """Job id and folder at submission, a state line while waiting (with SLURM's pending reason), each shard's
    report as it finishes; the job named fdbu-vad; warnings for a job folder and a cache left at node-local
    defaults (here under TMPDIR and an XDG_CACHE_HOME under /tmp)."""
    xdg = tmp_path / "xdg"
    fresh_cache(xdg / "fdbu")
    # the second shard waits while the first runs; the first must outlast the launcher's poll (POLL_S, 2 s) to be
    # seen running. The reference backend imports torch and computes on one thread: about 3 s a shard here, as every
    # shard took before a CPU computed without torch (the batched path now does a shard of 3 files in about 1 s)
    out = multirun("vad", "-m", f"tree={tree}", "shard=range(0,2)", "shards=2", *SMALL, "vad.backend=reference",
                   "hydra.launcher.array_parallelism=1", "hydra.launcher.status_every_s=1",
                   env={**slurm.env, "TMPDIR": str(tmp_path), "XDG_CACHE_HOME": str(xdg)})
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    sub = re.fullmatch(r"submitted SLURM job (\d+): 2 jobs named fdbu-vad; job folder (\S+); logs (\S+)", lines[0])
    assert sub and Path(sub[2]).is_relative_to(tmp_path / "fdbu-multirun") and Path(sub[3]).parent.is_dir()
    states = [line for line in lines if re.match(rf"\[\d\d:\d\d:\d\d, \d+ s\] fdbu-vad {sub[1]}: ", line)]
    assert any(re.search(r": (1 running, )?1 pending \(\w+\); [01] of 2 finished$", line) for line in states), lines
    assert sorted(line.split(":")[0] for line in lines if line.startswith("shard ")) == ["shard 0/2", "shard 1/2"]
    assert "fdbu: warning: hydra.sweep.dir is left at its default" in out.stderr
    assert f"fdbu: warning: cache_dir is left at its default {xdg / 'fdbu'}, under" in out.stderr
    named = subprocess.run(["scontrol", "show", "job", f"{sub[1]}_0"], capture_output=True, text=True,
                           env={**os.environ, **slurm.env}).stdout
    assert "JobName=fdbu-vad" in named
    printed = ok(fdbu_main("score", f"tree={tree}", f"out={tmp_path / 'out'}", f"cache_dir={xdg / 'fdbu'}")).stdout
    assert " 0 computed" in printed


def test_a_request_no_node_can_satisfy_is_refused_before_submitting(slurm, tree, tmp_path):
    out = multirun("vad", "-m", f"tree={tree}", "shard=range(0,2)", "shards=2", f"cache_dir={tmp_path / 'c'}",
                   "hydra/launcher=slurm_cpu", "hydra.launcher.cpus_per_task=100000", "hydra.launcher.mem_gb=100000",
                   f"hydra.sweep.dir={tmp_path / 'multirun'}", env=slurm.env)
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and not out.stdout, out.stderr
    assert re.fullmatch(r"fdbu: error: hydra.launcher: no node of the default partition can ever run one job: asked "
                        r"hydra.launcher.cpus_per_task=100000, hydra.launcher.mem_gb=100000; its nodes have at most "
                        r"\d+ CPUs, \d+ GB of memory \(sinfo\): lower hydra.launcher.cpus_per_task and "
                        r"hydra.launcher.mem_gb\n", out.stderr)
    assert not (tmp_path / "multirun" / ".submitit").exists()  # nothing was submitted


def _rerun(line: str, env) -> subprocess.CompletedProcess:
    argv = shlex.split(line.split("; rerun it: ", 1)[1])
    assert argv[:3] == ["fdbu", "vad", "-m"]
    return multirun(*argv[1:], env=env)


@pytest.mark.slow
def test_a_killed_shard_is_one_line_with_its_log_and_rerun(slurm, tree, tmp_path):
    """kill -9 inside shard 1 (FDBU_KILL_AT): one line naming it, its log and how it ended, and the command that
    reruns it; exit 2, no traceback; the rerun finishes the work."""
    cache = fresh_cache(tmp_path / "cache")
    args = ["vad", "-m", f"tree={tree}", "shard=range(0,2)", "shards=2", f"cache_dir={cache}", *SMALL,
            f"hydra.sweep.dir={tmp_path / 'multirun'}"]
    loud = [a if a != "progress=false" else "progress=true" for a in args]  # a bar running when the shard dies
    out = multirun(*loud, env={**slurm.env, "FDBU_KILL_AT": "vad:shard:1"})
    assert out.returncode == 2 and "Traceback" not in out.stderr and "bug" not in out.stderr
    assert [line.split(":")[0] for line in out.stdout.splitlines() if line.startswith("shard ")] == ["shard 0/2"]
    lines = out.stderr.splitlines()
    assert len(lines) == 2 and "%|" not in out.stderr, out.stderr  # the shard's line and the closing summary
    said = re.fullmatch(r"fdbu: error: shard 1/2 \(job \d+_1\) was killed \(SIGKILL: by hand, or the node's "
                        r"out-of-memory killer\) \((.*)\); its logs: (\S+) and (\S+); rerun it: (.*)", lines[0])
    assert said and "Killed" in said[1] and Path(said[3]).is_file(), out.stderr
    assert said[2].endswith(".out") and said[3].endswith(".err")  # its own output named too, not srun's line only
    assert lines[1].startswith("fdbu: error: 1 of 2 jobs did not finish (was killed), 1 done; rerun each")
    assert lines[1].endswith("then run fdbu score on the same trees (without shard=) to assemble")  # vad's shards
    states = [line for line in out.stdout.splitlines() if re.match(r"\[\d\d:\d\d:\d\d, \d+ s\] ", line)]
    assert not any("2 of 2 finished" in line for line in states)  # the dead shard never counts as finished
    rerun = _rerun(lines[0], slurm.env)
    assert rerun.returncode == 0, rerun.stderr
    assert [line.split(":")[0] for line in rerun.stdout.splitlines() if line.startswith("shard ")] == ["shard 1/2"]
    assembled_equals_one_process(tree, tmp_path, cache)


@pytest.mark.slow
def test_a_cancelled_shard_is_one_line_too(slurm, tree, tmp_path):
    """scancel of a running shard: named, 'was cancelled', its log, the rerun command; exit 2."""
    env = {**os.environ, **slurm.env}
    args = ["vad", "-m", f"tree={tree}", "shard=range(0,2)", "shards=2", f"cache_dir={fresh_cache(tmp_path / 'c')}",
            *SMALL, f"hydra.sweep.dir={tmp_path / 'multirun'}"]
    proc = subprocess.Popen([FDBU, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    array = re.match(r"submitted SLURM job (\d+):", proc.stdout.readline())[1]
    deadline = time.monotonic() + 300
    while subprocess.run(["squeue", "-h", "-r", "-j", f"{array}_1", "-o", "%T"], capture_output=True, text=True,
                         env=env).stdout.strip() != "RUNNING":  # a pending array task has no record of its own
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.2)
    subprocess.run(["scancel", f"{array}_1"], check=True, env=env)
    stdout, stderr = proc.communicate(timeout=600)
    assert proc.returncode == 2 and "Traceback" not in stderr and stderr.count("\n") == 2, stderr
    said = re.fullmatch(rf"fdbu: error: shard 1/2 \(job {array}_1\) was cancelled \(scancel\); its logs: (\S+) "
                        r"and (\S+); rerun it: fdbu vad -m .*shard=1 shards=2.*", stderr.splitlines()[0])
    assert said and Path(said[2]).is_file(), stderr
    assert [line.split(":")[0] for line in stdout.splitlines() if line.startswith("shard ")] == ["shard 0/2"]


def test_cfg_with_a_multirun_is_one_line():
    out = multirun("asr", "-m", "tree=runs/modelA", "shard=range(0,2)", "shards=2", "asr.checkpoint=x.nemo",
                   "hydra/launcher=slurm_cpu", "--cfg", "hydra")
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "Traceback" not in out.stderr
    assert out.stderr.startswith("fdbu: error: -m and --cfg/--info cannot be combined")


class _Job:
    """A submitit job as the launcher's watch reads it: running for `polls` polls, then completed with its report."""

    def __init__(self, k: int, polls: int, tmp_path):
        from types import SimpleNamespace

        self.job_id, self.k, self.polls, self.state = f"77_{k}", k, polls, "RUNNING"
        self.paths = SimpleNamespace(result_pickle=tmp_path / f"{k}.pkl")

    def done(self) -> bool:
        self.polls -= 1
        if self.polls < 0:
            self.state = "COMPLETED"
        return self.polls < 0

    def stdout(self) -> str:
        return f"shard {self.k}/2: 3 files, 0 from the cache\n"


@pytest.mark.parametrize("terminal", [True, False])
def test_while_shards_run_a_terminal_sees_the_state_line_count_its_seconds(tmp_path, monkeypatch, terminal):
    """Issue 77, item 1: between two lines that stay (a change of states, every status_every_s) the state line is
    redrawn in place at each poll, its seconds counting, and is gone once the jobs are done; a log file gets the
    lines that stay only."""
    import io

    from omegaconf import OmegaConf

    from fdbu.cli import launcher
    from test_ctrl_c import screen

    class Stream(io.StringIO):
        def isatty(self):
            return terminal

    out = Stream()
    clock = iter(range(0, 1000, 2))
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(launcher, "POLL_S", 0)
    monkeypatch.setattr(launcher.time, "monotonic", lambda: float(next(clock)))
    config = OmegaConf.create({"hydra": {"job": {"name": "fdbu-vad"}}, "shards": 2})
    jobs = [_Job(0, 6, tmp_path), _Job(1, 9, tmp_path)]
    failed = launcher.watch(config, jobs, [["shard=0"], ["shard=1"]], status_every_s=60)
    assert failed == []
    kept = screen(out.getvalue())
    assert [re.sub(r"^\[[\d:]+, ", "[", line) for line in kept] == [
        "[2 s] fdbu-vad 77: 2 running; 0 of 2 finished", "shard 0/2: 3 files, 0 from the cache",
        "[14 s] fdbu-vad 77: 1 running; 1 of 2 finished", "shard 1/2: 3 files, 0 from the cache"]
    drawn = re.findall(r"\r\x1b\[K\[[\d:]+, (\d+) s\]", out.getvalue())
    assert drawn == ([] if not terminal else ["4", "6", "8", "10", "12", "16", "18"])  # each poll between them


def test_the_fit_check_reads_cpus_memory_and_gpus_from_sinfo(tmp_path, monkeypatch):
    """check_fits on a made-up sinfo: a GPU partition and a default CPU partition of 16000 MB nodes."""
    from fdbu.errors import FdbuError
    from fdbu.cli.launcher import check_fits

    sinfo = tmp_path / "sinfo"
    sinfo.write_text("#!/bin/sh\nprintf 'g1|64|256000|gpu:a100:4(S:0-1)|gpu\\nc1|8|16000|(null)|cpu*\\n'\n")
    sinfo.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    check_fits({"partition": "gpu", "cpus_per_task": 8, "mem_gb": 32, "gpus_per_node": 1})
    with pytest.raises(FdbuError, match=r"no node of partition gpu .* asked hydra.launcher.gpus_per_node=8; its "
                                        r"nodes have at most 4 GPUs \(sinfo\): lower hydra.launcher.gpus_per_node$"):
        check_fits({"partition": "gpu", "cpus_per_task": 8, "mem_gb": 32, "gpus_per_node": 8})
    with pytest.raises(FdbuError, match=r"no node of the default partition .* asked hydra.launcher.mem_gb=16; .*"
                                        r"at most 15 GB of memory"):
        check_fits({"partition": None, "cpus_per_task": 8, "mem_gb": 16})  # the slurm_cpu preset's request
    with pytest.raises(FdbuError, match="partition nope has no nodes \\(sinfo\\); the partitions here: cpu, gpu; "):
        check_fits({"partition": "nope", "cpus_per_task": 1})


@pytest.mark.slow
def test_a_multirun_sharing_out_on_slurm_writes_a_folder_per_job(slurm, tree, tmp_path):
    """Issue 23, item 1, on SLURM: each job, on the node it runs on, writes into its own subfolder of the one
    out= (hydra.job.env_set carries the instruction), and its log starts with the job's header."""
    other = synthesize(tmp_path / "other", n={SUB: 2}, seed=32, ineligible=0.0)
    out = multirun("score", "-m", f"tree={tree},{other}", f"out={tmp_path / 'x'}", *SMALL,
                   f"cache_dir={tmp_path / 'cache'}", f"hydra.sweep.dir={tmp_path / 'multirun'}", env=slurm.env)
    assert out.returncode == 0, out.stderr
    assert sorted(p.name for p in (tmp_path / "x").iterdir()) == ["0-tree", "1-other"]
    said = [line for line in out.stdout.splitlines() if ": done, outputs in " in line]  # which job wrote where
    assert len(said) == 2 and any(line.endswith(str(tmp_path / "x" / "1-other")) for line in said), out.stdout
    for k, t in enumerate((tree, other)):
        unified = json.loads((tmp_path / "x" / f"{k}-{t.name}" / "unified.json").read_text())
        assert unified["inputs"]["manifest.json"] == hashlib.sha256((t / "manifest.json").read_bytes()).hexdigest()
    logs = "".join(p.read_text() for p in (tmp_path / "multirun" / ".submitit").rglob("*_log.out"))
    assert logs.count("== job ") == 2


def _slurm_commands(bin_dir: Path, sinfo: str | None) -> dict:
    """A PATH of stand-in SLURM commands (sbatch, srun, sacct answering nothing) and `sinfo`'s script."""
    bin_dir.mkdir()
    for c in ("sbatch", "srun", "sacct"):
        (bin_dir / c).write_text("#!/bin/sh\nexit 0\n")
        (bin_dir / c).chmod(0o755)
    if sinfo is not None:
        (bin_dir / "sinfo").write_text("#!/bin/sh\n" + sinfo + "\n")
        (bin_dir / "sinfo").chmod(0o755)
    return {"PATH": str(bin_dir)}


@pytest.mark.slow
@pytest.mark.parametrize("case", ["no slurm", "sinfo hangs", "sinfo not utf-8"])
def test_a_slurm_preset_without_a_working_cluster_is_one_line_and_creates_nothing(tree, tmp_path, case):
    """Issue 38, item 2: the presets where there is no SLURM, where sinfo never answers (refused after
    SINFO_TIMEOUT_S) or answers in bytes that are not text: one line each, naming what is missing and the way
    out, before Hydra creates the job folder (the launcher's setup runs before the sweeper writes multirun.yaml)."""
    from fdbu.cli.launcher import SINFO_TIMEOUT_S

    env = {"no slurm": lambda: {"PATH": str(tmp_path / "empty")},
           "sinfo hangs": lambda: _slurm_commands(tmp_path / "bin", "exec /bin/sleep 120"),
           "sinfo not utf-8": lambda: _slurm_commands(tmp_path / "bin", r"printf 'n1|4|\377\376|(null)|cpu*\n'")}[case]()
    sweep = tmp_path / "sweep"
    start = time.monotonic()
    out = multirun("score", "-m", f"tree={tree}", "hydra/launcher=slurm_cpu", f"hydra.sweep.dir={sweep}", env=env)
    took = time.monotonic() - start
    lines = out.stderr.strip().splitlines()
    assert out.returncode == 2 and len(lines) == 1 and "Traceback" not in out.stderr, out.stderr
    want = {"no slurm": "no SLURM here: sbatch, srun, sacct not found on PATH; run the jobs on this machine with "
                        "hydra/launcher=local",
            "sinfo hangs": f"SLURM is not answering: `sinfo -h -N -o %N|%c|%m|%G|%P` gave nothing in "
                           f"{SINFO_TIMEOUT_S} s",
            "sinfo not utf-8": "sinfo's output is not UTF-8 text (byte 5: b'\\xff')"}[case]
    assert lines[0].startswith("fdbu: error: hydra.launcher: " + want), lines[0]
    assert not sweep.exists()
    assert took < SINFO_TIMEOUT_S + 20


def test_a_refused_submission_leaves_nothing_behind(tree, tmp_path):
    """Issue 37, item 3: SLURM refuses the jobs (sbatch fails): the job folder this run created, with Hydra's
    multirun.yaml and submitit's scripts, is gone again, up to the first folder that was not there before."""
    env = _slurm_commands(tmp_path / "bin", r"printf 'n1|64|256000|(null)|cpu*\n'")
    (tmp_path / "bin" / "sbatch").write_text("#!/bin/sh\necho 'sbatch: error: Batch job submission failed: "
                                             "Invalid account' >&2\nexit 1\n")
    sweep = tmp_path / "shared" / "jobs" / "sweep"
    out = multirun("score", "-m", f"tree={tree}", "hydra/launcher=slurm_cpu", f"hydra.sweep.dir={sweep}",
                   f"cache_dir={tmp_path / 'cache'}", env=env)
    lines = [x for x in out.stderr.strip().splitlines() if not x.startswith("fdbu: warning")]
    assert out.returncode == 2 and len(lines) == 1 and "SLURM refused the jobs" in lines[0], out.stderr
    assert "Invalid account" in lines[0]
    assert not (tmp_path / "shared").exists()


@pytest.mark.slow
def test_a_local_multirun_leaves_no_bookkeeping(tree, tmp_path):
    """Hydra's multirun.yaml and job folders of a run on this machine go into a temporary folder removed at
    the end: nothing under $TMPDIR/fdbu-multirun* is left."""
    tmp = tmp_path / "tmpdir"
    tmp.mkdir()
    out = multirun("score", "-m", f"tree={tree}", f"out={tmp_path / 'o1'},{tmp_path / 'o2'}", "progress=false",
                   "vad.cache=false", env={"TMPDIR": str(tmp)})
    assert out.returncode == 0, out.stderr
    assert list(tmp.iterdir()) == [] or all(not p.name.startswith("fdbu-multirun") for p in tmp.iterdir())
