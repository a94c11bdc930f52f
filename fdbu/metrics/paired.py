"""Paired differences between two systems on the same samples: the math of `fdbu compare`, as pure functions.

Each metric's difference is B's value minus A's on the paired samples. Its interval is the
percentile bootstrap of that difference, resampling pairs with clarification 10's draw (a
fresh `default_rng(seed)` per metric, `integers(0, n, size=(resamples, n))`, row r picking
the same samples from both systems) and the spec's quantile rule. A latency median that is
not reached is +infinity, so a difference is +infinity when only B's median is not reached,
-infinity when only A's is, and undefined when both are (README: Comparing systems).
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..kernels import INF, paired_ranked_differences, paired_ratio_differences, ranked, ranked_difference
from ..timebase import seconds
from .stats import CI_HI, CI_LO, MEDIAN, Bootstrap, rank
from .table import LATENCY, POOLED_RATIO, SHARE, Metric

PLUS_INF, MINUS_INF, UNDEFINED = "+inf", "-inf", "undefined"


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Two-sided exact McNemar test: the discordant pairs split as Binomial(a_only + b_only, 1/2).

    p = min(1, 2 P(X <= min(a_only, b_only))), summed in exact rational arithmetic so the float is
    correctly rounded (the same bytes on every machine); no discordant pair gives p = 1."""
    n = a_only + b_only
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(a_only, b_only) + 1))
    return float(min(Fraction(1), Fraction(2 * tail, 2 ** n)))


def bootstrap_p(differences: np.ndarray) -> float | None:
    """Two-sided paired bootstrap p-value: 2 min(share of resampled differences <= 0, share >= 0), at most 1.

    A system against itself gives p = 1; p < 0.05 exactly when the 95% percentile interval excludes 0
    on the low side, and p <= 0.05 when it does on the high side (the ceil(qN) rule)."""
    kept = len(differences)
    if kept == 0:
        return None
    low = int(np.count_nonzero(differences <= 0))
    high = int(np.count_nonzero(differences >= 0))
    return min(1.0, 2 * min(low, high) / kept)


def holm(p: list[float | None]) -> list[float | None]:
    """Holm's step-down adjustment over the p-values given (None stays None, and does not count)."""
    order = sorted((v, k) for k, v in enumerate(p) if v is not None)
    m = len(order)
    out: list[float | None] = [None] * len(p)
    running = 0.0
    for j, (v, k) in enumerate(order):
        running = max(running, min(1.0, (m - j) * v))
        out[k] = running
    return out


def _extended(x: int | float, latency: bool) -> tuple[float | None, str | None]:
    """A difference for the output: a number, or None with its flag (+inf, -inf)."""
    if latency:
        x = int(x)
        if x == INF:
            return None, PLUS_INF
        if x == -INF:
            return None, MINUS_INF
        return seconds(x), None
    return float(x), None


def _signed(value: float | None, flag: str | None) -> float | None:
    return math.inf if flag == PLUS_INF else -math.inf if flag == MINUS_INF else value


def paired_arrays(m: Metric, ca, cb, mask: np.ndarray):
    """The paired per-sample values of both systems: (num, den) pairs for shares (den 1) and pooled ratios,
    int64 microseconds (INF for never) for latencies."""
    n = int(np.count_nonzero(mask))
    if m.kind == SHARE:
        a, b = (np.asarray(m.values(c), bool)[mask] for c in (ca, cb))
        ones = np.ones(n, np.int64)
        return (a.astype(np.int64), ones), (b.astype(np.int64), ones)
    if m.kind == POOLED_RATIO:
        return tuple(tuple(np.ascontiguousarray(x[mask], dtype=np.int64) for x in m.values(c)) for c in (ca, cb))
    return tuple(np.ascontiguousarray(np.asarray(m.values(c))[mask], dtype=np.int64) for c in (ca, cb))


def resampled_differences(m: Metric, a, b, n: int, boot: Bootstrap) -> np.ndarray:
    """B - A of every kept resample of the n pairs (`paired_arrays`), sorted (int64 with +-INF for latencies,
    else float)."""
    if n == 0:
        return np.zeros(0)
    idx = boot.indices(n)
    if m.kind == LATENCY:
        r = paired_ranked_differences(a, b, idx, rank(MEDIAN, n))
    else:
        r = paired_ratio_differences(a[0], a[1], b[0], b[1], idx)
    return np.sort(r.values[r.kept])


def difference(m: Metric, ca, cb, mask: np.ndarray, boot: Bootstrap) -> dict:
    """B - A of metric `m` over the paired samples in `mask` (components `ca`, `cb` over the same samples, in the
    same order), with its bootstrap interval and p-value."""
    n = int(np.count_nonzero(mask))
    latency = m.kind == LATENCY
    out = {"value": None, "value_flag": None, "interval": None, "interval_flags": None, "excludes_zero": None,
           "resamples_kept": 0}
    test = {"test": "mcnemar_exact" if m.kind == SHARE else "paired_bootstrap", "p": None}
    a, b = paired_arrays(m, ca, cb, mask)
    if m.kind == SHARE:
        hits_a, hits_b = a[0].astype(bool), b[0].astype(bool)
        test["discordant"] = {"a_only": int(np.count_nonzero(hits_a & ~hits_b)),
                              "b_only": int(np.count_nonzero(~hits_a & hits_b))}
    if n == 0:
        out["value_flag"] = UNDEFINED
        return {**out, **test}
    if latency:
        r = rank(MEDIAN, n)
        point, defined = ranked_difference(ranked(a, r), ranked(b, r))
        if defined:
            out["value"], out["value_flag"] = _extended(point, True)
        else:
            out["value_flag"] = UNDEFINED
    else:
        ta, tb = int(a[1].sum()), int(b[1].sum())
        if ta and tb:  # the same floats as the two records' values
            out["value"] = int(b[0].sum()) / tb - int(a[0].sum()) / ta
        else:
            out["value_flag"] = UNDEFINED
    kept = resampled_differences(m, a, b, n, boot)
    out["resamples_kept"] = len(kept)
    if len(kept):
        lo, lo_flag = _extended(kept[rank(CI_LO, len(kept)) - 1], latency)
        hi, hi_flag = _extended(kept[rank(CI_HI, len(kept)) - 1], latency)
        out["interval"], out["interval_flags"] = [lo, hi], [lo_flag, hi_flag]
        out["excludes_zero"] = bool(_signed(lo, lo_flag) > 0 or _signed(hi, hi_flag) < 0)
    if m.kind == SHARE:
        test["p"] = mcnemar_exact(test["discordant"]["a_only"], test["discordant"]["b_only"])
    else:
        test["p"] = bootstrap_p(kept)
    return {**out, **test}


def cdf_band(latency_us: np.ndarray, boot: Bootstrap) -> dict:
    """F(t), the share of the population with a latency of at most t, at each distinct finite latency, and its
    pointwise 95% percentile bootstrap band (clarification 10's draw, the ceil(qN) rule); INF never arrives."""
    v = np.asarray(latency_us, np.int64)
    n = len(v)
    t = np.unique(v[v != INF])
    if n == 0:
        return {"t_us": t, "F": np.zeros(0), "lo": np.zeros(0), "hi": np.zeros(0), "n": 0}
    codes = np.searchsorted(t, v)  # INF lands past the last value: it is never counted
    F = np.cumsum(np.bincount(codes, minlength=len(t) + 1))[:len(t)] / n
    idx = boot.indices(n)
    counts = np.empty((len(idx), len(t)), np.int32)
    for r, row in enumerate(idx):
        counts[r] = np.cumsum(np.bincount(codes[row], minlength=len(t) + 1))[:len(t)]
    counts.sort(axis=0)
    reps = len(idx)
    return {"t_us": t, "F": F, "lo": counts[rank(CI_LO, reps) - 1] / n, "hi": counts[rank(CI_HI, reps) - 1] / n,
            "n": n}
