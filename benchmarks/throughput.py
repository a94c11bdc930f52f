"""Throughput of speech detection and scoring, two ways of doing the same work in one run.

    python -m benchmarks.throughput [--files 200] [--scaling 100,1000,5000] [--device cpu] [--workdir DIR]

1. VAD: the same N synthetic interruption captures (20-30 s each) through the reference
   backend and the batched backend (no cache): audio seconds per wall second for each,
   the ratio, files recomputed by the guard, and whether every segment is identical.
2. Scoring alone: a full-size tree (the five subsets at their v1.0 sizes, 727 samples)
   scored from cached speech probabilities, after one warm-up run.
3. Scaling: batched VAD on 100, 1000 and 5000 captures, each in its own process: wall
   time and peak memory (max RSS).
"""
from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

from fdbu.metrics.stats import Bootstrap
from fdbu.score import score_path
from fdbu.synth import synthesize
from fdbu.vad import SpeechDetector

from .common import Timer, captures, jobs, machine, parse


def vad_compare(work: Path, n: int, device: str) -> None:
    js = jobs(captures(work, n))
    audio_s = sum(j.samples for j in js) / 16000
    ref = SpeechDetector(backend="reference", cache=False)
    bat = SpeechDetector(backend="batched", device=device, cache=False)
    bat.segments(js[:2])  # load and warm the batched path outside the timing
    bat.stats.recomputed = 0
    with Timer() as tr:
        a = ref.segments(js)
    with Timer() as tb:
        b = bat.segments(js)
    same = all(x.tolist() == y.tolist() for x, y in zip(a, b))
    print(f"[vad] {n} captures, {audio_s:.0f} s of audio")
    print(f"  reference: {tr.s:.2f} s = {audio_s / tr.s:.0f} audio s per s")
    print(f"  batched ({device}): {tb.s:.2f} s = {audio_s / tb.s:.0f} audio s per s, "
          f"{bat.stats.recomputed} files recomputed by the guard")
    print(f"  ratio batched/reference: {tr.s / tb.s:.1f}x; segments identical on every file: {'yes' if same else 'NO'}")


def scoring(work: Path, repeat: int = 5) -> None:
    tree = work / "release"
    if not tree.exists():
        synthesize(tree, n="release", seed=0)
    cache = work / "cache"
    det = SpeechDetector(backend="batched", device="cpu", cache_dir=cache)
    boot = Bootstrap()
    score_path(tree, det, boot)  # warm-up: fills the probability cache, compiles nothing later
    times = []
    for _ in range(repeat):
        det = SpeechDetector(backend="batched", device="cpu", cache_dir=cache)
        with Timer() as t:
            scored = score_path(tree, det, boot)
        times.append(t.s)
    n = sum(e["counts"]["selected"] for e in scored.unified["subsets"].values())
    print(f"[score] full-size tree ({n} scored samples + 55 backchannel), probabilities cached: "
          f"best {min(times):.3f} s, median {sorted(times)[len(times) // 2]:.3f} s over {repeat} runs "
          f"({det.stats.cache_hits} cache hits, {det.stats.computed} computed)")


def _one_scale(work: Path, n: int, device: str) -> dict:
    js = jobs(captures(work, n, seed=2))
    det = SpeechDetector(backend="batched", device=device, cache=False)
    with Timer() as t:
        det.segments(js)
    return {"n": n, "audio_s": sum(j.samples for j in js) / 16000, "seconds": t.s,
            "recomputed": det.stats.recomputed,
            "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def scaling(work: Path, sizes: list[int], device: str) -> None:
    for n in sizes:
        captures(work, n, seed=2)  # synthesize outside the measured process
        out = subprocess.run([sys.executable, "-m", "benchmarks.throughput", "--one-scale", str(n),
                              "--device", device, "--workdir", str(work)], capture_output=True, text=True, check=True)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"[scale] {r['n']} captures ({r['audio_s']:.0f} s of audio): {r['seconds']:.1f} s, "
              f"{r['audio_s'] / r['seconds']:.0f} audio s per s, peak memory {r['max_rss_mb']:.0f} MB, "
              f"{r['recomputed']} recomputed")


def main() -> None:
    # --skip: comma list of parts to skip (vad, score, scale); --one-scale: internal, one scaling point
    args, work = parse(__doc__, files=200, scaling=(str, "100,1000,5000"), skip=(str, ""), one_scale=(int, None))
    if args.one_scale:
        print(json.dumps(_one_scale(work, args.one_scale, args.device)))
        return
    skip = set(filter(None, args.skip.split(",")))
    print(f"machine: {machine()}; workdir {work}")
    if "vad" not in skip:
        vad_compare(work, args.files, args.device)
    if "score" not in skip:
        scoring(work)
    if "scale" not in skip and args.scaling:
        scaling(work, [int(x) for x in args.scaling.split(",")], args.device)


if __name__ == "__main__":
    main()
