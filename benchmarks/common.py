"""Shared by the benchmarks: synthetic captures of interruption outputs, and a wall-clock timer."""
from __future__ import annotations

import argparse
import hashlib
import os
import platform
import shutil
import tempfile
import time
from pathlib import Path

import soundfile as sf
import torch

from fdbu.synth import synthesize
from fdbu.vad import Job

INTERRUPTION = "synthetic_user_interruption"


def machine() -> str:
    return (f"{platform.machine()}, {len(os.sched_getaffinity(0))} cores, python {platform.python_version()}, "
            f"torch {torch.__version__}, cuda {'yes: ' + torch.cuda.get_device_name() if torch.cuda.is_available() else 'no'}")


def load() -> str:
    """The machine's load now: benchmarks on a shared machine say how busy it was."""
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} / {five:.2f} / {fifteen:.2f} (1 / 5 / 15 min)"


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
