"""Shares, pooled ratios and latency quantiles: how per-sample components become numbers.

Every metric record says whether higher or lower is better (`better`), its value,
its interval and its count. Quantiles follow the spec's rule: Q(q) is the
ceil(qN)-th smallest value, no interpolation, with +infinity reported as not reached.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from ..errors import FdbuError
from ..config.settings import NOT_REACHED, RESAMPLES, SEED  # NOT_REACHED: one spelling, used here and re-exported
from ..kernels import INF, ranked, resample_ranked, resample_ratios
from ..common.timebase import seconds

Z_975 = 1.959963984540054
MEDIAN, P90 = Fraction(1, 2), Fraction(9, 10)
CI_LO, CI_HI = Fraction(1, 40), Fraction(39, 40)
INDEX_BYTES = 4 * 2**30  # the resample index matrix of one metric, refused beyond this (not a MemoryError)
BLOCK_BYTES = 8 * 2**20  # the resample indices the metrics hold at once (Bootstrap.blocks)


@dataclass(frozen=True)
class Bootstrap:
    resamples: int = RESAMPLES
    seed: int = SEED

    def _check(self, n: int) -> None:
        """Refused with the numbers beyond INDEX_BYTES of resample indices in all: the work (and a figure's bands,
        resamples x values) grows with them, even though the metrics hold them a block at a time."""
        need = 8 * self.resamples * n  # int64 indices
        if need > INDEX_BYTES:
            raise FdbuError("config", None, f"bootstrap.resamples={self.resamples} over {n} samples needs "
                            f"{need / 2**30:.1f} GiB of resample indices (at most {INDEX_BYTES / 2**30:.0f} GiB): "
                            "use fewer resamples")

    def indices(self, n: int) -> np.ndarray:
        """Clarification 10: a fresh default_rng(seed) per metric, rows are resamples."""
        self._check(n)
        return np.random.default_rng(self.seed).integers(0, n, size=(self.resamples, n))

    def blocks(self, n: int):
        """`indices(n)` a block of rows at a time (at most BLOCK_BYTES), drawn from one generator: the same numbers
        (PCG64 keeps its half-used 32-bit draw in its state across calls; tests/test_stats.py checks it), so the
        resample indices a metric holds do not grow with resamples x samples."""
        self._check(n)
        rng, rows = np.random.default_rng(self.seed), max(1, BLOCK_BYTES // (8 * max(n, 1)))
        for start in range(0, self.resamples, rows):
            yield rng.integers(0, n, size=(min(rows, self.resamples - start), n))

    def over(self, n: int, kernel):
        """kernel(indices) over every block, the results joined as one call over `indices(n)` would give them (an
        array, or a tuple of arrays such as kernels.Resampled)."""
        parts = [kernel(idx) for idx in self.blocks(n)]
        if isinstance(parts[0], np.ndarray):
            return np.concatenate(parts)
        return type(parts[0])(*(np.concatenate(field) for field in zip(*parts)))


def rank(q: Fraction, n: int) -> int:
    """ceil(qN) in exact arithmetic (so 0.5 * 7 never becomes 3.4999...)."""
    return max(1, math.ceil(q * n))


def percentile_interval(ordered: np.ndarray) -> list[float]:
    """The 95% percentile interval of sorted resampled values: the ceil(K/40)-th and ceil(39K/40)-th smallest."""
    return [float(ordered[rank(CI_LO, len(ordered)) - 1]), float(ordered[rank(CI_HI, len(ordered)) - 1])]


def wilson(k: int, n: int) -> list[float] | None:
    """95% Wilson score interval with endpoints exactly 0 at k = 0 and exactly 1 at k = n."""
    if n == 0:
        return None
    p = k / n
    z2 = Z_975 * Z_975
    denom = 1.0 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = Z_975 * math.sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n)) / denom
    lo = 0.0 if k == 0 else max(0.0, centre - half)
    hi = 1.0 if k == n else min(1.0, centre + half)
    return [lo, hi]


def share(k: int, n: int, *, unknown: int, selected: int, better: str) -> dict:
    """A share of samples, its Wilson interval, and its bounds over all selected samples."""
    return {
        "kind": "share",
        "better": better,
        "value": k / n if n else None,
        "interval": wilson(k, n),
        "count": k,
        "n": n,
        "selected_bounds": [k / selected, (k + unknown) / selected] if selected else None,
    }


def _time(us: int):
    return NOT_REACHED if us == INF else seconds(int(us))


def pooled_ratio(num: np.ndarray, den: np.ndarray, boot: Bootstrap, *, better: str, microseconds: bool = False) -> dict:
    """sum(num) / sum(den) with a percentile bootstrap over whole samples.

    Resamples whose denominator is 0 are skipped. With `microseconds`, the reported
    totals are seconds (integer microseconds / 1e6); the ratio is of the integer sums.
    """
    n = len(num)
    total_num, total_den = int(num.sum()), int(den.sum())
    interval, kept = None, 0
    if n:
        resampled = boot.over(n, lambda idx: resample_ratios(num, den, idx))
        kept_values = np.sort(resampled.values[resampled.kept])
        kept = len(kept_values)
        if kept:
            interval = percentile_interval(kept_values)
    return {
        "kind": "pooled_ratio",
        "better": better,
        "value": total_num / total_den if total_den else None,
        "interval": interval,
        "count": n,
        "numerator": seconds(total_num) if microseconds else total_num,
        "denominator": seconds(total_den) if microseconds else total_den,
        "resamples_kept": kept,
    }


def latency_quantiles(latency_us: np.ndarray, boot: Bootstrap, *, better: str = "lower") -> dict:
    """`value` is the median, with a bootstrap interval, plus p90; INF (never) sorts last and reads 'not reached'."""
    n = len(latency_us)
    record: dict[str, Any]
    record = {"kind": "latency_quantiles", "better": better, "statistic": "median", "value": None, "interval": None,
              "p90": None, "count": n, "observed": int(np.count_nonzero(latency_us != INF))}
    if n:
        values = np.ascontiguousarray(latency_us, dtype=np.int64)
        medians = np.sort(boot.over(n, lambda idx: resample_ranked(values, idx, rank(MEDIAN, n))))
        reps = len(medians)
        record["value"] = _time(ranked(values, rank(MEDIAN, n)))
        record["interval"] = [_time(medians[rank(CI_LO, reps) - 1]), _time(medians[rank(CI_HI, reps) - 1])]
        record["p90"] = _time(ranked(values, rank(P90, n)))
    return record
