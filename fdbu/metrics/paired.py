"""Paired differences between two systems on the same samples, and the test that decides each: the math of
`fdbu compare`, as pure functions (docs: How compare decides).

Each metric's difference is B's value minus A's on the paired samples. A share's test is the exact
McNemar test and its interval the exact conditional interval that inverts it, so the two always agree.
A pooled ratio's or a latency median's interval is the percentile bootstrap of the difference over
resampled pairs (clarification 10's draw: a fresh `default_rng(seed)` per metric, row r picking the same
samples from both systems), read at mirrored ranks so that swapping A and B negates it exactly. A latency
median's test is the bootstrap p-value that inverts that interval; a pooled ratio's is the paired sign-flip
permutation test of the studentized difference (`permutation_p`, issue 54: the bootstrap p of a skewed pooled ratio
rejected a true null in 7-12% of datasets, at n = 100 too), so its interval and p can disagree. A latency median that is not reached is +infinity:
a difference is +infinity when only B's is not reached, -infinity when only A's is, a tie (0) in a
resample where both are, and n/a when both point medians are.
"""
from __future__ import annotations

import functools
import math
from fractions import Fraction
from typing import Any, cast

import numpy as np

from ..kernels import INF, paired_ranked_differences, paired_ratio_differences, ranked, ranked_difference
from ..common.timebase import seconds
from .stats import BLOCK_BYTES, CI_HI, CI_LO, MEDIAN, Bootstrap, rank
from .table import LATENCY, POOLED_RATIO, SHARE, Metric

PLUS_INF, MINUS_INF, UNDEFINED = "+inf", "-inf", "undefined"
from ..config.settings import ALPHA  # noqa: E402  compare.alpha's default
LEVEL = 0.95  # every difference interval's level (docs: How compare decides)
# a paired bootstrap test over fewer pairs does not hold its level (benchmarks/compare_calibration: a pooled ratio's
# bootstrap p rejected a true null about 10% of the time at n = 8 and 6.5% at n = 20, which is why pooled ratios
# are now tested by permutation); below it a latency median's line says "too few pairs"
MIN_BOOTSTRAP_PAIRS = 30
MCNEMAR, BOOTSTRAP, PERMUTATION = "mcnemar_exact", "paired_bootstrap", "signflip_permutation"
TEST = {SHARE: MCNEMAR, POOLED_RATIO: PERMUTATION, LATENCY: BOOTSTRAP}
NOT_REACHED_BOTH = "both medians not reached: no difference, interval or p"
TOO_FEW = "too few"  # how every reason starts where the test cannot reach alpha (too few pairs, or resamples)


FLOOR = "this metric is marked from"  # a reason's words where the metric's own floor (Metric.min_pairs) withheld it


def below_floor(m: dict) -> bool:
    """Whether a compared line has no marker only because its metric is marked from more pairs than it has (v2's
    session lines: 50), its p valid and shown."""
    return too_few(m) and FLOOR in (m.get("reason") or "")


def too_few(m: dict) -> bool:
    """Whether a compared line has no marker because its test cannot decide (the console and the forest say so)."""
    return (m.get("reason") or "").startswith(TOO_FEW)
NO_PAIRS = "no paired samples"


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Two-sided exact McNemar test: the discordant pairs split as Binomial(a_only + b_only, 1/2).

    p = min(1, 2 P(X <= min(a_only, b_only))), summed in exact rational arithmetic so the float is
    correctly rounded (the same bytes on every machine); no discordant pair gives p = 1."""
    n = a_only + b_only
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(a_only, b_only) + 1))
    return float(min(Fraction(1), Fraction(2 * tail, 2 ** n)))


def signflip_exact(d: np.ndarray) -> float:
    """Two-sided exact sign-flip (permutation) test of paired differences d in {-2, -1, 0, 1, 2}: under the null each
    nonzero d_i is as likely -d_i as d_i (the two systems exchangeable on that pair), so S = sum(d) is compared with
    S* = sum(e_i |d_i|) over the 2^m equally likely signs e of the m nonzero pairs; p = P(|S*| >= |S|), summed in
    exact integer arithmetic (the same bytes on every machine). With every |d_i| = 1 it is the exact McNemar test
    (`mcnemar_exact`), whose smallest p, 2^(1-m), it shares: the same "too few" rule. No nonzero pair gives 1.

    S* = (2 B1 - n1) + 2 (2 B2 - n2), B1 ~ Binomial(n1, 1/2), B2 ~ Binomial(n2, 1/2) independent (n1 ones, n2 twos);
    for each B2 the B1 that reach |S*| >= |S| are two runs of a prefix sum, so the sum is O(n1 + n2)."""
    mag = np.abs(np.asarray(d, np.int64))
    if mag.size and int(mag.max()) > 2:
        raise ValueError("signflip_exact takes differences in {-2, -1, 0, 1, 2}")
    n1, n2 = int(np.count_nonzero(mag == 1)), int(np.count_nonzero(mag == 2))
    t = abs(int(np.asarray(d, np.int64).sum()))
    if t == 0:
        return 1.0
    ones = [math.comb(n1, j) for j in range(n1 + 1)]
    prefix = [0]
    for c in ones:
        prefix.append(prefix[-1] + c)  # prefix[j] = sum of comb(n1, i) for i < j

    def up_to(j: int) -> int:  # sum of comb(n1, i), i <= j
        return prefix[min(max(j + 1, 0), n1 + 1)]

    tail = 0
    for j2 in range(n2 + 1):
        s2 = 2 * (2 * j2 - n2)
        # |2 j1 - n1 + s2| >= t: j1 >= ceil((n1 - s2 + t) / 2) or j1 <= floor((n1 - s2 - t) / 2)
        high = -((s2 - n1 - t) // 2)
        low = (n1 - s2 - t) // 2
        tail += math.comb(n2, j2) * (prefix[n1 + 1] - up_to(high - 1) + up_to(low))
    return float(min(Fraction(1), Fraction(tail, 2 ** (n1 + n2))))


def mcnemar_reachable(discordant: int, alpha: float) -> bool:
    """Whether the exact McNemar test can give p < alpha at all: its smallest p, all pairs one way, is 2^(1-d)
    (at alpha 0.05 that needs d >= 6 discordant pairs)."""
    return discordant > 0 and Fraction(2, 2 ** discordant) < Fraction(alpha)


def mcnemar_interval(a_only: int, b_only: int, n: int) -> list[float]:
    """The exact conditional interval of the paired difference (b_only - a_only) / n that inverts the exact McNemar
    test: the Clopper-Pearson interval [L, U] of theta, the chance that a discordant pair is one system's, mapped
    by (d / n)(2 theta - 1) with the d discordant pairs held at their count, as the test holds them (Clopper and
    Pearson 1934; R's exact2x2::mcnemar.exact reports it for the odds ratio theta / (1 - theta)). It excludes 0
    exactly when p < 0.05.

    It is computed for the smaller of the two counts and negated for the other, so swapping the systems negates it
    exactly; with no discordant pair it is [0, 0]."""
    d = a_only + b_only
    if d == 0:
        return [0.0, 0.0]
    from scipy.stats import beta  # scipy.stats takes 0.7 s to import: only a run that pairs pays it

    small = min(a_only, b_only)
    tail = (1 - LEVEL) / 2
    # beta.ppf's own quantile function, without its argument checks (shapes > 0, 0 < q < 1 hold here): ppf returns
    # _ppf(q, a, b) * scale + loc, at scale 1 and loc 0 the same float, in 21 us rather than 133 (tests check)
    lo = 0.0 if small == 0 else float(beta._ppf(tail, small, d - small + 1))
    hi = float(beta._ppf(1 - tail, small + 1, d - small))
    scale = d / n
    # the difference (other - small) / n as the discordant pairs of the smaller count go from hi to lo
    low, high = scale * (1 - 2 * hi), scale * (1 - 2 * lo)
    if a_only == b_only:
        low = -high
    return [low, high] if b_only >= a_only else [-high, -low]


def bootstrap_p(differences: np.ndarray) -> float | None:
    """Two-sided paired bootstrap p-value of the K kept resampled differences: 2 (min(k<=0, k>=0) + 1) / (K + 1),
    at most 1; never 0 (the Monte Carlo p-value of Davison and Hinkley 1997, ch. 4). A system against itself gives
    p = 1.

    With K = 2000 (the default) p < 0.05 exactly when the 95% interval (`bootstrap_interval`) excludes 0."""
    kept = len(differences)
    if kept == 0:
        return None
    low = int(np.count_nonzero(differences <= 0))
    high = int(np.count_nonzero(differences >= 0))
    return min(1.0, 2 * (min(low, high) + 1) / (kept + 1))


TIE = 1e-9  # |T*| >= |T| (1 - TIE) counts a permuted statistic as reaching the observed one: mathematically equal
#             statistics summed in another order differ in their last bits, and would otherwise be missed (a p too small)


def studentized(num_a: np.ndarray, den_a: np.ndarray, num_b: np.ndarray, den_b: np.ndarray) -> np.ndarray:
    """Per row of (rows, n) per-pair values: (R_b - R_a) / se, the difference of the pooled ratios R = sum(num) /
    sum(den) over its delta-method standard error, se^2 = sum(z_i^2) / n^2 with z_i = (num_b,i - R_b den_b,i) / mean
    (den_b) - (num_a,i - R_a den_a,i) / mean(den_a) (the linearised pooled ratios, paired; Chung and Romano 2013's
    studentization, which makes the permutation test valid for unequal ratios' spreads and denominators). A row with a
    pooled denominator of 0 is NaN; se = 0 gives 0 for no difference and +-inf for one. Sums run along each row in
    numpy's fixed order, never through BLAS."""
    n = num_a.shape[1]
    sa, da, sb, db = (x.sum(axis=1) for x in (num_a, den_a, num_b, den_b))
    ok = (da > 0) & (db > 0)
    da, db = np.where(ok, da, 1.0), np.where(ok, db, 1.0)
    ra, rb = sa / da, sb / db
    z = (num_b - rb[:, None] * den_b) / (db / n)[:, None] - (num_a - ra[:, None] * den_a) / (da / n)[:, None]
    se = np.sqrt((z * z).sum(axis=1)) / n
    d = rb - ra
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(se > 0, d / np.where(se > 0, se, 1.0), np.where(d == 0, 0.0, np.copysign(np.inf, d)))
    return np.where(ok, t, np.nan)


def permutation_p(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray], boot: Bootstrap) -> \
        tuple[float | None, int]:
    """Two-sided paired sign-flip permutation test of a pooled ratio's difference B - A (issue 54), studentized: each
    of K draws swaps the drawn pairs' (numerator, denominator) between the systems with chance 1/2, and p = (1 +
    #{|T*| >= |T|}) / (K' + 1) over the K' draws whose pooled denominators are both above 0, T the `studentized`
    difference (the Monte Carlo p-value, Davison and Hinkley 1997, 4.2.5: never 0). Exact in level when the systems
    are exchangeable on each pair, and, studentized, asymptotically valid when they are not (Chung and Romano 2013:
    a system whose denominators run larger, as v2's examiner reacts to the system). The draws are
    `numpy.random.default_rng(seed).integers(0, 2, (K, n))`, a block of rows at a time; T is computed for the
    observed pairs by the same code as for every draw. Swapping A and B negates every T* of the same draw, so p is
    unchanged. Returns (p, K'); (None, 0) when the observed difference has no denominator."""
    (an, ad), (bn, bd) = ((np.asarray(x, np.float64) for x in v) for v in (a, b))
    n = len(an)
    if not (ad.sum() > 0 and bd.sum() > 0):
        return None, 0
    observed = abs(float(studentized(an[None], ad[None], bn[None], bd[None])[0]))
    rng, rows = np.random.default_rng(boot.seed), max(1, BLOCK_BYTES // (8 * max(n, 1)))
    hits = kept = 0
    for start in range(0, boot.resamples, rows):
        f = rng.integers(0, 2, size=(min(rows, boot.resamples - start), n)).astype(bool)
        t = studentized(np.where(f, bn, an), np.where(f, bd, ad), np.where(f, an, bn), np.where(f, ad, bd))
        ok = ~np.isnan(t)
        hits += int(np.count_nonzero(np.abs(t[ok]) >= observed * (1 - TIE)))
        kept += int(np.count_nonzero(ok))
    return min(1.0, (1 + hits) / (kept + 1)), kept


def differing_pairs(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> int:
    """The pairs a swap can change: whose (numerator, denominator) differ between the systems."""
    return int(np.count_nonzero((a[0] != b[0]) | (a[1] != b[1])))


def interval_ranks(kept: int) -> tuple[int, int]:
    """The 1-based ranks of a difference interval's ends among K sorted kept resamples: r = ceil(K/40) and K + 1 - r,
    mirror ranks (clarification 10's Q(0.975), the ceil(39K/40)-th, is not the mirror of its Q(0.025)), so swapping
    the systems negates the interval exactly."""
    r = rank(CI_LO, kept)
    return r, kept + 1 - r


def expanded_ranks(kept: int, n: int) -> tuple[int, int]:
    """The 1-based mirror ranks of the expanded percentile interval (Hesterberg 2015, "What teachers should know
    about the bootstrap", 4.4) among K sorted resamples of n pairs: r = ceil(K a/2), a/2 = Phi(-sqrt(n / (n - 1))
    t_{0.975, n - 1}), and K + 1 - r, for the percentile interval's narrowness over few pairs (at n = 8 a/2 is
    0.0057, not 0.025); `interval_ranks` below 2 pairs."""
    if n < 2:
        return interval_ranks(kept)
    from scipy.stats import norm, t

    half = float(norm.cdf(-math.sqrt(n / (n - 1)) * t.ppf(0.975, n - 1)))
    r = max(1, math.ceil(half * kept))
    return r, kept + 1 - r


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


def signed(value: float | None, flag: str | None) -> float | None:
    """A difference or interval end with its flag as a float: +inf, -inf, else the value (None for none)."""
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


def resampled_differences(kind: str, a, b, n: int, boot: Bootstrap) -> np.ndarray:
    """B - A of every kept resample of the n pairs (`paired_arrays`), sorted (int64 with +-INF for latencies, a tie
    0 where both medians are not reached; else float, a resample without a denominator skipped)."""
    if n == 0:
        return np.zeros(0)
    if kind == LATENCY:
        r = boot.over(n, lambda idx: paired_ranked_differences(a, b, idx, rank(MEDIAN, n)))
    else:
        r = boot.over(n, lambda idx: paired_ratio_differences(a[0], a[1], b[0], b[1], idx))
    return np.sort(r.values[r.kept])


def sign_test(a: np.ndarray, b: np.ndarray) -> dict:
    """Which system answered first on each pair, never (INF) included: the exact two-sided sign test over the pairs
    that differ (the McNemar binomial); recorded beside a latency median, not its decision."""
    a_first, b_first = int(np.count_nonzero(a < b)), int(np.count_nonzero(b < a))
    return {"a_first": a_first, "b_first": b_first, "ties": len(a) - a_first - b_first,
            "p": mcnemar_exact(a_first, b_first)}


def paired_line(kind: str, a, b, n: int, boot: Bootstrap, alpha: float = ALPHA) -> dict:
    """B - A over n pairs (`paired_arrays`), its interval, and its test: `difference` and `test`, `p`, the test's
    counts, and `reason` (why there is no difference, or why the test cannot decide: too few pairs)."""
    latency = kind == LATENCY
    out: dict[str, Any] = {"value": None, "value_flag": None, "interval": None, "interval_flags": None,
                           "excludes_zero": None, "resamples_kept": None}
    test: dict[str, Any] = {"test": TEST[kind], "p": None, "reason": None}
    if kind == SHARE:
        hits_a, hits_b = a[0].astype(bool), b[0].astype(bool)
        test["discordant"] = {"a_only": int(np.count_nonzero(hits_a & ~hits_b)),
                              "b_only": int(np.count_nonzero(~hits_a & hits_b))}
    elif latency:
        test["sign_test"] = sign_test(a, b)
    if n == 0:
        out["value_flag"] = UNDEFINED
        test["reason"] = NO_PAIRS
        return {"difference": out, **test}
    if latency:
        r = rank(MEDIAN, n)
        point, defined = ranked_difference(ranked(a, r), ranked(b, r))
        if not defined:
            out["value_flag"] = UNDEFINED
            test["reason"] = NOT_REACHED_BOTH
            return {"difference": out, **test}
        out["value"], out["value_flag"] = _extended(point, True)
    else:
        ta, tb = int(a[1].sum()), int(b[1].sum())
        if ta and tb:  # the same floats as the two records' values
            out["value"] = int(b[0].sum()) / tb - int(a[0].sum()) / ta
        else:
            out["value_flag"] = UNDEFINED
    if kind == SHARE:
        a_only, b_only = test["discordant"]["a_only"], test["discordant"]["b_only"]
        out["interval"], out["interval_flags"] = mcnemar_interval(a_only, b_only, n), [None, None]
        test["p"] = mcnemar_exact(a_only, b_only)
        if not mcnemar_reachable(a_only + b_only, alpha):
            test["reason"] = (f"{TOO_FEW} pairs: {a_only + b_only} discordant, and the exact McNemar test cannot give "
                              f"p < {alpha:g} with fewer than {min_discordant(alpha)}")
    else:
        kept = resampled_differences(kind, a, b, n, boot)
        out["resamples_kept"] = len(kept)
        if len(kept):
            lo_rank, hi_rank = interval_ranks(len(kept))
            lo, lo_flag = _extended(kept[lo_rank - 1], latency)
            hi, hi_flag = _extended(kept[hi_rank - 1], latency)
            out["interval"], out["interval_flags"] = [lo, hi], [lo_flag, hi_flag]
        if kind == POOLED_RATIO:  # the sign-flip permutation test: its level holds at any n (issue 54)
            test["p"], draws = permutation_p(a, b, boot)
            differ = differing_pairs(a, b)
            test["differing_pairs"], test["draws_kept"] = differ, draws
            if test["p"] is None:
                test["reason"] = "no denominator: no difference"
            elif differ < min_discordant(alpha):
                test["reason"] = (f"{TOO_FEW} pairs: {differ} whose values differ between the systems; with fewer "
                                  f"than {min_discordant(alpha)} no sign pattern is rare enough for p < {alpha:g} (a "
                                  "Monte Carlo p below it is chance)")
            elif 1 / (draws + 1) >= alpha:
                test["reason"] = f"{TOO_FEW} draws: {draws} with a denominator cannot give p < {alpha:g}"
        else:
            test["p"] = bootstrap_p(kept)
            if test["p"] is None:
                test["reason"] = "no resample with a denominator"
            elif n < MIN_BOOTSTRAP_PAIRS:  # not printed: below it the p is not calibrated (issue 54, item 3)
                test["p"], test["reason"] = None, too_few_pairs(n)
            elif 2 / (len(kept) + 1) >= alpha:
                test["reason"] = f"{TOO_FEW} resamples: {len(kept)} kept cannot give p < {alpha:g}"
    if out["interval"] is not None:
        # an interval end is None only beside its +-inf flag, so signed gives a float
        lo, hi = (cast(float, signed(x, f)) for x, f in zip(out["interval"], out["interval_flags"]))
        out["excludes_zero"] = bool(lo > 0 or hi < 0)
    return {"difference": out, **test}


def too_few_pairs(n: int) -> str:
    """The reason a paired bootstrap line has no p: a latency median's bootstrap p over fewer than 30 pairs rejected a
    true null in 28-31% of datasets (benchmarks/family_calibration's degenerate cells), so it is not printed at all."""
    return (f"{TOO_FEW} pairs: {n}, and the paired bootstrap test needs at least {MIN_BOOTSTRAP_PAIRS} to hold its "
            "level (no p: below it the p is not calibrated)")


@functools.lru_cache(maxsize=None)
def min_discordant(alpha: float) -> int:
    """The fewest discordant pairs with which the exact McNemar test can give p < alpha (kept per alpha: each paired
    line asks, and the search builds exact fractions)."""
    return next(d for d in range(1, 64) if mcnemar_reachable(d, alpha))


def difference(m: Metric, ca, cb, mask: np.ndarray, boot: Bootstrap, alpha: float = ALPHA) -> dict:
    """`paired_line` of metric `m` over the paired samples in `mask` (components `ca`, `cb` over the same samples,
    in the same order); a context metric gets its difference and interval but no test."""
    n = int(np.count_nonzero(mask))
    a, b = paired_arrays(m, ca, cb, mask)
    line = paired_line(m.kind, a, b, n, boot, alpha)
    if m.min_pairs is not None and m.kind != SHARE and line["p"] is not None and line["reason"] is None \
            and n < m.min_pairs:
        line["reason"] = (f"{TOO_FEW} pairs: {n}, and {FLOOR} {m.min_pairs} pairs (its calibration, docs)")
    if m.better == "context":
        line.update({"test": None, "p": None, "reason": "context metric: no test"})
        line.pop("discordant", None)
    return line


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
    counts = np.empty((boot.resamples, len(t)), np.int32)
    r = 0
    for block in boot.blocks(n):
        for row in block:
            counts[r] = np.cumsum(np.bincount(codes[row], minlength=len(t) + 1))[:len(t)]
            r += 1
    counts.sort(axis=0)
    reps = boot.resamples
    return {"t_us": t, "F": F, "lo": counts[rank(CI_LO, reps) - 1] / n, "hi": counts[rank(CI_HI, reps) - 1] / n,
            "n": n}
