"""Percentile bootstrap over whole samples, re-aggregating per-sample components.

The caller draws `idx = numpy.random.default_rng(0).integers(0, n, size=(2000, n))`
(README: Definition 10); row r of idx is resample r.
"""
from typing import NamedTuple

import numpy as np
from numba import njit


class Resampled(NamedTuple):
    values: np.ndarray  # the pooled ratio of each resample
    kept: np.ndarray    # False where the resample's denominator is 0 (skipped)


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
    """The rank-th smallest of each resample of `values` (int64, INF for never)."""
    reps = idx.shape[0]
    out = np.empty(reps, values.dtype)
    buf = np.empty(idx.shape[1], values.dtype)
    for r in range(reps):
        for j in range(idx.shape[1]):
            buf[j] = values[idx[r, j]]
        out[r] = ranked(buf, rank)
    return out
