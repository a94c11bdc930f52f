"""Smooth turn-taking (candor_turn_taking).

E = turn_taking.json[0].timestamp[0]. Any onset before E is an early start, so talking
through the end of the user's turn never buys a short latency (docs: Definition 7).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np

from ...kernels import EARLY_START, INF, NO_RESPONSE, RESPONSE, turn_taking_outcomes
from ...common.timebase import US_PER_S, seconds, to_us
from ...common.cells import fmt
from ...metrics.base import time_marks
from ...metrics.flat import column, flatten
from ...metrics.stats import Bootstrap
from ...metrics.table import LATENCY, SHARE, Metric, aggregate as aggregate_table

OUTCOMES = {EARLY_START: "early_start", RESPONSE: "response", NO_RESPONSE: "no_response"}
WITHIN_S = (1, 2, 5)
INPUTS = ("T_s", "E_s")  # the row fields that come from the dataset, not the system


def responded_within(k: int):
    """A response with a latency of at most k seconds (docs: Definition 8)."""
    return lambda c: (c.outcome == RESPONSE) & (c.latency_us <= k * US_PER_S)


def response_metrics(over: str, population: str) -> tuple[Metric, ...]:
    """response_rate_ks, no_response_rate and response_latency_s: shared by turn-taking and interruption."""
    return (*(Metric(f"response_rate_{k}s", SHARE, "higher", over,
                     f"{population} with a response within {k} s", responded_within(k)) for k in WITHIN_S),
            Metric("no_response_rate", SHARE, "lower", over, f"{population} that are no_response",
                   lambda c: c.outcome == NO_RESPONSE, headline=True),
            Metric("response_latency_s", LATENCY, "lower", over,
                   f"Median with its interval, and p90, of the latency over {population.lower()}; a sample without "
                   "a response never responds", lambda c: c.latency_us, headline=True))


METRICS = (
    Metric("early_start_rate", SHARE, "lower", "eligible", "Eligible samples that are early_start",
           lambda c: c.outcome == EARLY_START, headline=True),
    *response_metrics("eligible", "Eligible samples"),
)


@dataclass
class Components:
    outcome: np.ndarray
    latency_us: np.ndarray
    E_us: np.ndarray
    T_us: np.ndarray


def components(samples, segments: None = None, settings: None = None) -> Components:
    """From the words alone (no speech detection, no settings group)."""
    ws, woff = flatten([s.word_start for s in samples])
    E = column([s.E_us for s in samples])
    out = turn_taking_outcomes(ws, woff, E)
    return Components(out.outcome, out.latency_us, E, column([s.T_us for s in samples]))


def rows(samples, c: Components) -> list[dict]:
    out = []
    for i, s in enumerate(samples):
        lat = int(c.latency_us[i])
        out.append({"T_s": seconds(s.T_us), "E_s": seconds(s.E_us), "observable_s": seconds(s.T_us - s.E_us),
                    "words": len(s.word_start),
                    "first_word_s": seconds(int(s.word_start.min())) if len(s.word_start) else None,
                    "outcome": OUTCOMES[int(c.outcome[i])], "latency_s": None if lat == INF else seconds(lat)})
    return out


def outcome_codes(rows: list[dict], names: dict[int, str]) -> np.ndarray:
    codes = {name: code for code, name in names.items()}
    return column([codes[r["outcome"]] for r in rows])


def latencies_us(rows: list[dict]) -> np.ndarray:
    """latency_s back to microseconds; null (no response) is INF."""
    return column([INF if r["latency_s"] is None else to_us(r["latency_s"]) for r in rows])


def from_rows(rows: list[dict], subset: str | None = None, unified: dict | None = None) -> Components:
    """The components back from unified-samples.jsonl rows (eligible ones): the inverse of `rows`."""
    return Components(outcome_codes(rows, OUTCOMES), latencies_us(rows), column([to_us(r["E_s"]) for r in rows]),
                      column([to_us(r["T_s"]) for r in rows]))


def populations(c: Components) -> dict[str, np.ndarray]:
    return {"eligible": np.ones(len(c.outcome), bool)}


def aggregate(c: Components, *, selected: int, ineligible: int, boot: Bootstrap) -> tuple[dict, dict]:
    n = len(c.outcome)
    metrics = aggregate_table(METRICS, c, populations(c), selected=selected, ineligible=ineligible, boot=boot)
    extra = {"outcomes": {name: int(np.count_nonzero(c.outcome == code)) for code, name in OUTCOMES.items()},
             "min_observable_s": seconds(int((c.T_us - c.E_us).min())) if n else None}
    return metrics, extra


ROW = {"T_s": "seconds", "E_s": "seconds", "observable_s": "seconds", "words": "count", "first_word_s": "seconds?",
       "outcome": "outcome", "latency_s": "seconds?"}


def explain(row: dict, words: list) -> tuple[str, str]:
    """(outcome, the rule that decided it in plain words), restated from the row's own fields and words."""
    starts = [w[0] for w in words]
    E, out = row["E_s"], row["outcome"]
    if out == "early_start":
        # an early start has a word before E, so the default is not taken
        early = cast(float, min((s for s in starts if s < E), default=row.get("first_word_s")))
        return out, f"early start: a word starts at {fmt(early)} s, before the turn end E = {fmt(E)} s"
    if out == "response":
        return out, (f"response: no word before E = {fmt(E)} s; the first word starts at "
                     f"{fmt(row['first_word_s'])} s, latency {fmt(row['latency_s'])} s")
    return out, f"no response: no word starts in the window (E = {fmt(E)} s to T = {fmt(row['T_s'])} s)"


marks = time_marks  # E, S and R: nothing of its own
