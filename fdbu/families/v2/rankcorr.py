"""Rank correlations of paired values grouped in clusters (v2: judged events in sessions), with a bootstrap over
whole clusters, without redrawing the data: a resample is a count per cluster, and both statistics are exact
functions of those counts.

Kendall's tau-b of the resampled data is (w'Cw) / sqrt((w'Aw)(w'Bw)), where w holds each cluster's count in the
resample and C, A, B sum over every ordered pair of events of clusters (k, l) the products sgn(dx)sgn(dy), |sgn(dx)|,
|sgn(dy)|: a copy of an event ties with it in both values, and adds 0 to each sum, as in the data drawn out. Spearman's
rho is Pearson's correlation of the mid-ranks, each event's mid-rank in the resample being (events below it) +
(events equal to it + 1) / 2, counted with their clusters' counts. tests/test_v2.py checks both against scipy on the
data drawn out. The work is O(events^2) once, then O(resamples x clusters^2 + resamples x events).
"""
from __future__ import annotations

import numpy as np

BLOCK = 256  # resamples (or events) at once


def _pair_sums(x: np.ndarray, y: np.ndarray, onehot: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Over ordered pairs of events, aggregated to clusters x clusters: sgn(dx)sgn(dy), |sgn(dx)|, |sgn(dy)|."""
    k = onehot.shape[1]
    concord, ax, ay = np.zeros((k, k)), np.zeros((k, k)), np.zeros((k, k))
    for a in range(0, len(x), BLOCK):
        sx, sy = np.sign(x[a:a + BLOCK, None] - x[None, :]), np.sign(y[a:a + BLOCK, None] - y[None, :])
        left = onehot[a:a + BLOCK].T
        concord += left @ (sx * sy) @ onehot
        ax += left @ np.abs(sx) @ onehot
        ay += left @ np.abs(sy) @ onehot
    return concord, ax, ay


def _below_equal(v: np.ndarray, onehot: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per event, per cluster: how many of the cluster's events lie below it, and how many equal it."""
    below, equal = np.zeros((len(v), onehot.shape[1])), np.zeros((len(v), onehot.shape[1]))
    for a in range(0, len(v), BLOCK):
        below[a:a + BLOCK] = (v[None, :] < v[a:a + BLOCK, None]) @ onehot
        equal[a:a + BLOCK] = (v[None, :] == v[a:a + BLOCK, None]) @ onehot
    return below, equal


def finite_ranks(x: np.ndarray) -> np.ndarray:
    """+inf (never) ranked above every finite value, as one value: its rank is all a rank correlation reads."""
    if not np.isinf(x).any():
        return x
    top = np.max(x[np.isfinite(x)], initial=0.0) + 1.0
    return np.where(np.isinf(x), top, x)


def correlations(x: np.ndarray, y: np.ndarray, cluster: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """(tau-b, rho) for each row of `counts` (resamples x clusters: each cluster's count), nan where a statistic is
    undefined (every value of x, or of y, tied). `cluster[i]` is event i's cluster, 0 .. clusters - 1."""
    x, y = finite_ranks(np.asarray(x, float)), np.asarray(y, float)
    k = counts.shape[1]
    onehot = np.zeros((len(x), k))
    onehot[np.arange(len(x)), cluster] = 1.0
    concord, ax, ay = _pair_sums(x, y, onehot)
    (bx, ex), (by, ey) = _below_equal(x, onehot), _below_equal(y, onehot)
    out = np.full((len(counts), 2), np.nan)
    for r in range(0, len(counts), BLOCK):
        w = counts[r:r + BLOCK].astype(float)
        num = ((w @ concord) * w).sum(1)
        den = np.sqrt(((w @ ax) * w).sum(1) * ((w @ ay) * w).sum(1))
        with np.errstate(invalid="ignore", divide="ignore"):
            out[r:r + BLOCK, 0] = np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)
        rx, ry = w @ bx.T + (w @ ex.T + 1) / 2, w @ by.T + (w @ ey.T + 1) / 2  # resamples x events
        weight = w[:, cluster]
        total = np.maximum(weight.sum(axis=1, keepdims=True), 1)
        mx, my = (weight * rx).sum(1, keepdims=True) / total, (weight * ry).sum(1, keepdims=True) / total
        cov = (weight * (rx - mx) * (ry - my)).sum(1)
        vx, vy = (weight * (rx - mx) ** 2).sum(1), (weight * (ry - my) ** 2).sum(1)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[r:r + BLOCK, 1] = np.where((vx > 0) & (vy > 0), cov / np.sqrt(vx * vy), np.nan)
    return out
