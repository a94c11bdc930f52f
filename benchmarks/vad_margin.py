"""How far the batched backend's probabilities stray from the reference path's, against the guard margin.

    python -m benchmarks.vad_margin [--files 300] [--device cpu]

Calibrates this device (`fdbu calibrate`: the shipped corpus, 48 files of 4 to 44 s), then measures
the deviation on a different, larger corpus: synthetic interruption captures, each also with
added noise at three levels and with its gain changed, so the probabilities visit the whole
(0, 1) range. Prints both largest deviations, the calibrated margin and its ratio to the
larger corpus' deviation (the guard's safety factor on unseen audio), and how many files the
guard recomputes at that margin.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import soundfile as sf

from fdbu.vad import Job, SpeechDetector
from fdbu.vad.cache import Entry

from .common import Timer, captures, jobs, load, machine, parse


def variants(audio: np.ndarray, rng: np.random.Generator) -> list[np.ndarray]:
    out = [audio]
    for level in (0.002, 0.02, 0.08):
        out.append(np.clip(audio + rng.normal(0, level, len(audio)).astype(np.float32), -1, 1))
    out.append(np.clip(audio * 3.0, -1, 1))
    out.append(audio * 0.2)
    return out


def main() -> None:
    args, work = parse(__doc__, files=300)
    print(f"machine: {machine()}; device {args.device}; {load()}")
    rng = np.random.default_rng(0)
    audios = []
    for job in jobs(captures(work, args.files // 6 + 1, seed=1, tail=(4.0, 14.0))):
        audios += variants(sf.read(str(job.path), dtype="float32")[0], rng)
    audios = audios[:args.files]
    det = SpeechDetector(backend="batched", device=args.device, cache=False, cache_dir=work / "cache")
    cal = det.calibration(force=True)
    print(f"calibration: {cal.line()} ({cal.audio_s:.0f} s of audio, {cal.seconds:.1f} s)")
    with Timer() as tb:
        batched = det.batched.probabilities(audios)
    with Timer() as tr:
        reference = [det.silero.reference_probs(a) for a in audios]
    dev = [float(np.abs(b.astype(np.float64) - r.astype(np.float64)).max()) for b, r in zip(batched, reference)]
    entries = [Entry(b, False, cal.margin) for b in batched]
    fake = [Job(str(i), Path(), "", len(a)) for i, a in enumerate(audios)]
    near = int(det._kernel(entries, fake, det.silero.settings.rule, True).critical.sum())
    windows = sum(len(r) for r in reference)
    seconds = sum(len(a) for a in audios) / 16000
    print(f"{len(audios)} files, {seconds:.0f} s of audio, {windows} windows; reference {tr.s:.1f} s, batched {tb.s:.1f} s")
    print(f"largest |batched - reference| probability: {max(dev):.2e} (99th percentile of per-file maxima "
          f"{np.percentile(dev, 99):.2e}); calibration corpus {cal.deviation:.2e}")
    print(f"guard margin {cal.margin:.1e} = {cal.margin / max(dev):.1f}x this corpus' largest deviation")
    print(f"files the guard flags (an evaluated comparison within the margin): {near} of {len(audios)} "
          f"({100 * near / len(audios):.1f}%)")


if __name__ == "__main__":
    main()
