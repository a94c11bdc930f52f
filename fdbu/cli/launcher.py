"""What a SLURM multirun says while it works (`-m hydra/launcher=slurm_cpu|slurm_gpu`).

Hydra's submitit launcher submits the jobs and waits in silence; this one (the `fdbu_slurm`
launcher in `hydra_plugins/fdbu_launcher`, which the presets in `conf/hydra/launcher/` use)
refuses up front a request no node of the partition can satisfy (sinfo), warns when the job
folder or the cache is left at a node-local default, prints the job id and folder at
submission, a state line while the jobs wait (with SLURM's pending reason, from squeue; on a
terminal also redrawn in place at each poll, its seconds counting, so minutes between two lines
are never a still screen), each
shard's one-line report as it finishes, and for a shard that died one line naming it, its log,
how it ended and the command that reruns it. Job states, ids and paths are submitit's own.
"""
from __future__ import annotations

import os
from collections import Counter
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ..errors import FdbuError
from ..config.settings import CACHE_USERS

ENDED = {  # SLURM's end states, said plainly, with the knob that helps where there is one
    "CANCELLED": "was cancelled (scancel)",
    "OUT_OF_MEMORY": "ran out of memory: raise hydra.launcher.mem_gb",
    "TIMEOUT": "ran past its time limit: raise hydra.launcher.timeout_min",
    "NODE_FAIL": "lost its node",
    "PREEMPTED": "was preempted",
    "BOOT_FAIL": "could not boot its node",
    "DEADLINE": "missed its deadline",
    "FAILED": "failed",
}
KILLED = "was killed (SIGKILL: by hand, or the node's out-of-memory killer)"
POLL_S = 2.0  # how often the jobs' states are read (submitit caches sacct for longer)


def say(text: str, err: bool = False) -> None:
    LIVE.clear()
    print(text, file=sys.stderr if err else sys.stdout, flush=True)


class Live:
    """The state line redrawn in place on a terminal, at each poll (every POLL_S), between the lines that stay (a
    change of states, and every status_every_s): cleared before any other line and at the end, so it is never left
    on the screen. Into a file or a pipe (a batch job's log) it draws nothing."""

    def __init__(self) -> None:
        self.drawn = False

    def draw(self, text: str) -> None:
        if not sys.stdout.isatty():
            return
        width = shutil.get_terminal_size((80, 24)).columns
        sys.stdout.write("\r\x1b[K" + text[:max(width - 1, 10)])
        sys.stdout.flush()
        self.drawn = True

    def clear(self) -> None:
        if self.drawn:
            sys.stdout.write("\r\x1b[K")
            sys.stdout.flush()
            self.drawn = False


LIVE = Live()


def temp_root(path) -> Path | None:
    """The temporary folder (node-local on most clusters) that holds `path`, if one does."""
    path = Path(path).resolve()
    for root in (os.environ.get("TMPDIR"), tempfile.gettempdir(), "/tmp", "/var/tmp", "/dev/shm"):
        if root and path.is_relative_to(Path(root).resolve()):
            return Path(root)
    return None


def node_local_warnings(config) -> list[str]:
    """The job folder or the cache left at a default under a temporary folder: the shards on other nodes
    would write where neither this machine nor the assembling run can read."""
    out = []
    sweep_dir = str(config.hydra.sweep.dir)
    tmp = temp_root(sweep_dir)
    if tmp and not any(o.startswith("hydra.sweep.dir=") for o in config.hydra.overrides.hydra):
        out.append(f"fdbu: warning: hydra.sweep.dir is left at its default {sweep_dir}, under {tmp}, node-local on "
                   "most clusters: the shards' logs and results may never reach this machine; set "
                   "hydra.sweep.dir=<a folder every node sees>")
    command = str(config.hydra.job.name).removeprefix("fdbu-")
    if "cache_dir" in config and config.cache_dir is None and command in CACHE_USERS:
        from ..common.cachedir import cache_root

        tmp = temp_root(cache_root())
        if tmp:
            out.append(f"fdbu: warning: cache_dir is left at its default {cache_root()}, under {tmp}, node-local on "
                       "most clusters: the assembling run would find nothing the shards computed; set "
                       "cache_dir=<a folder every node sees>")
    return out


NEEDED = ("sbatch", "srun", "sacct")  # what submitit submits with, runs a job with, and reads states with
SINFO_TIMEOUT_S = 10
LOCAL = "hydra/launcher=local (joblib: the jobs as processes on this machine)"


def preflight() -> None:
    """Refuse, before anything is created (Hydra's multirun.yaml included: this runs in the launcher's setup),
    a SLURM launch that cannot work here: no SLURM commands, or a cluster that does not answer."""
    missing = [c for c in NEEDED if not shutil.which(c)]
    if missing:
        raise FdbuError("hydra.launcher", None, f"no SLURM here: {', '.join(missing)} not found on PATH; run the "
                        f"jobs on this machine with {LOCAL}, or from a SLURM login node")


def sinfo() -> str | None:
    """sinfo's node list (None without sinfo or when it fails: SLURM itself then refuses what it cannot run); a
    sinfo that does not answer in SINFO_TIMEOUT_S, or answers in bytes that are not text, is refused."""
    if not shutil.which("sinfo"):
        return None
    command = ["sinfo", "-h", "-N", "-o", "%N|%c|%m|%G|%P"]
    try:
        out = subprocess.run(command, capture_output=True, timeout=SINFO_TIMEOUT_S)
    except OSError as e:
        raise FdbuError("hydra.launcher", None, f"sinfo could not be run: {e.strerror or e}; run the jobs on this "
                        f"machine with {LOCAL}") from None
    except subprocess.TimeoutExpired:
        raise FdbuError("hydra.launcher", None, f"SLURM is not answering: `{' '.join(command)}` gave nothing in "
                        f"{SINFO_TIMEOUT_S} s (is slurmctld up and reachable?); try again later, or run the jobs "
                        f"on this machine with {LOCAL}") from None
    if out.returncode != 0:
        return None
    try:
        return out.stdout.decode("utf-8")
    except UnicodeDecodeError as e:
        raise FdbuError("hydra.launcher", None, f"sinfo's output is not UTF-8 text (byte {e.start}: "
                        f"{out.stdout[e.start:e.start + 1]!r}), so the nodes cannot be read; check the cluster's "
                        f"locale, or run the jobs on this machine with {LOCAL}") from None


def partition_nodes(partition: str | None) -> list[dict] | None:
    """The nodes of `partition` (None: the default one) with their CPUs, memory (MB) and GPUs, from sinfo;
    None when sinfo cannot say (then SLURM itself refuses what it cannot run)."""
    text = sinfo()
    if text is None:
        return None
    nodes = []
    for line in text.splitlines():
        try:
            name, cpus, mem, gres, part = line.strip().split("|")
            gpus = sum(int(n) for n in re.findall(r"gpu(?::[^:,(]+)?:(\d+)", gres))
            row = {"name": name, "cpus": int(cpus), "mem_mb": int(mem.rstrip("+")), "gpus": gpus}
        except ValueError:
            continue
        if (part.rstrip("*") == partition) if partition else part.endswith("*"):
            nodes.append(row)
    return nodes


def _count(value) -> int:
    """gpus_per_node as a number (submitit also takes 'a100:2'; the count is after the last colon)."""
    try:
        return int(str(value).rsplit(":", 1)[-1]) if value else 0
    except ValueError:
        return 0


def check_fits(params: dict) -> None:
    """Refuse, before submitting, a request no node of the partition can ever satisfy."""
    partition = params.get("partition")
    nodes = partition_nodes(partition)
    if nodes is None:
        return
    where = f"partition {partition}" if partition else "the default partition"
    if not nodes:
        known = sorted({line.split("|")[-1].strip().rstrip("*") for line in (sinfo() or "").splitlines() if "|" in line})
        raise FdbuError("hydra.launcher", None, f"{where} has no nodes (sinfo); the partitions here: "
                        f"{', '.join(known) or 'none'}; set hydra.launcher.partition=NAME")
    need = {"cpus_per_task": ("cpus", (params.get("cpus_per_task") or 1) * (params.get("tasks_per_node") or 1), 1,
                              "CPUs"),
            "mem_gb": ("mem_mb", params.get("mem_gb") or 0, 1024, "GB of memory"),
            "gpus_per_node": ("gpus", _count(params.get("gpus_per_node")), 1, "GPUs")}
    if any(all(n[field] >= value * unit for field, value, unit, _ in need.values()) for n in nodes):
        return
    most = {key: max(n[field] for n in nodes) // unit for key, (field, _, unit, _) in need.items()}
    over = [key for key, (_, value, _, _) in need.items() if value > most[key]] or \
        [key for key, (_, value, _, _) in need.items() if value]  # each fits somewhere, never all on one node
    asked = ", ".join(f"hydra.launcher.{k}={params.get(k)}" for k in over)
    largest = ", ".join(f"{most[k]} {need[k][3]}" for k in over)
    raise FdbuError("hydra.launcher", None, f"no node of {where} can ever run one job: asked {asked}; its nodes have "
                    f"at most {largest} (sinfo): lower {' and '.join(f'hydra.launcher.{k}' for k in over)}")


def pending_reasons(array_id: str) -> dict[str, str]:
    """task id -> SLURM's reason for a pending array task (squeue; empty when squeue cannot say)."""
    try:
        out = subprocess.run(["squeue", "-h", "-r", "-j", array_id, "-o", "%i|%T|%r"], capture_output=True,
                             text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return {}
    reasons = {}
    for line in out.stdout.splitlines():
        parts = line.strip().split("|")
        if len(parts) == 3 and parts[1] == "PENDING":
            reasons[parts[0]] = parts[2]
    return reasons


class Watched:
    """One submitted job (a submitit job object) with what the console calls it."""

    def __init__(self, job, label: str, overrides: list[str]):
        self.job, self.label, self.overrides = job, label, overrides
        self.reported = False
        self.ended = ""

    def state(self) -> str:
        return self.job.state

    def report(self) -> str | None:
        """The job's own one-line report (the lines a sharded stage prints), or where a job of a multirun sharing
        one out= wrote (its header says), if it wrote either."""
        text = self.job.stdout() or ""
        lines = [line for line in text.splitlines() if line.startswith("shard ")]
        if lines:
            return lines[-1]
        where = [m.group(1) for m in re.finditer(r"^== job \d+: .*\(outputs in (.+)\)$", text, re.M)]
        return f"{self.label}: done, outputs in {where[-1]}" if where else None

    def how_it_ended(self) -> str:
        """How a job that did not finish ended, from SLURM's state and its log's last word on it (never a
        progress bar's remains: a line is its last carriage-return part, and bars are left out)."""
        state = self.job.state.split(" ")[0]
        text = ENDED.get(state, f"ended {state}")
        lines = [line.rsplit("\r", 1)[-1].strip() for line in (self.job.stderr() or "").splitlines()]
        errors = [line for line in lines if line and "%|" not in line]
        said = [line for line in errors if line.startswith("fdbu: error:")]
        if state == "FAILED" and not said and any("Killed" in line for line in errors):  # (a time limit kills too)
            text = KILLED
        detail = said[-1] if said else next((line for line in reversed(errors) if "srun: error" in line
                                             or "Killed" in line or "oom" in line.lower()), None)
        return f"{text} ({detail})" if detail and state not in ("CANCELLED",) else text


def label_of(config, overrides: list[str]) -> str:
    """'shard 1/4' for a sharded stage's job, else its swept settings."""
    values = dict(o.split("=", 1) for o in overrides if "=" in o)
    if "shard" in values and "shards" in config:
        return f"shard {values['shard']}/{values.get('shards', config.shards)}"
    return " ".join(overrides)


def rerun_command(config, overrides: list[str]) -> str:
    """The command that runs this one job again the same way: the multirun's own overrides, with the
    swept ones set to this job's values."""
    command = str(config.hydra.job.name).removeprefix("fdbu-")
    mine = {o.split("=", 1)[0] for o in overrides}
    task = [o for o in config.hydra.overrides.task if o.split("=", 1)[0] not in mine] + list(overrides)
    hydra = [o for o in config.hydra.overrides.hydra if not o.startswith("hydra.mode=")]  # -m says it
    return " ".join(shlex.quote(a) for a in ["fdbu", command, "-m", *task, *hydra])


def assembles(job_name: str) -> str:
    """What assembles a sharded stage's cache: `fdbu vad`'s shards are read by fdbu score, `fdbu asr`'s by fdbu asr
    without shard=."""
    from ..registry import COMMANDS

    command = job_name.removeprefix("fdbu-")
    by = COMMANDS[command].assembled_by if command in COMMANDS else None
    if by is not None:
        return f"run fdbu {by} on the same trees (without shard=) to assemble"
    return f"run fdbu {command} on the same trees without shard= to assemble"


def watch(config, jobs: list, overrides: list[list[str]], status_every_s: float) -> list:
    """Wait for every job, saying what happens; returns the jobs that did not finish. The live state line is gone
    from the screen however the wait ends (a Ctrl-C's line is never written onto it)."""
    try:
        return _watch(config, jobs, overrides, status_every_s)
    finally:
        LIVE.clear()


def _watch(config, jobs: list, overrides: list[list[str]], status_every_s: float) -> list:
    watched = [Watched(j, label_of(config, o), o) for j, o in zip(jobs, overrides)]
    name = str(config.hydra.job.name)
    array = jobs[0].job_id.split("_")[0]
    last_line, last_time, failed = None, 0.0, []
    start = time.monotonic()
    while True:
        waiting = []
        for w in watched:
            if w.reported:
                continue
            if w.job.done():
                w.reported = True
                state = w.state()
                if state.startswith("COMPLETED") or (w.job.paths.result_pickle.exists() and w.job.exception() is None):
                    say(w.report() or f"{w.label}: done")
                else:
                    failed.append(w)
                    out, log = w.job.paths.stdout, w.job.paths.stderr  # its output (a traceback), and srun's line
                    ended = w.how_it_ended()
                    w.ended = ended.split(" (")[0]
                    say(f"fdbu: error: {w.label} (job {w.job.job_id}) {ended}; its logs: {out} and {log}"
                        f"{'' if out.exists() or log.exists() else ' (none: it never started)'}; rerun it: "
                        f"{rerun_command(config, w.overrides)}", err=True)
            else:
                waiting.append(w)
        if not waiting:
            if failed:
                ok = len(watched) - len(failed)
                say(f"fdbu: error: {len(failed)} of {len(watched)} jobs did not finish ({', '.join(sorted({w.ended for w in failed}))}), "
                    f"{ok} done; rerun each with its command above (the done ones keep their results)"
                    + (f", then {assembles(name)}"
                       if any(o.startswith("shard=") for w in watched for o in w.overrides) else ""), err=True)
            return failed
        counts = Counter(w.state().split(" ")[0] for w in waiting)  # one squeue/sacct answer a job
        reasons = pending_reasons(array) if counts.get("PENDING") else {}
        why = ", ".join(sorted(set(reasons.values()) - {"None", ""}))
        line = ", ".join(f"{n} {s.lower()}" + (f" ({why})" if s == "PENDING" and why else "")
                         for s, n in sorted(counts.items(), key=lambda kv: kv[0] != "RUNNING"))
        now = time.monotonic()
        done = len(watched) - len(waiting) - len(failed)  # a dead job is not a finished one
        dead = f", {len(failed)} failed" if failed else ""
        status = (f"[{time.strftime('%H:%M:%S')}, {now - start:.0f} s] {name} {array}: {line}; {done} of "
                  f"{len(watched)} finished{dead}")
        if line != last_line or now - last_time >= status_every_s:
            say(status)
            last_line, last_time = line, now
        else:
            LIVE.draw(status)
        time.sleep(POLL_S)


def submitted(config, jobs: list, params: dict) -> str:
    array = jobs[0].job_id.split("_")[0]
    where = f" to partition {params['partition']}" if params.get("partition") else ""
    logs = f"{jobs[0].paths.stdout.parent}/" if len(jobs) == 1 else f"{jobs[0].paths.stdout.parent.parent}/{array}_*/"
    return (f"submitted SLURM job {array}{where}: {len(jobs)} job{'s' if len(jobs) != 1 else ''} named "
            f"{config.hydra.job.name}; job folder {config.hydra.sweep.dir}; logs {logs}")


def first_missing(folder) -> Path | None:
    """The outermost folder of `folder`'s path that does not exist yet (None: it exists): what this run creates."""
    path, missing = Path(str(folder)).absolute(), None
    while not path.exists():
        missing, path = path, path.parent
    return missing


def undo(launcher, sweep_dir: Path) -> None:
    """A submission SLURM refused leaves nothing behind: the job folder, when this run created it (then each
    parent it created, while empty: another run may have put something there since), else Hydra's multirun.yaml
    and submitit's folder if this run made it."""
    fresh = getattr(launcher, "fresh", None)
    if fresh is not None:
        shutil.rmtree(sweep_dir, ignore_errors=True)
        parent = sweep_dir.parent
        while parent.is_relative_to(fresh) and parent != fresh.parent:
            try:
                parent.rmdir()
            except OSError:
                break
            parent = parent.parent
        return
    (sweep_dir / "multirun.yaml").unlink(missing_ok=True)
    if not getattr(launcher, "had_submitit", True):
        shutil.rmtree(sweep_dir / ".submitit", ignore_errors=True)


def setup(params: dict) -> None:
    """Before the sweep writes anything: SLURM is here and answers, and some node can run one job."""
    preflight()
    check_fits({k: v for k, v in params.items() if k != "status_every_s"})


def launch(launcher, job_overrides, initial_job_idx: int) -> list:
    """Hydra's submitit SLURM launch, saying what it does (the module's docstring)."""
    import submitit
    from hydra.core.singleton import Singleton
    from hydra_plugins.hydra_submitit_launcher.config import BaseQueueConf
    from omegaconf import OmegaConf

    config = launcher.config
    params = dict(launcher.params)
    status_every_s = float(params.pop("status_every_s"))
    for line in node_local_warnings(config):
        say(line, err=True)
    init = {"folder": params.pop("submitit_folder")}
    if "max_num_timeout" in params:
        init[f"{launcher._EXECUTOR}_max_num_timeout"] = params.pop("max_num_timeout")
    executor = submitit.AutoExecutor(cluster=launcher._EXECUTOR, **init)
    base = set(OmegaConf.structured(BaseQueueConf).keys())
    executor.update_parameters(**{k if k in base else f"{launcher._EXECUTOR}_{k}": v for k, v in params.items()})
    Path(str(config.hydra.sweep.dir)).mkdir(parents=True, exist_ok=True)
    overrides = [list(o) for o in job_overrides]
    args = [(o, "hydra.sweep.dir", initial_job_idx + k, f"job_id_for_{initial_job_idx + k}", Singleton.get_state())
            for k, o in enumerate(overrides)]
    with tempfile.TemporaryFile() as said:  # sbatch's own stderr: into the one line when it refuses
        sys.stderr.flush()
        try:
            saved = os.dup(2)
        except OSError:  # no stderr to hold back
            saved = os.open(os.devnull, os.O_WRONLY)
        os.dup2(said.fileno(), 2)
        try:
            jobs = executor.map_array(launcher, *zip(*args))
        except Exception as e:  # sbatch refused (submitit's FailedJobError / CalledProcessError)
            undo(launcher, Path(str(config.hydra.sweep.dir)))
            text = " ".join(str(e).split())
            raise FdbuError("hydra.launcher", None, f"SLURM refused the jobs: {text[-400:]}") from None
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        said.seek(0)
        sys.stderr.write(said.read().decode("utf-8", errors="replace"))  # accepted: its warnings, if any
    say(submitted(config, jobs, params))
    if watch(config, jobs, overrides, status_every_s):
        sys.exit(2)  # each job that did not finish has had its one line
    return [j.results()[0] for j in jobs]
