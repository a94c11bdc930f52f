"""GPU readiness in one run: calibration, throughput against the CPU reference, byte-identical output.

    python -m benchmarks.gpu_check [--device cuda] [--files 120] [--workdir DIR]

On a GPU node (about 5 minutes on 16 cores): calibrates the batched backend on the device
(`fdbu calibrate`), times speech detection on N synthetic interruption captures (20-30 s)
with the CPU reference (1 thread, and one process per core) against the batched backend on
the device, scores the same tree with the CPU reference and with the device at the spec's
settings and at 30 and 100 ms of padding, and prints one table. `--device cpu` runs the same
checks on a CPU node. `benchmarks/gpu_check.sh` installs fdbu and runs this.
"""
from __future__ import annotations

import numpy as np

from fdbu.common.device import allowed_cores, describe
from fdbu.metrics.stats import Bootstrap
from fdbu.common.atomic import dumps
from fdbu.scoring.unified import samples_jsonl
from fdbu.scoring.pipeline import score_path
from fdbu.vad import SileroSettings, SpeechDetector

from .common import Timer, captures, jobs, load, machine, parse
from .throughput import reference_per_core


def main() -> None:
    args, work = parse(__doc__, files=120)
    rows = [("machine", machine()), ("load before", load())]
    det = SpeechDetector(backend="batched", device=args.device, cache=False, cache_dir=work / "cache", verify=0)
    cal = det.calibration(force=True)
    rows += [("device", describe(cal.identity["device"])),
             ("calibration: largest deviation", f"{cal.deviation:.2e} over {cal.windows} windows"),
             ("calibration: guard margin", f"{cal.margin:.2e} ({cal.seconds:.1f} s)")]
    tree = captures(work, args.files)
    js = jobs(tree)
    audio_s = sum(j.samples for j in js) / 16000
    det.segments(js[:2])  # warm the device path outside the timing
    with Timer() as t_ref:
        want = [s.tolist() for s in SpeechDetector(backend="reference", cache=False).segments(js)]
    cores = allowed_cores()
    got_per_core, t_cores = reference_per_core(js, cores)
    timed = SpeechDetector(backend="batched", device=args.device, cache=False, cache_dir=work / "cache")
    with Timer() as t_dev:
        got = [s.tolist() for s in timed.segments(js)]
    rows += [(f"VAD, {args.files} captures ({audio_s:.0f} s)", "audio s per s"),
             ("  CPU reference, 1 thread", f"{audio_s / t_ref.s:.0f}"),
             (f"  CPU reference, {cores} processes", f"{audio_s / t_cores:.0f}"),
             (f"  batched on {args.device}", f"{audio_s / t_dev.s:.0f} ({timed.stats.recomputed} recomputed by the "
                                              f"guard, {timed.stats.verified} verified)"),
             ("  ratio to the 1-thread / all-core reference", f"{t_ref.s / t_dev.s:.1f}x / {t_cores / t_dev.s:.1f}x"),
             ("  segments identical", "yes" if got == want == got_per_core else "NO")]
    boot = Bootstrap()
    thresholds = [0.5] + list(np.random.default_rng(11).uniform(0.3, 0.7, 2).round(3))
    for thr, pad in zip(thresholds, (0, 30, 100)):
        settings = SileroSettings(threshold=float(thr), speech_pad_ms=pad)
        outs = []
        for backend, device in (("reference", "cpu"), ("batched", args.device)):
            scored = score_path(tree, SpeechDetector(settings, backend=backend, device=device, cache=False,
                                                     cache_dir=work / "cache"), boot)
            outs.append((dumps(scored.unified), samples_jsonl(scored.rows)))
        rows.append((f"unified.json, threshold {thr}, pad {pad} ms: {args.device} vs CPU reference",
                     "byte-identical" if outs[0] == outs[1] else "DIFFERENT"))
    width = max(len(k) for k, _ in rows)
    print("\n".join(f"{k:<{width}}  {v}" for k, v in rows))


if __name__ == "__main__":
    main()
