"""`fdbu compare`'s decisions under the null: how often the marker fires when both systems are drawn from one
distribution, and how often it fires when they differ (power).

    python -m benchmarks.compare_calibration [--datasets 2000] [--power-datasets 500] [--seed 0]

Every dataset is n paired samples of one metric kind, each line decided by the code `fdbu compare` runs
(`fdbu.metrics.paired.paired_line`, then `fdbu.comparison.pairwise.decide` on a family of that one headline line):

- share: sample i has its own chance p_i ~ Beta(2r, 2(1 - r)) (mean r, the response rate), and each
  system hits with that chance, independently (so the pair is correlated through p_i);
- pooled ratio: sample i has 1 + Poisson(1.5) pauses, each intruded on with chance p_i as above;
- latency median: each system responds with chance p_i, after exp(m_i + 0.5 e) seconds, m_i ~
  log(0.8) + 0.5 N(0, 1) shared by the pair; a non-responder never responds (+infinity). At r = 0.2
  most datasets have both medians not reached (n/a, never marked).

Then a pooled ratio of seconds as skewed as pause intrusion (`seconds_dataset`), exchangeable and spread
differently around the same ratio, and a pooled ratio whose denominators differ between the systems
(`denominators_dataset`), at n = 8, 30, 100: the printed p (the studentized sign-flip permutation test, issue 54)
against the paired bootstrap p it replaced.

Null: both systems as above. Power: system B's chance is p_i + delta (shares, ratios; clipped to [0, 1]),
or B's latencies are scaled by a factor. The bound in every null cell is alpha + 3 sqrt(alpha (1 - alpha) / D),
three Monte Carlo standard errors over D datasets. `p < alpha` is the raw test before the too-few-pairs rule.
"""
from __future__ import annotations

import math
import time

import numpy as np

from fdbu.comparison.pairwise import decide
from fdbu.kernels import INF
from fdbu.metrics.paired import ALPHA, paired_line
from fdbu.metrics.stats import Bootstrap
from fdbu.metrics.table import LATENCY, POOLED_RATIO, SHARE

from .calibration import arguments, bound

KINDS = (SHARE, POOLED_RATIO, LATENCY)
SIZES = (8, 20, 30, 100, 200)
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


def docs_cell(r: dict) -> str:
    """A null cell as docs/guides/compare.md's calibration table prints it: the marker rate (the raw p < alpha rate),
    and for latency medians the share with no p (both not reached, or fewer than 30 pairs) where there is one
    (tests/test_compare_decisions.py reruns cells of that table and compares these texts)."""
    na = f", n/a {r['na']:.2f}" if r["kind"] == LATENCY and r["na"] > 0 else ""
    return f"{r['marker']:.3f} ({r['raw']:.3f}){na}"


def docs_table(rows: list[dict]) -> list[str]:
    """docs/guides/compare.md's calibration table from the null cells: a row per kind and n, a column per rate."""
    by = {(r["kind"], r["n"], r["rate"]): r for r in rows}
    out = ["| kind | n | " + " | ".join(f"rate {rate}: marker (raw)" for rate in RATES) + " |",
           "|---|---|" + "---|" * len(RATES)]
    out += [f"| {kind} | {n} | " + " | ".join(docs_cell(by[kind, n, rate]) for rate in RATES) + " |"
            for kind in KINDS for n in SIZES]
    return out


def denominators_dataset(n: int, rng):
    """A pooled ratio whose denominators differ between the systems (v2: the examiner reacts to the system, so one
    system meets more interruptions): A meets 1 + Poisson(5) events per sample, B 1 + Poisson(1), each stopped with
    chance 0.6: the same pooled ratio, the pairs not exchangeable."""
    ad, bd = (1 + rng.poisson(lam, n).astype(np.int64) for lam in (5, 1))
    return (rng.binomial(ad, 0.6).astype(np.int64), ad), (rng.binomial(bd, 0.6).astype(np.int64), bd)


def seconds_dataset(n: int, rng, spread: bool = False):
    """A pooled ratio of seconds, skewed as pause intrusion is (issue 54: intrusion_s_per_pause_s): sample i has
    1 + Poisson(1) pauses of U(0.5, 3) s; each system intrudes on a sample with chance p_i ~ Beta(0.4, 1.6) for a
    share of its pause time ~ Beta(0.5, 2). `spread`: B intrudes half as often, twice as deep (Beta(1, 1.5)), the
    same pooled ratio in expectation, the pairs not exchangeable."""
    pauses = 1 + rng.poisson(1.0, n)
    den = np.array([round(rng.uniform(0.5, 3.0, k).sum() * US) for k in pauses], np.int64)
    p = rng.beta(0.4, 1.6, n)

    def system(chance, depth):
        return np.where(rng.random(n) < chance, (depth * den).astype(np.int64), 0).astype(np.int64), den

    a = system(p, rng.beta(0.5, 2.0, n))
    b = system(p / 2, rng.beta(1.0, 1.5, n)) if spread else system(p, rng.beta(0.5, 2.0, n))
    return a, b


SKEWED = ("exchangeable", "spread differently", "denominators differ")  # seconds_cell's nulls


def seconds_cell(n: int, spread: bool | str, datasets: int, seed: int, alpha: float = ALPHA,
                 resamples: int = 2000) -> dict:
    """The pooled ratio of seconds under the null: the printed p (the sign-flip permutation test), the paired
    bootstrap p it replaced, and how often the bootstrap interval leaves out 0 and disagrees with the printed p."""
    from fdbu.metrics.paired import bootstrap_p, resampled_differences

    kind = spread if isinstance(spread, str) else SKEWED[int(spread)]
    rng = np.random.default_rng([seed, 99, n, SKEWED.index(kind)])
    printed = boot_p = excludes = disagree = 0
    for k in range(datasets):
        a, b = denominators_dataset(n, rng) if kind == SKEWED[2] else seconds_dataset(n, rng, kind == SKEWED[1])
        boot = Bootstrap(resamples, k)
        line = paired_line(POOLED_RATIO, a, b, n, boot, alpha)
        printed += line["p"] is not None and line["p"] < alpha
        old = bootstrap_p(resampled_differences(POOLED_RATIO, a, b, n, boot))
        boot_p += old is not None and old < alpha
        out = bool(line["difference"]["excludes_zero"])
        excludes += out
        disagree += line["p"] is not None and out != (line["p"] < alpha)
    return {"n": n, "spread": spread, "printed": printed / datasets, "bootstrap": boot_p / datasets,
            "excludes": excludes / datasets, "disagree": disagree / datasets, "bound": bound(alpha, datasets)}


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
    print("\nthe same cells as docs/guides/compare.md's calibration table prints them:")
    print("\n".join(docs_table(rows)))
    print("\npooled ratio of seconds, skewed (seconds_dataset): the printed p (sign-flip permutation) against the "
          "paired bootstrap p it replaced; the bootstrap interval's exclusion of 0 and its disagreement with p")
    print("| pairs | n | printed p < alpha | bootstrap p < alpha (replaced) | interval excludes 0 | disagree | bound | "
          "ok |")
    print("|---|---|---|---|---|---|---|---|")
    for kind in SKEWED:
        for n in (8, 30, 100):
            r = seconds_cell(n, kind, args.datasets, args.seed)
            rows.append({"marker": r["printed"], "bound": r["bound"]})
            print(f"| {kind} | {n} | {r['printed']:.4f} | "
                  f"{r['bootstrap']:.4f} | {r['excludes']:.4f} | {r['disagree']:.4f} | {r['bound']:.4f} | "
                  f"{'yes' if r['printed'] <= r['bound'] else 'NO'} |", flush=True)
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
