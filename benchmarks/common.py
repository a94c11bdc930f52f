"""Shared by the benchmarks: synthetic captures of interruption outputs, and a wall-clock timer."""
from __future__ import annotations

import argparse
import hashlib
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import soundfile as sf

from fdbu.synth import synthesize
from fdbu.vad import Job

INTERRUPTION = "synthetic_user_interruption"


def machine() -> str:
    """The machine in one line (imports torch: a benchmark that measures its children's peak RSS calls it after
    them, since a child forked from a process holding torch starts with its pages counted)."""
    import torch

    return (f"{platform.machine()}, {len(os.sched_getaffinity(0))} cores, python {platform.python_version()}, "
            f"torch {torch.__version__}, cuda {'yes: ' + torch.cuda.get_device_name() if torch.cuda.is_available() else 'no'}")


def load() -> str:
    """The machine's load now: benchmarks on a shared machine say how busy it was."""
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} / {five:.2f} / {fifteen:.2f} (1 / 5 / 15 min)"


def verdict(late: list[str], why: str) -> None:
    """A table's last line, the machine's load now; then, where some row missed its bound, a non-zero exit naming
    those rows."""
    print(f"\n{load()}")
    if late:
        raise SystemExit(f"{why}: {', '.join(late)}")


def captures(root: Path, n: int, seed: int = 0, tail=(14.0, 22.0)) -> Path:
    """A tree of n interruption captures, T - R drawn from `tail` (20-30 s captures by default)."""
    tree = root / f"captures-{n}-{seed}"
    if not tree.exists():
        synthesize(tree, n={INTERRUPTION: n}, seed=seed, ineligible=0.0, interruption_tail_s=tail)
    return tree


def jobs(tree: Path) -> list[Job]:
    out = []
    for p in sorted((tree / INTERRUPTION).glob("*/output.wav"), key=lambda p: int(p.parent.name)):
        out.append(Job(f"{INTERRUPTION}/{p.parent.name}", p, hashlib.sha256(p.read_bytes()).hexdigest(),
                       sf.info(str(p)).frames))
    return out


class Timer:
    def __enter__(self):
        self.t0 = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.s = time.perf_counter() - self.t0


def parse(doc: str, files: int, **extra) -> tuple[argparse.Namespace, Path]:
    """The benchmarks' common options (--files, --device, --workdir) plus `extra` (name -> (type, default))."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--files", type=int, default=files)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--workdir", default=None)
    for name, (kind, default) in extra.items():
        ap.add_argument(f"--{name.replace('_', '-')}", type=kind, default=default)
    args = ap.parse_args()
    work = Path(args.workdir or tempfile.mkdtemp(prefix="fdbu-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    return args, work


def untranscribed(tree: Path, dest: Path) -> Path:
    """A fresh copy of `tree` at `dest` as fdbu export leaves it, before the ASR stage: no asr.json,
    no output.json."""
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(tree, dest)
    (dest / "asr.json").unlink(missing_ok=True)
    for p in dest.glob("*/*/output.json"):
        p.unlink()
    return dest


# A launcher that forks the measured command from a fresh interpreter: Linux counts the pages a child shares with
# the process that forked it (before exec) in the child's ru_maxrss, so a child of a benchmark or test process holding
# torch would report torch's memory as its own.
_LAUNCHER = ("import os, sys, time\n"
             "t0 = time.perf_counter()\n"
             "pid = os.fork()\n"
             "if pid == 0:\n"
             "    os.execvp(sys.argv[2], sys.argv[2:])\n"
             "_, status, usage = os.wait4(pid, 0)\n"
             "with open(sys.argv[1], 'w') as f:\n"
             "    f.write(f'{time.perf_counter() - t0} {usage.ru_utime + usage.ru_stime} {usage.ru_maxrss} '\n"
             "            f'{os.waitstatus_to_exitcode(status)}')\n")


def measured(cmd: list[str], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) -> dict:
    """Run one process: wall seconds, CPU seconds (user + system) and peak RSS in MB of it alone, and its exit code."""
    with tempfile.NamedTemporaryFile("r", suffix=".rusage") as out:
        proc = subprocess.run([sys.executable, "-c", _LAUNCHER, out.name, *cmd], stdout=stdout, stderr=stderr)
        wall, cpu, rss, code = out.read().split()
    return {"wall_s": float(wall), "cpu_s": float(cpu), "rss_mb": int(rss) / 1024, "returncode": int(code),
            "stderr": proc.stderr.decode() if isinstance(proc.stderr, bytes) else ""}
