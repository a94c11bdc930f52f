"""Throughput of speech detection and scoring, several ways of doing the same work in one run.

    python -m benchmarks.throughput [--files 200] [--busy 0|1] [--skip vad,identical,score,scale]
                                    [--scaling 100,1000,5000] [--device cpu] [--workdir DIR]

1. VAD, four ways on the same N synthetic interruption captures (20-30 s each, no cache):
   the reference backend on 1 thread (silero-vad as it runs), the reference backend as a user
   would spread it over the machine (one process per core, files split evenly), and the
   batched backend on 1 thread and on every core. Ratios per core (1 thread each) and per
   machine (all cores each); segments identical on every file; the sentinel's cost (the
   default vad.verify=auto against vad.verify=0). With --busy K, K other processes spin on a
   core each for the whole run (a shared node), and the batched row with the default thread
   choice (the free cores) is added.
2. Identical output: the same tree scored with the reference and the batched backend at
   vad.speech_pad_ms 0, 30 and 100 and random thresholds: unified.json byte-identical.
3. Scoring alone: a full-size tree (727 samples) scored from cached speech probabilities.
4. Scaling: batched VAD on 100, 1000 and 5000 captures, each in its own process: wall time
   and peak memory (max RSS).
"""
from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from fdbu.common.device import allowed_cores, free_cores
from fdbu.metrics.stats import Bootstrap
from fdbu.scoring.unified import write
from fdbu.scoring.pipeline import score_path
from fdbu.synth import synthesize
from fdbu.vad import SileroSettings, SpeechDetector

from .common import Timer, captures, jobs, load, machine, parse


def _reference_chunk(chunk):
    return [s.tolist() for s in SpeechDetector(backend="reference", cache=False).segments(chunk)]


def _warm(_):
    _ = SpeechDetector(backend="reference", cache=False).silero.model  # import torch, load the model
    return os.getpid()


def reference_per_core(js, cores: int):
    """One process per core, files dealt round-robin, as a user would parallelise silero-vad."""
    with ProcessPoolExecutor(max_workers=cores) as pool:
        list(pool.map(_warm, range(cores)))  # start and load every worker outside the timing
        chunks = [js[k::cores] for k in range(cores)]
        with Timer() as t:
            parts = list(pool.map(_reference_chunk, chunks))
    out = [None] * len(js)
    for k, part in enumerate(parts):
        out[k::cores] = part
    return out, t.s


def spinners(n: int) -> list[subprocess.Popen]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def vad_compare(work: Path, n: int, device: str, busy: int) -> None:
    js = jobs(captures(work, n))
    audio_s = sum(j.samples for j in js) / 16000
    cores = allowed_cores()
    print(f"[vad] {n} captures, {audio_s:.0f} s of audio; {cores} cores; {busy} busy processes; {load()}")
    # warm-up outside the timing: the model, the batched weights, numba, the calibration
    for threads in (1, cores):
        SpeechDetector(backend="batched", device=device, cache=False, threads=threads, verify=0).segments(js[:2])
    spin = spinners(busy)
    try:
        rows = {}
        ref = SpeechDetector(backend="reference", cache=False)
        with Timer() as t:
            want = [s.tolist() for s in ref.segments(js)]
        rows["reference, 1 thread"] = (t.s, 1, want, None)
        got, secs = reference_per_core(js, cores)
        rows[f"reference, {cores} processes"] = (secs, cores, got, None)
        choices = [1, cores] + ([None] if busy else [])
        for threads in choices:
            det = SpeechDetector(backend="batched", device=device, cache=False, threads=threads, verify=0)
            with Timer() as t:
                got = [s.tolist() for s in det.segments(js)]
            label = f"batched ({device}), " + (f"{threads} thread{'s' if threads > 1 else ''}" if threads
                                                else f"free cores ({det.threads})")
            rows[label] = (t.s, threads or det.threads, got, det.stats)
        # the sentinel's cost: 3 runs each way, alternating, medians (one run of each moves with the load)
        plain, auto = [], []
        for _ in range(3):
            for verify, times in ((0, plain), ("auto", auto)):
                det = SpeechDetector(backend="batched", device=device, cache=False, threads=cores, verify=verify)
                with Timer() as t:
                    det.segments(js)
                times.append(t.s)
        sentinel = (float(np.median(auto)), float(np.median(plain)), det.stats)
    finally:
        for p in spin:
            p.kill()
    print(f"  {'way':<32} {'wall s':>8} {'audio s/s':>10} {'per core':>9}  identical  guard")
    for label, (secs, used, got, stats) in rows.items():
        guard = f"{stats.recomputed} recomputed" if stats else ""
        print(f"  {label:<32} {secs:8.2f} {audio_s / secs:10.0f} {audio_s / secs / used:9.0f}  "
              f"{'yes' if got == want else 'NO':<9}  {guard}")
    r1, rn = rows["reference, 1 thread"][0], rows[f"reference, {cores} processes"][0]
    b1 = rows[f"batched ({device}), 1 thread"][0]
    bn = rows[f"batched ({device}), {cores} thread{'s' if cores > 1 else ''}"][0]
    print(f"  per core (1 thread each): batched {r1 / b1:.1f}x the reference; per machine ({cores} cores each): "
          f"batched {rn / bn:.1f}x the reference")
    with_it, base, st = sentinel
    print(f"  sentinel (vad.verify=auto: {st.verified} files verified, largest deviation {st.verify_ratio:.2f} of "
          f"the margin): its own time {st.verify_seconds:.2f} s ({100 * st.verify_seconds / with_it:.0f}% of the run); "
          f"median of 3 runs {with_it:.2f} s against {base:.2f} s with vad.verify=0, {100 * (with_it - base) / base:+.0f}%")
    if det.stats.guard:
        print(f"  {det.stats.guard}")


def identical(work: Path, n: int, device: str) -> None:
    """unified.json from the reference and the batched backend, at three paddings and random thresholds."""
    tree = captures(work, n)
    boot = Bootstrap()
    thresholds = np.random.default_rng(11).uniform(0.3, 0.7, 3).round(3)
    ref_cache = work / "reference-probs"  # reference probabilities once; batched runs use no cache
    print(f"[identical] {n} captures; reference vs batched ({device}) unified.json")
    for pad, thr in zip((0, 30, 100), thresholds):
        settings = SileroSettings(threshold=float(thr), speech_pad_ms=pad)
        out = {}
        for backend in ("reference", "batched"):
            dest = work / f"identical-{backend}"
            shutil.rmtree(dest, ignore_errors=True)
            dest.mkdir()
            det = SpeechDetector(settings, backend=backend, device=device, cache=backend == "reference",
                                 cache_dir=ref_cache)
            write(score_path(tree, det, boot), dest)
            out[backend] = (dest / "unified.json").read_bytes(), det.stats.recomputed
        same = out["reference"][0] == out["batched"][0]
        print(f"  threshold {thr:.3f}, pad {pad:3d} ms: byte-identical {'yes' if same else 'NO'} "
              f"({out['batched'][1]} files recomputed by the guard)")


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
            "recomputed": det.stats.recomputed, "verified": det.stats.verified,
            "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def scaling(work: Path, sizes: list[int], device: str) -> None:
    for n in sizes:
        captures(work, n, seed=2)  # synthesize outside the measured process
        out = subprocess.run([sys.executable, "-m", "benchmarks.throughput", "--one-scale", str(n),
                              "--device", device, "--workdir", str(work)], capture_output=True, text=True, check=True)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"[scale] {r['n']} captures ({r['audio_s']:.0f} s of audio): {r['seconds']:.1f} s, "
              f"{r['audio_s'] / r['seconds']:.0f} audio s per s, peak memory {r['max_rss_mb']:.0f} MB, "
              f"{r['recomputed']} recomputed, {r['verified']} verified")


def main() -> None:
    # --skip: comma list of parts to skip (vad, identical, score, scale); --one-scale: internal, one scaling point
    args, work = parse(__doc__, files=200, scaling=(str, "100,1000,5000"), skip=(str, ""), one_scale=(int, None),
                       busy=(int, 0))
    if args.one_scale:
        print(json.dumps(_one_scale(work, args.one_scale, args.device)))
        return
    skip = set(filter(None, args.skip.split(",")))
    print(f"machine: {machine()}; free cores now {free_cores()}; workdir {work}")
    if "vad" not in skip:
        vad_compare(work, args.files, args.device, args.busy)
    if "identical" not in skip:
        identical(work, args.files, args.device)
    if "score" not in skip:
        scoring(work)
    if "scale" not in skip and args.scaling:
        scaling(work, [int(x) for x in args.scaling.split(",")], args.device)


if __name__ == "__main__":
    main()
