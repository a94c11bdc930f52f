"""Where the batched VAD's time goes, against what the machine's arithmetic allows (a roofline split).

    python -m benchmarks.vad_profile [--files 200] [--threads 2] [--workdir DIR] [--before DIR --runs 3] [--floor 0]
                                     [--engine numpy|torch] [--engines 1]

On N synthetic interruption captures (20-30 s), in one process, cache off, the batched backend as `fdbu score`
runs it (`SpeechDetector.probabilities`: batches read on a background thread while the previous one computes):

- the whole pipeline's throughput (audio seconds per wall second), and its parts: decoding the files alone (read
  and converted as the loader does, on the main thread), the model's front end (STFT, four convolutions, the LSTM's
  input gates: `BatchedSilero._front_end`), and the rest of the model's call (framing the audio, the LSTM steps,
  the output layer), each timed around the same calls;
- the arithmetic: floating-point operations per audio second, counted from the packaged model's own layer shapes
  (the convolutions and the two LSTM products as matrix products, the FFT as 5 N log2 N / 2 per real frame), and
  the machine's attainable rate for the front end's largest product at this thread count (a dense addmm of the
  first convolution's shape, best of 5); the arithmetic limit is that rate / FLOP per audio second.

The parts run on the backend's worker threads (one group of files per thread on a CPU), so they are given in
thread-seconds, as a share of wall time x threads (a batch of one file runs as one group on the main thread with
every intra-op thread, which this split counts as one).

The synthetic captures are digital silence between their words (most windows are 576 zeros, which the batched
backend computes once); `--floor K` adds a noise floor to every sample instead (uniform integers in [-K, K] on the
PCM16 values, seed 0: K=2 is a dithered recording's floor), so that no window is silent and every one is computed.
The share of silent windows is printed.

`--engine` picks the batched path profiled: numpy (what a CPU computes with, the default) or torch (what a GPU
computes with, run here on the CPU). `--engines 1` also measures the whole pipeline with each engine, each a fresh
process on the same files, alternating, best of `--runs`: the ratio is what the CPU gains or loses by numpy.

`--before DIR` (a checkout of another fdbu version) also measures the whole pipeline's throughput with that version
and with this one, each a fresh process on the same files, alternating, best of `--runs`: the ratio is the speed-up.
"""
from __future__ import annotations

import math
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path


import numpy as np

from fdbu.common.audio import pcm16, wav_bytes
from fdbu.vad import SpeechDetector
from fdbu.vad.audio import read_wav
from fdbu.vad.batched_numpy import CONTEXT, FRAME, HOP, N_FFT, WINDOW, NumpyBatchedSilero

from .common import INTERRUPTION, captures, jobs, load as machine_load, machine, parse


def flops_per_window(b) -> dict[str, float]:
    """Floating-point operations of one 512-sample window, by part, from the model's shapes."""
    frames = (FRAME + CONTEXT - N_FFT) // HOP + 1  # STFT frames of one window (4)
    # both engines take the STFT as a real FFT of the windowed frames (numpy: scipy's pocketfft, issue 58)
    out = {"stft": frames * (5 * N_FFT * math.log2(N_FFT) / 2 + 3 * (N_FFT // 2 + 1))}
    length = frames
    conv = 0.0
    for stride, w, _ in b.convs:
        length = (length + 2 - 3) // stride + 1
        conv += 2 * length * w.shape[0] * w.shape[1]
    out["convolutions"] = conv
    out["lstm input gates"] = 2 * b.w_ih.shape[0] * b.w_ih.shape[1]
    out["lstm steps"] = 2 * b.w_hh.shape[0] * b.w_hh.shape[1] + 10 * b.w_hh.shape[0]
    return out


def attainable(b, threads: int) -> float:
    """GFLOP/s of a dense addmm of the first convolution's shape (1024 frames x 4 steps rows), at `threads`, with the
    engine's own library (numpy's BLAS or torch)."""
    if isinstance(b, NumpyBatchedSilero):
        from threadpoolctl import threadpool_limits

        _, w, bias = b.convs[0]
        x = np.random.default_rng(0).standard_normal((4096, w.shape[0])).astype(np.float32)
        best = float("inf")
        with threadpool_limits(threads, user_api="blas"):
            for _ in range(5):
                t0 = time.perf_counter()
                for _ in range(20):
                    x @ w + bias
                best = min(best, (time.perf_counter() - t0) / 20)
        return 2 * x.shape[0] * w.shape[0] * w.shape[1] / best / 1e9
    import torch

    from fdbu.vad.silero import torch_threads

    _, w, bias = b.convs[0]
    x = torch.randn(4096, w.shape[0])
    best = float("inf")
    with torch_threads(threads), torch.no_grad():
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(20):
                torch.addmm(bias, x, w)
            best = min(best, (time.perf_counter() - t0) / 20)
    return 2 * x.shape[0] * w.shape[0] * w.shape[1] / best / 1e9


# one version's whole pipeline in a fresh process: only the API both versions have (SpeechDetector.probabilities)
PIPELINE = """
import hashlib, sys, time
from pathlib import Path
import soundfile as sf
from fdbu.vad import Job, SpeechDetector
paths = sorted(Path(sys.argv[1]).glob("*/output.wav"), key=lambda p: int(p.parent.name))
todo = [Job(p.parent.name, p, hashlib.sha256(p.read_bytes()).hexdigest(), sf.info(str(p)).frames) for p in paths]
kw = {} if sys.argv[3] == "default" else {"engine": sys.argv[3]}  # (an older version knows no engine)
det = SpeechDetector(backend="batched", device="cpu", cache=False, threads=int(sys.argv[2]), margin=1e-3, **kw)
det.probabilities(todo[:8])
t0 = time.perf_counter()
det.probabilities(todo)
print(sum(j.samples for j in todo) / 16000 / (time.perf_counter() - t0))
"""


def versions(ways: dict[str, tuple[str, str]], tree: Path, threads: int, runs: int) -> None:
    """The whole pipeline's audio s/s with each way (name -> (fdbu checkout, engine or "default")), alternating,
    best of `runs`; the ratio is the second's over the first's."""
    best = {name: 0.0 for name in ways}
    for _ in range(runs):
        for name, (path, engine) in ways.items():
            env = {**os.environ, "PYTHONPATH": path}
            out = subprocess.run([sys.executable, "-P", "-c", PIPELINE, str(tree / INTERRUPTION), str(threads), engine],
                                 env=env, check=True, capture_output=True, text=True, cwd=path).stdout
            best[name] = max(best[name], float(out.split()[-1]))
    (a, ra), (b, rb) = best.items()
    print(f"\nwhole pipeline, best of {runs} alternating runs ({machine_load()}): {a} {ra:.0f} audio s/s, "
          f"{b} {rb:.0f} audio s/s = {rb / ra:.2f}x")


def floored(tree: Path, k: int) -> Path:
    """A copy of the captures' output.wav files with a noise floor of uniform integers in [-k, k] added."""
    out = tree.with_name(f"{tree.name}-floor{k}")
    if not out.exists():  # written beside it, then renamed: an interrupted copy is never taken for a whole one
        part = tree.with_name(f"{tree.name}-floor{k}.part")
        shutil.rmtree(part, ignore_errors=True)
        rng = np.random.default_rng(0)
        for src in sorted((tree / INTERRUPTION).glob("*/output.wav"), key=lambda p: int(p.parent.name)):
            x = pcm16(read_wav(src, src.parent.name)).astype(np.int64)
            dest = part / INTERRUPTION / src.parent.name / "output.wav"
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(wav_bytes(np.clip(x + rng.integers(-k, k + 1, len(x)), -32768, 32767).astype(np.int16)))
        part.rename(out)
    return out


def main() -> None:
    args, work = parse(__doc__, files=200, threads=(int, 2), before=(str, None), runs=(int, 3), floor=(int, 0),
                       engine=(str, "numpy"), engines=(int, 0))
    tree = captures(work, args.files)
    if args.floor:
        tree = floored(tree, args.floor)
    todo = jobs(tree)
    audio_s = sum(j.samples for j in todo) / 16000
    det = SpeechDetector(backend="batched", device="cpu", cache=False, threads=args.threads, margin=1e-3,
                         engine=args.engine)
    b = det.batched
    parts = {"front end": 0.0, "worker": 0.0}
    lock = threading.Lock()

    def timed(name, fn):
        def run(*a):
            t0 = time.perf_counter()
            try:
                return fn(*a)
            finally:
                with lock:
                    parts[name] += time.perf_counter() - t0
        return run

    b._front_end, b._probabilities = timed("front end", b._front_end), timed("worker", b._probabilities)
    det.probabilities(todo[:8])  # warm-up: first calls, thread pools
    parts.update({k: 0.0 for k in parts})
    t0 = time.perf_counter()
    det.probabilities(todo)
    wall = time.perf_counter() - t0
    t0 = time.perf_counter()
    for j in todo:
        read_wav(j.path, j.where)
    decode = time.perf_counter() - t0
    silent = windows = 0
    for j in todo:
        x = read_wav(j.path, j.where)
        framed = np.zeros(CONTEXT + -(-len(x) // WINDOW) * WINDOW, np.float32)
        framed[CONTEXT:CONTEXT + len(x)] = x
        frames = np.lib.stride_tricks.sliding_window_view(framed, FRAME)[::WINDOW]
        silent += int((~frames.any(axis=1)).sum())
        windows += len(frames)
    per = flops_per_window(b)
    per_s = {k: v * 16000 / WINDOW for k, v in per.items()}
    total = sum(per_s.values())
    rate = attainable(b, args.threads)
    limit = rate * 1e9 / total
    threads = args.threads
    print(f"{machine()}; {machine_load()}; {args.files} captures, {audio_s:.0f} s of audio, {threads} threads; "
          f"{silent / windows:.0%} of the windows digital silence" + (f" (noise floor +-{args.floor})" if args.floor else ""))
    print("| part | seconds | share of the time | audio s/s if it were alone |\n|---|---:|---:|---:|")
    print(f"| whole pipeline (wall) | {wall:.2f} | 100% | {audio_s / wall:.0f} |")
    print(f"| decoding the files (measured apart, one thread) | {decode:.2f} | {decode / wall:.0%} of the wall | "
          f"{audio_s / decode:.0f} |")
    for name, s in (("model front end (STFT, convolutions, input gates)", parts["front end"]),
                    ("rest of the workers' call (framing, LSTM steps, output)", parts["worker"] - parts["front end"]),
                    ("outside the workers (splitting, waiting for decoding, Python between batches)",
                     wall * threads - parts["worker"])):
        print(f"| {name} | {s:.2f} thread-s | {s / (wall * threads):.0%} of wall x threads | "
              f"{audio_s * threads / s:.0f} |")
    print(f"\narithmetic: {total / 1e6:.1f} MFLOP per audio second ("
          + ", ".join(f"{k} {v / 1e6:.1f}" for k, v in per_s.items()) + f"); attainable {rate:.0f} GFLOP/s "
          f"(addmm of the first convolution's shape, {threads} threads) -> limit {limit:.0f} audio s/s; "
          f"the pipeline runs at {audio_s / wall:.0f} audio s/s = {audio_s / wall / limit:.0%} of it")
    here = str(Path(__file__).resolve().parents[1])
    if args.engines:
        versions({"torch": (here, "torch"), "numpy": (here, "numpy")}, tree, threads, args.runs)
    if args.before:
        versions({"before": (args.before, "default"), "after": (here, "default")}, tree, threads, args.runs)


if __name__ == "__main__":
    main()
