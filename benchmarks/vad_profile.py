"""Where the batched VAD's time goes, against what the machine's arithmetic allows (a roofline split).

    python -m benchmarks.vad_profile [--files 200] [--threads 2] [--workdir DIR]

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
"""
from __future__ import annotations

import math
import time


from fdbu.vad import SpeechDetector
from fdbu.vad.audio import read_wav
from fdbu.vad.batched import CONTEXT, FRAME, HOP, N_FFT, WINDOW

from .common import captures, jobs, load as machine_load, machine, parse


def flops_per_window(b) -> dict[str, float]:
    """Floating-point operations of one 512-sample window, by part, from the model's shapes."""
    frames = (FRAME + CONTEXT - N_FFT) // HOP + 1  # STFT frames of one window (4)
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
    """GFLOP/s of a dense addmm of the first convolution's shape (1024 frames x 4 steps rows), at `threads`."""
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


def main() -> None:
    args, work = parse(__doc__, files=200, threads=(int, 2))
    todo = jobs(captures(work, args.files))
    audio_s = sum(j.samples for j in todo) / 16000
    det = SpeechDetector(backend="batched", device="cpu", cache=False, threads=args.threads, margin=1e-3)
    b = det.batched
    parts = {"front end": 0.0, "model call": 0.0}
    front, call = b._front_end, b._probabilities

    def timed(name, fn):
        def run(*a):
            t0 = time.perf_counter()
            try:
                return fn(*a)
            finally:
                parts[name] += time.perf_counter() - t0
        return run

    b._front_end, b._probabilities = timed("front end", front), timed("model call", call)
    det.probabilities(todo[:8])  # warm-up: first calls, thread pools
    parts.update({"front end": 0.0, "model call": 0.0})
    t0 = time.perf_counter()
    det.probabilities(todo)
    wall = time.perf_counter() - t0
    t0 = time.perf_counter()
    for j in todo:
        read_wav(j.path, j.where)
    decode = time.perf_counter() - t0
    per = flops_per_window(b)
    per_s = {k: v * 16000 / WINDOW for k, v in per.items()}
    total = sum(per_s.values())
    rate = attainable(b, args.threads)
    limit = rate * 1e9 / total
    print(f"{machine()}; {machine_load()}; {args.files} captures, {audio_s:.0f} s of audio, {args.threads} threads")
    print("| part | seconds | share of the wall time | audio s/s if it were alone |\n|---|---:|---:|---:|")
    rest = parts["model call"] - parts["front end"]
    for name, s in (("whole pipeline (wall)", wall), ("decoding the files (measured apart)", decode),
                    ("model front end (STFT, convolutions, input gates)", parts["front end"]),
                    ("rest of the model call (framing, LSTM steps, output)", rest),
                    ("outside the model call (waiting for decoding, Python between batches)",
                     wall - parts["model call"])):
        print(f"| {name} | {s:.2f} | {s / wall:.0%} | {audio_s / s:.0f} |")
    print(f"\narithmetic: {total / 1e6:.1f} MFLOP per audio second ("
          + ", ".join(f"{k} {v / 1e6:.1f}" for k, v in per_s.items()) + f"); attainable {rate:.0f} GFLOP/s "
          f"(addmm of the first convolution's shape, {args.threads} threads) -> limit {limit:.0f} audio s/s; "
          f"the pipeline runs at {audio_s / wall:.0f} audio s/s = {audio_s / wall / limit:.0%} of it")


if __name__ == "__main__":
    main()
