"""A metric is declared once, in its task's table; one function turns the declarations into records.

Each `Metric` says its kind (a share of samples, a pooled ratio, or latency quantiles), which
direction is better, the samples it is computed and resampled over (`over`: the eligible
samples, or for interruption the exercised ones), what its denominator counts, and how to
read its per-sample values from the task's components. Everything else follows from that:
`aggregate` computes every record, unknown outcomes in the selected bounds are the
ineligible samples plus the eligible ones outside `over` (docs: Denominators), and the
console report, unified.json, the sweep and comparisons read the same table.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .stats import Bootstrap, latency_quantiles, pooled_ratio, share

SHARE, POOLED_RATIO, LATENCY = "share", "pooled_ratio", "latency_quantiles"
KINDS = (SHARE, POOLED_RATIO, LATENCY)
BETTER = ("lower", "higher", "context")


@dataclass(frozen=True)
class Metric:
    name: str
    kind: str          # SHARE | POOLED_RATIO | LATENCY
    better: str        # lower | higher | context
    over: str          # the samples it is over (and resampled over): "eligible" or "exercised"
    description: str
    # per-sample values from the components: a bool array (share), a (numerator, denominator)
    # pair of int64 arrays (pooled ratio), or int64 microseconds with INF for never (latency)
    values: Callable
    denominator: str = "samples"  # what a pooled ratio's denominator counts
    seconds: bool = False         # a pooled ratio of microseconds, its totals reported in seconds
    # in the Holm family of `fdbu compare` (docs: How compare decides); a context metric gets no test at all,
    # a metric that is neither (a point on a curve a headline metric summarises, a diagnostic) gets an
    # unadjusted p and no marker
    headline: bool = False
    # the fewest pairs with which `fdbu compare` marks this metric (None: its test's own rule, fdbu.metrics.paired):
    # more where a simulation showed the test needed them (v2's session lines: 50, set when pooled ratios had the
    # bootstrap test)
    min_pairs: int | None = None

    def __post_init__(self):
        if self.kind not in KINDS or self.better not in BETTER:
            raise ValueError(f"metric {self.name}: kind {self.kind!r} or better {self.better!r} is not known")
        if self.headline and self.better == "context":
            raise ValueError(f"metric {self.name}: a context metric cannot be a headline metric")

    @property
    def label(self) -> str:
        """The name for people (tables, figures): response_rate_1s -> "response rate <= 1 s",
        response_latency_s -> "response latency (s)", speech_s_per_interruption_s -> "speech s per interruption s"."""
        return readable(self.name)

    @property
    def unknown(self) -> str:
        """The unknown-outcome rule of its selected bounds (shares)."""
        return "ineligible samples" + ("" if self.over == "eligible" else f" and eligible samples not {self.over}")


def readable(name: str) -> str:
    """A metric name for people: words for underscores, a rate at k seconds as "<= k s", seconds as "(s)"."""
    import re

    words = name.split("_")
    m = re.fullmatch(r"(\d+)(m?s)", words[-1])
    if m:
        return " ".join(words[:-1]) + f" <= {m.group(1)} {m.group(2)}"
    if words[-1] == "s" and len(words) > 1 and "per" not in words:
        return " ".join(words[:-1]) + " (s)"
    return " ".join(words)


def aggregate(table: tuple[Metric, ...], c, populations: dict[str, np.ndarray], *, selected: int,
              ineligible: int, boot: Bootstrap) -> dict:
    """Every declared metric's record, in the table's order.

    `populations[over]` masks the eligible samples a metric is over; a share's unknown
    outcomes are the ineligible samples plus the eligible ones outside its population.
    """
    eligible = len(next(iter(populations.values())))
    out = {}
    for m in table:
        mask = populations[m.over]
        n = int(np.count_nonzero(mask))
        if m.kind == SHARE:
            hits = int(np.count_nonzero(np.asarray(m.values(c))[mask]))
            out[m.name] = share(hits, n, unknown=ineligible + eligible - n, selected=selected, better=m.better)
        elif m.kind == POOLED_RATIO:
            num, den = m.values(c)
            out[m.name] = pooled_ratio(np.ascontiguousarray(num[mask]), np.ascontiguousarray(den[mask]), boot,
                                       better=m.better, microseconds=m.seconds)
        else:
            out[m.name] = latency_quantiles(np.ascontiguousarray(m.values(c)[mask]), boot, better=m.better)
    return out


def declared(table: tuple[Metric, ...]) -> dict[str, dict]:
    """The table as data (name -> kind, better, over, unknown, denominator, headline, description)."""
    return {m.name: {"kind": m.kind, "better": m.better, "over": m.over, "unknown": m.unknown,
                     "denominator": m.denominator, "headline": m.headline, "description": m.description}
            for m in table}
