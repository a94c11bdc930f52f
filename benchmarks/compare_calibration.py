"""`fdbu compare`'s decisions under the null: how often the marker fires when both systems are drawn from one
distribution, and how often it fires when they differ (power).

    python -m benchmarks.compare_calibration [--datasets 2000] [--power-datasets 500] [--seed 0]

Every dataset is n paired samples of one metric kind, each line decided by the code `fdbu compare` runs
(`fdbu.metrics.paired.paired_line`, then `fdbu.pairwise.decide` on a family of that one headline line):

- share: sample i has its own chance p_i ~ Beta(2r, 2(1 - r)) (mean r, the response rate), and each
  system hits with that chance, independently (so the pair is correlated through p_i);
- pooled ratio: sample i has 1 + Poisson(1.5) pauses, each intruded on with chance p_i as above;
- latency median: each system responds with chance p_i, after exp(m_i + 0.5 e) seconds, m_i ~
  log(0.8) + 0.5 N(0, 1) shared by the pair; a non-responder never responds (+infinity). At r = 0.2
  most datasets have both medians not reached (n/a, never marked).

Null: both systems as above. Power: system B's chance is p_i + delta (shares, ratios; clipped to [0, 1]),
or B's latencies are scaled by a factor. The bound in every null cell is alpha + 3 sqrt(alpha (1 - alpha) / D),
three Monte Carlo standard errors over D datasets. `p < alpha` is the raw test before the too-few-pairs rule.
"""
from __future__ import annotations

import math
import time

import numpy as np

from fdbu.pairwise import decide
from fdbu.kernels import INF
from fdbu.metrics.paired import ALPHA, paired_line
from fdbu.metrics.stats import Bootstrap
from fdbu.metrics.table import LATENCY, POOLED_RATIO, SHARE

from .calibration import arguments, bound

KINDS = (SHARE, POOLED_RATIO, LATENCY)
SIZES = (8, 20, 30, 200)
RATES = (0.2, 0.5, 0.9)
# power: (response rate, effects): B's chance + delta, or B's latencies x factor (at rate 0.5 a median sits on the
# edge of not reached, where faster answers barely move it, so latency is measured at 0.9)
EFFECTS = {SHARE: (0.5, (0.1, 0.2)), POOLED_RATIO: (0.5, (0.1, 0.2)), LATENCY: (0.9, (0.8, 0.6))}
US = 1_000_000


def _chances(rng, n: int, rate: float) -> np.ndarray:
    return rng.beta(2 * rate, 2 * (1 - rate), n)


def dataset(kind: str, n: int, rate: float, rng, effect: float | None = None):
    """One dataset's paired arrays (as `fdbu.metrics.paired.paired_arrays` gives them): null when effect is None."""
    p = _chances(rng, n, rate)
    pb = p if effect is None or kind == LATENCY else np.clip(p + effect, 0, 1)
    if kind == SHARE:
        ones = np.ones(n, np.int64)
        return ((rng.random(n) < p).astype(np.int64), ones), ((rng.random(n) < pb).astype(np.int64), ones)
    if kind == POOLED_RATIO:
        den = 1 + rng.poisson(1.5, n).astype(np.int64)
        return (rng.binomial(den, p).astype(np.int64), den), (rng.binomial(den, pb).astype(np.int64), den)
    centre = math.log(0.8) + 0.5 * rng.standard_normal(n)
    out = []
    for factor in (1.0, 1.0 if effect is None else effect):
        seconds = factor * np.exp(centre + 0.5 * rng.standard_normal(n))
        out.append(np.where(rng.random(n) < p, np.round(seconds * US).astype(np.int64), INF).astype(np.int64))
    return tuple(out)


def decided(kind: str, a, b, n: int, boot: Bootstrap, alpha: float) -> dict:
    """The line `fdbu compare` prints for these pairs, as a headline metric alone in its family."""
    line = {"headline": True, **paired_line(kind, a, b, n, boot, alpha)}
    decide([{"a": "A", "b": "B", "subsets": {"s": {"metrics": {"m": line}}}}], "baseline", alpha)
    return line


def cell(kind: str, n: int, rate: float, datasets: int, seed: int, effect: float | None = None,
         alpha: float = ALPHA, boot: Bootstrap = Bootstrap()) -> dict:
    """Marker rate, raw p < alpha rate and the n/a share over `datasets` datasets of one cell (fixed seed)."""
    rng = np.random.default_rng([seed, KINDS.index(kind), n, round(rate * 100),
                                 0 if effect is None else 1 + round(effect * 100)])
    marked = raw = na = 0
    for _ in range(datasets):
        a, b = dataset(kind, n, rate, rng, effect)
        line = decided(kind, a, b, n, boot, alpha)
        marked += line["marker"]
        raw += line["p"] is not None and line["p"] < alpha
        na += line["p"] is None
    return {"kind": kind, "n": n, "rate": rate, "effect": effect, "datasets": datasets, "marker": marked / datasets,
            "raw": raw / datasets, "na": na / datasets, "bound": bound(alpha, datasets)}


def main() -> None:
    args = arguments(__doc__)
    from .common import load as machine_load

    t0 = time.perf_counter()
    print(f"null: {args.datasets} datasets per cell, alpha {ALPHA}, bootstrap 2000 resamples; marker = Holm p < alpha "
          "(a family of one line); bound = alpha + 3 MC standard errors")
    print("| kind | n | response rate | marker rate | bound | raw p < alpha | n/a (both not reached) | ok |")
    print("|---|---|---|---|---|---|---|---|")
    rows = []
    for kind in KINDS:
        for n in SIZES:
            for rate in RATES:
                r = cell(kind, n, rate, args.datasets, args.seed)
                rows.append(r)
                print(f"| {kind} | {n} | {rate} | {r['marker']:.4f} | {r['bound']:.4f} | {r['raw']:.4f} | "
                      f"{r['na']:.3f} | {'yes' if r['marker'] <= r['bound'] else 'NO'} |", flush=True)
    null_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    print(f"\npower: {args.power_datasets} datasets per cell (share, ratio: B's chance + delta; latency: B's "
          "latencies x factor)")
    print("| kind | response rate | effect | n | marker rate |")
    print("|---|---|---|---|---|")
    for kind in KINDS:
        rate, effects = EFFECTS[kind]
        for effect in effects:
            for n in (30, 200):
                r = cell(kind, n, rate, args.power_datasets, args.seed, effect=effect)
                print(f"| {kind} | {rate} | {'x' if kind == LATENCY else '+'}{effect} | {n} | {r['marker']:.3f} |",
                      flush=True)
    power_s = time.perf_counter() - t1
    print(f"\nnull table {null_s:.0f} s, power {power_s:.0f} s; {machine_load()}")
    if any(r["marker"] > r["bound"] for r in rows):
        raise SystemExit("a null cell's marker rate is above its bound")


if __name__ == "__main__":
    main()
