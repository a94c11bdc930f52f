"""Percentile bootstrap over whole samples, re-aggregating per-sample components.

The caller draws `idx = numpy.random.default_rng(0).integers(0, n, size=(2000, n))`
(docs: Definition 10); row r of idx is resample r. The paired kernels resample pairs:
row r picks the same samples from system A and system B, and each resample gives B's
statistic minus A's (docs: Comparing systems).
"""
import numpy as np
from numba import njit

from .results import INF, Resampled  # INF: +infinity (never); -INF is -infinity


@njit(cache=True)
def resample_ratios(num, den, idx):
    """Pooled ratio sum(num)/sum(den) of each resample; kept[r] is False when sum(den) is 0."""
    reps = idx.shape[0]
    out = np.zeros(reps, np.float64)
    kept = np.zeros(reps, np.bool_)
    for r in range(reps):
        a = 0
        b = 0
        for j in range(idx.shape[1]):
            a += num[idx[r, j]]
            b += den[idx[r, j]]
        if b != 0:
            out[r] = a / b
            kept[r] = True
    return Resampled(out, kept)


@njit(cache=True)
def ranked(values, rank):
    """The rank-th smallest value (1-based): the spec's quantile rule, no interpolation."""
    return np.sort(values)[rank - 1]


@njit(cache=True)
def resample_ranked(values, idx, rank):
    """The rank-th smallest of each resample of `values` (int64, INF for never): the values are sorted once, and
    each resample counts how often it drew each sample and walks the sorted order until `rank` draws are passed
    (linear per resample, not a sort; the same value as sorting the resample)."""
    reps = idx.shape[0]
    order = np.argsort(values, kind="mergesort")
    out = np.empty(reps, values.dtype)
    counts = np.zeros(len(values), np.int64)
    for r in range(reps):
        for j in range(idx.shape[1]):
            counts[idx[r, j]] += 1
        passed = 0
        for i in order:
            passed += counts[i]
            if passed >= rank:
                out[r] = values[i]
                break
        for j in range(idx.shape[1]):
            counts[idx[r, j]] = 0
    return out


@njit(cache=True)
def paired_ratio_differences(num_a, den_a, num_b, den_b, idx):
    """B's pooled ratio minus A's over each resample of pairs (the same rows of `idx` for both); kept[r]
    is False when either denominator is 0. A share is the pooled ratio of its hits over denominators of 1."""
    a = resample_ratios(num_a, den_a, idx)
    b = resample_ratios(num_b, den_b, idx)
    kept = a.kept & b.kept
    out = np.where(kept, b.values - a.values, 0.0)
    return Resampled(out, kept)


@njit(cache=True)
def ranked_difference(a, b):
    """b - a of two order statistics (int64 microseconds, INF for never): +INF when only b is INF, -INF when
    only a is; (0, False) when both are (undefined)."""
    if a == INF and b == INF:
        return 0, False
    if b == INF:
        return INF, True
    if a == INF:
        return -INF, True
    return b - a, True


@njit(cache=True)
def paired_ranked_differences(a, b, idx, rank):
    """B's rank-th smallest minus A's over each resample of pairs (int64, +-INF as in `ranked_difference`);
    a resample where both are INF is a tie, difference 0: every resample is kept (docs: How compare decides)."""
    ra = resample_ranked(a, idx, rank)
    rb = resample_ranked(b, idx, rank)
    out = np.zeros(len(ra), np.int64)
    kept = np.ones(len(ra), np.bool_)
    for r in range(len(ra)):
        out[r], _ = ranked_difference(ra[r], rb[r])
    return Resampled(out, kept)
