"""Sharded stages: what parallel workers buy, and what sharding and assembly cost.

    python -m benchmarks.cluster [--files 200] [--asr-files 64] [--skip vad,asr,shards] [--workdir DIR]

On the same N synthetic interruption captures (20-30 s each), each way a user would run it
(the `fdbu` command, one process per run, startup included):
1. the reference VAD backend: one process (`fdbu vad`) against 2 joblib workers
   (`fdbu vad -m 'shard=range(0,2)' shards=2 hydra/launcher=local`): the ratio;
2. the ASR stage (the tiny RNNT model the tests build; no Parakeet checkpoint can be fetched
   here): one process against 2 joblib workers, then the assembling `fdbu asr`;
3. the batched VAD backend: one `fdbu score` against 4 sequential shards (`fdbu vad shard=K
   shards=4`) plus the assembling `fdbu score`: the overhead of sharding and assembly.
Every run starts from an empty cache (the calibration copied in). Prints wall times and ratios.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from fdbu.common.cachedir import cache_root

from .common import Timer, captures, load, machine, parse, untranscribed

FDBU = str(Path(sys.executable).parent / "fdbu")


def fdbu(*args: str) -> float:
    with Timer() as t:
        out = subprocess.run([FDBU, *args, "progress=false"], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"fdbu {' '.join(args)} failed:\n{out.stderr}")
    return t.s


def empty_cache(work: Path, name: str) -> Path:
    """A new cache root holding this machine's calibration (so no run pays for calibrating)."""
    path = work / name
    shutil.rmtree(path, ignore_errors=True)
    src = cache_root() / "vad-probs" / "calibration"
    if src.is_dir():
        shutil.copytree(src, path / "vad-probs" / "calibration")
    path.mkdir(parents=True, exist_ok=True)
    return path


def main() -> None:
    args, work = parse(__doc__, files=200, asr_files=(int, 64), skip=(str, ""))
    skip = set(filter(None, args.skip.split(",")))
    tree = captures(work, args.files)
    audio_s = sum(int(p.stat().st_size - 44) // 2 for p in tree.glob("*/*/output.wav")) / 16000
    print(f"machine: {machine()}; {load()}; {args.files} captures, {audio_s:.0f} s of audio")
    fdbu("calibrate", "device=cpu")  # this machine's calibration, copied into every empty cache below
    multirun = ["hydra/launcher=local", "hydra.launcher.n_jobs=2", f"hydra.sweep.dir={work / 'multirun'}"]

    if "vad" not in skip:
        reference_vad(work, tree, audio_s, multirun)
    if "asr" not in skip:
        asr(work, args.asr_files, multirun)
    if "shards" not in skip:
        shards(work, tree)
    print(f"{load()}")


def reference_vad(work: Path, tree: Path, audio_s: float, multirun: list[str]) -> None:
    one = fdbu("vad", f"tree={tree}", "vad.backend=reference", f"cache_dir={empty_cache(work, 'c1')}")
    two = fdbu("vad", "-m", f"tree={tree}", "shard=range(0,2)", "shards=2", "vad.backend=reference",
               f"cache_dir={empty_cache(work, 'c2')}", *multirun)
    print(f"[reference VAD] 1 process {one:.1f} s ({audio_s / one:.0f} audio s/s); 2 joblib workers {two:.1f} s "
          f"({audio_s / two:.0f} audio s/s): {one / two:.2f}x")


def asr(work: Path, files: int, multirun: list[str]) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    import tiny_asr

    checkpoint = tiny_asr.build(work / "tiny-asr")
    small = captures(work, files, seed=3)
    asr = [f"asr.checkpoint={checkpoint}", "device=cpu", "asr.batch_size=8"]
    one = fdbu("asr", f"tree={untranscribed(small, work / 'asr-one')}", "asr.cache=false", *asr)
    cache = empty_cache(work, "c3")
    target = untranscribed(small, work / "asr-two")
    two = fdbu("asr", "-m", f"tree={target}", "shard=range(0,2)", "shards=2", f"cache_dir={cache}", *asr, *multirun)
    assemble = fdbu("asr", f"tree={target}", f"cache_dir={cache}", *asr)
    print(f"[ASR, tiny model, {files} captures] 1 process {one:.1f} s; 2 joblib workers {two:.1f} s "
          f"({one / two:.2f}x) + assembly {assemble:.1f} s = {one / (two + assemble):.2f}x")


def shards(work: Path, tree: Path) -> None:
    single = fdbu("score", f"tree={tree}", f"out={work / 'out-one'}", f"cache_dir={empty_cache(work, 'c4')}")
    cache = empty_cache(work, "c5")
    shards = [fdbu("vad", f"tree={tree}", f"shard={k}", "shards=4", f"cache_dir={cache}") for k in range(4)]
    assemble = fdbu("score", f"tree={tree}", f"out={work / 'out-many'}", f"cache_dir={cache}")
    same = all((work / "out-one" / f).read_bytes() == (work / "out-many" / f).read_bytes()
               for f in ("unified.json", "unified-samples.jsonl"))
    print(f"[batched VAD + score] one process {single:.1f} s; 4 shards one after another "
          f"{' + '.join(f'{s:.1f}' for s in shards)} s + assembly {assemble:.1f} s = {sum(shards) + assemble:.1f} s: "
          f"overhead {sum(shards) + assemble - single:+.1f} s ({(sum(shards) + assemble) / single:.2f}x); "
          f"byte-identical: {'yes' if same else 'NO'}")


if __name__ == "__main__":
    main()
