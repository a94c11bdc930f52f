"""Smooth turn-taking (candor_turn_taking).

E = turn_taking.json[0].timestamp[0]. Any onset before E is an early start, so talking
through the end of the user's turn never buys a short latency (clarification 7).
"""
from __future__ import annotations

import numpy as np

from ..kernels import EARLY_START, INF, NO_RESPONSE, RESPONSE, turn_taking_outcomes
from ..timebase import US_PER_S, seconds
from .flat import column, flatten
from .stats import Bootstrap, latency_quantiles, share

OUTCOMES = {EARLY_START: "early_start", RESPONSE: "response", NO_RESPONSE: "no_response"}
WITHIN_S = (1, 2, 5)

METRICS = {
    "early_start_rate": ("share", "lower", "early_start samples"),
    **{f"response_rate_{k}s": ("share", "higher", f"response samples with a latency of at most {k} s") for k in WITHIN_S},
    "no_response_rate": ("share", "lower", "no_response samples"),
    "response_latency_s": ("latency_quantiles", "lower",
                           "Median with its interval, and p90, of the latency; a sample without a response never responds"),
}


def components(samples) -> dict[str, np.ndarray]:
    ws, woff = flatten([s.word_start for s in samples])
    E = column([s.E_us for s in samples])
    outcome, latency = turn_taking_outcomes(ws, woff, E)
    return {"outcome": outcome, "latency_us": latency, "E_us": E, "T_us": column([s.T_us for s in samples])}


def rows(samples, c) -> list[dict]:
    out = []
    for i, s in enumerate(samples):
        lat = int(c["latency_us"][i])
        out.append({"T_s": seconds(s.T_us), "E_s": seconds(s.E_us), "observable_s": seconds(s.T_us - s.E_us),
                    "words": len(s.word_start),
                    "first_word_s": seconds(int(s.word_start.min())) if len(s.word_start) else None,
                    "outcome": OUTCOMES[int(c["outcome"][i])], "latency_s": None if lat == INF else seconds(lat)})
    return out


def response_shares(outcome, latency_us, n, *, unknown, selected) -> dict:
    """response_rate_ks and no_response_rate: shared by turn-taking and interruption."""
    out = {}
    for k in WITHIN_S:
        hits = int(np.count_nonzero((outcome == RESPONSE) & (latency_us <= k * US_PER_S)))
        out[f"response_rate_{k}s"] = share(hits, n, unknown=unknown, selected=selected, better="higher")
    out["no_response_rate"] = share(int(np.count_nonzero(outcome == NO_RESPONSE)), n, unknown=unknown,
                                    selected=selected, better="lower")
    return out


def aggregate(c, *, selected: int, ineligible: int, boot: Bootstrap) -> tuple[dict, dict]:
    outcome, latency = c["outcome"], c["latency_us"]
    n = len(outcome)
    metrics = {"early_start_rate": share(int(np.count_nonzero(outcome == EARLY_START)), n, unknown=ineligible,
                                         selected=selected, better="lower")}
    metrics.update(response_shares(outcome, latency, n, unknown=ineligible, selected=selected))
    metrics["response_latency_s"] = latency_quantiles(latency, boot)
    extra = {"outcomes": {name: int(np.count_nonzero(outcome == code)) for code, name in OUTCOMES.items()},
             "min_observable_s": seconds(int((c["T_us"] - c["E_us"]).min())) if n else None}
    return metrics, extra
