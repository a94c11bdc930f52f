"""`fdbu compare` on two full-size-and-more systems: loading, the paired statistics, and the figures.

    python -m benchmarks.compare [--files 1000] [--workdir DIR]

Two synthetic systems (mixed and prompt, one seed, so the same samples) with --files samples in
every subset (4 scored subsets), each scored once (not timed); then, timed: loading both scored
trees (rows parsed and checked against unified.json), every paired difference with its 2000-resample
paired bootstrap (one pair, every metric of every subset), compare.csv, and the two figures (PNG and
PDF, with the response-latency bands).
"""
from __future__ import annotations

import numpy as np

from fdbu.comparison.pairwise import compare
from fdbu.comparison.files import curves, to_csv
from fdbu.comparison.systems import load
from fdbu.kernels import INF, paired_ranked_differences, paired_ratio_differences
from fdbu.metrics.stats import Bootstrap
from fdbu.figures.forest import compare_forest
from fdbu.figures.plot import compare_latency_curves
from fdbu.scoring.unified import write
from fdbu.scoring.pipeline import score_path
from fdbu.synth import synthesize
from fdbu.vad import SpeechDetector

from .common import Timer, load as machine_load, machine, parse


def main() -> None:
    args, work = parse(__doc__, files=1000)
    trees = []
    for system in ("mixed", "prompt"):
        tree = work / f"{system}-{args.files}"
        if not (tree / "unified.json").exists():
            if not tree.exists():
                synthesize(tree, n=args.files, seed=0, system=system)
            write(score_path(tree, SpeechDetector(backend="batched", device=args.device), Bootstrap()), tree)
        trees.append(tree)
    load(trees[0], "warm-up")  # numba's compiled kernels and imports outside the timing
    compare([load(trees[0], "a"), load(trees[0], "b")])
    with Timer() as loading:
        systems = [load(t, t.name.split("-")[0]) for t in trees]
    with Timer() as stats:
        result = compare(systems)
    with Timer() as table:
        to_csv(result)
    with Timer() as figures:
        compare_latency_curves(curves(systems, result))
        compare_forest(result)
    paired = {s: e["samples"]["eligible_in_both"] for s, e in result["pairs"][0]["subsets"].items()}
    metrics = sum(len(e["metrics"]) for e in result["pairs"][0]["subsets"].values())
    print(f"machine: {machine()}; {machine_load()}")
    print(f"  {args.files} samples per subset; paired (eligible in both): {paired}; {metrics} metrics")
    print(f"  load and check both trees:        {loading.s:.2f} s")
    print(f"  paired statistics, one pair:      {stats.s:.2f} s")
    print(f"  compare.csv:                      {table.s:.2f} s")
    print(f"  figures (PNG and PDF, with bands): {figures.s:.2f} s")
    rng = np.random.default_rng(0)
    for n in (5000, 20000):  # the kernels alone, on random paired data of n samples
        idx = Bootstrap().indices(n)
        lat = [np.where(rng.random(n) < 0.2, INF, rng.integers(0, 5_000_000, n)).astype(np.int64) for _ in "ab"]
        num, den = rng.integers(0, 10, (2, n)), rng.integers(1, 10, (2, n))
        with Timer() as ratio:
            paired_ratio_differences(num[0], den[0], num[1], den[1], idx)
        with Timer() as median:
            paired_ranked_differences(lat[0], lat[1], idx, (n + 1) // 2)
        print(f"  kernels at n = {n}, 2000 resamples: ratio or share difference {ratio.s:.2f} s, "
              f"median difference {median.s:.2f} s")


if __name__ == "__main__":
    main()
