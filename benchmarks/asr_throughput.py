"""ASR throughput: the official one-file-at-a-time way against fdbu's batched way, same files.

    python -m benchmarks.asr_throughput [--files 64] [--checkpoint PATH.nemo] [--device cpu|cuda]
                                        [--batch-sizes 8,32] [--workdir DIR]

Official way (v1_v1.5/get_transcript/asr.py): each output.wav is read, written to a
temporary WAV and transcribed alone. Batched way: the same audio in memory, sorted by
duration, `batch_size` files per call. Prints the real-time factor (processing seconds
per audio second) and files per second of each, their ratio, and whether the words and
times are identical. Without --checkpoint it builds the tiny random model the tests use
(its speed says nothing about Parakeet's, only about the two ways of calling NeMo).
"""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import numpy as np
import soundfile as sf

from fdbu.asr.nemo_model import ParakeetASR

from .common import Timer, captures, jobs, machine, parse


def main() -> None:
    args, work = parse(__doc__, files=64, checkpoint=(str, None), batch_sizes=(str, "8,32"))
    checkpoint = args.checkpoint
    if checkpoint is None:
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
        import tiny_asr

        checkpoint = tiny_asr.build(work / "tiny-asr")
    model = ParakeetASR(Path(checkpoint), device=args.device)
    files = [j.path for j in jobs(captures(work, args.files))]
    audios = [sf.read(str(p), dtype="float32")[0] for p in files]
    audio_s = sum(len(a) for a in audios) / 16000
    model.transcribe(audios[:2], 2)  # warm-up

    def official():
        out = []
        for p in files:
            waveform, sr = sf.read(str(p))
            with tempfile.NamedTemporaryFile(suffix=".wav", delete=False) as tmp:
                sf.write(tmp.name, waveform, sr)
                out.append(model.model.transcribe([tmp.name], timestamps=True, verbose=False)[0])
            os.unlink(tmp.name)
        return [[(w["word"], w["start"], w["end"]) for w in h.timestamp["word"]] for h in out]

    with Timer() as t_off:
        ref = official()
    print(f"machine: {machine()}; device {args.device}; {len(files)} files, {audio_s:.0f} s of audio; "
          f"checkpoint {Path(checkpoint).name}")
    print(f"  official one file at a time: {t_off.s:.2f} s, RTF {t_off.s / audio_s:.4f}, "
          f"{len(files) / t_off.s:.1f} files/s")
    for bs in [int(x) for x in args.batch_sizes.split(",")]:
        order = np.argsort([len(a) for a in audios], kind="stable")
        with Timer() as t:
            got = model.transcribe([audios[i] for i in order], bs)
        words = [None] * len(files)
        for k, i in enumerate(order):
            words[i] = [(w.text, w.start, w.end) for w in got[k]]
        print(f"  batched, batch_size {bs}: {t.s:.2f} s, RTF {t.s / audio_s:.4f}, {len(files) / t.s:.1f} files/s, "
              f"{t_off.s / t.s:.1f}x the official way; same words and times: {'yes' if words == ref else 'NO'}")


if __name__ == "__main__":
    main()
