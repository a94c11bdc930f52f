"""Does NeMo's batched decoding give one file per call's words and times on this device, and with TF32?

    python -m benchmarks.asr_batching [--model parakeet-size|tiny-tdt] [--files 48] [--device cuda] [--workdir DIR]

The ASR stage decodes several files per NeMo call and checks a sample of them against one file per call
before writing anything (`asr.verify`, a refusal naming the file when they differ). This counts, over N
interruption captures, the files whose words or times differ between one file per call and batches of 8, 16
and N, first with torch's float32 settings as the official asr.py runs under (cuDNN may use TF32), then with
TF32 off for cuDNN and cuBLAS; and how many one-file-per-call transcripts the TF32 setting itself changes.
Random weights (the models of tests/tiny_asr.py) put near-ties between tokens far more often than a trained
model, so the counts are an upper side of what Parakeet's own weights would show.
"""
from __future__ import annotations

import time

import torch

from fdbu.asr import stage
from fdbu.asr.nemo_model import ParakeetASR

from .asr_throughput import checkpoint_for
from .common import captures, machine, parse


def main() -> None:
    args, work = parse(__doc__, files=48, model=(str, "parakeet-size"), checkpoint=(str, None))
    asr = ParakeetASR(checkpoint_for(args, work), device=args.device)
    audios = [j.audio() for j in stage._jobs(captures(work, args.files))]
    audio_s = sum(len(a) for a in audios) / 16000
    asr.transcribe([audios[0][:80000]], 1)  # warm-up

    def timed(fn):
        if args.device.startswith("cuda"):
            torch.cuda.synchronize()
        t = time.perf_counter()
        out = fn()
        if args.device.startswith("cuda"):
            torch.cuda.synchronize()
        return out, time.perf_counter() - t

    print(f"machine: {machine()}; device {args.device}; {len(audios)} captures, {audio_s:.0f} s of audio; "
          f"NeMo decoding: {asr.decoding}; torch's defaults: cudnn.allow_tf32 {torch.backends.cudnn.allow_tf32}, "
          f"matmul.allow_tf32 {torch.backends.cuda.matmul.allow_tf32}\n")
    print("| float32 setting | files per call | files differing from one per call | audio s/s batched "
          "| audio s/s one per call |")
    print("|---|---:|---:|---:|---:|")
    first = None
    for label in ("torch's defaults (as asr.py runs)", "TF32 off (cuDNN and cuBLAS)"):
        if first is not None:
            torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = False
        alone, t1 = timed(lambda: [asr.transcribe([a], 1)[0] for a in audios])
        for bs in (8, 16, args.files):
            together, tb = timed(lambda bs=bs: asr.transcribe(audios, bs))
            differ = sum(x != y for x, y in zip(alone, together))
            print(f"| {label} | {bs} | {differ} of {len(audios)} | {audio_s / tb:.0f} | {audio_s / t1:.0f} |",
                  flush=True)
        if first is None:
            first = alone
        else:
            changed = sum(x != y for x, y in zip(alone, first))
            print(f"\nOne file per call, TF32 off against torch's defaults: {changed} of {len(audios)} files differ")


if __name__ == "__main__":
    main()
