"""User interruption (synthetic_user_interruption).

S and R come from interrupt.json; Silero segments of the whole output.wav say whether
the model was speaking at S (exercised) and whether speech carried over R. Every metric
but exercised_rate is over exercised samples; a not_exercised sample is an unknown
outcome in their selected bounds.
"""
from __future__ import annotations

import numpy as np

from ..kernels import INF, NO_RESPONSE, NOT_EXERCISED, RESPONSE, SPEAKING_AT_END, interruption_outcomes
from ..timebase import seconds
from .flat import column, flatten
from .stats import Bootstrap, latency_quantiles, pooled_ratio, share
from .turn_taking import WITHIN_S, response_shares

OUTCOMES = {NOT_EXERCISED: "not_exercised", SPEAKING_AT_END: "speaking_at_end", RESPONSE: "response",
            NO_RESPONSE: "no_response"}

METRICS = {
    "exercised_rate": ("share", "context", "Eligible samples with speech at S"),
    "speaking_at_end_rate": ("share", "lower", "Exercised samples that are speaking_at_end"),
    **{f"response_rate_{k}s": ("share", "higher", f"Exercised samples with a response within {k} s") for k in WITHIN_S},
    "no_response_rate": ("share", "lower", "Exercised samples that are no_response"),
    "response_latency_s": ("latency_quantiles", "lower", "Median with its interval, and p90, over exercised samples"),
    "stop_latency_s": ("latency_quantiles", "lower",
                       "Median with its interval, and p90, of the time from S to the end of the segment covering S; "
                       "a segment that runs to T has no observed stop"),
    "speech_s_per_interruption_s": ("pooled_ratio", "lower",
                                    "Detected speech seconds inside [S, R] over interruption seconds, pooled over exercised samples"),
    "restart_rate": ("share", "lower", "Exercised samples with a segment starting inside (S, R)"),
}
FLAGS = ("speech_at_onset", "speech_at_end", "speech_before_onset")


def components(samples, segments: list[np.ndarray]) -> dict[str, np.ndarray]:
    """`segments[i]` is sample i's (k, 2) speech segments in microseconds."""
    ga, goff = flatten([g[:, 0] for g in segments])
    gb, _ = flatten([g[:, 1] for g in segments])
    ws, woff = flatten([s.word_start for s in samples])
    S, R, T = (column([getattr(s, f) for s in samples]) for f in ("S_us", "R_us", "T_us"))
    outcome, flags, latency, stop, speech_in, restarts = interruption_outcomes(ga, gb, goff, ws, woff, S, R, T)
    return {"outcome": outcome, "flags": flags, "latency_us": latency, "stop_us": stop, "speech_in_us": speech_in,
            "restarts": restarts, "S_us": S, "R_us": R, "T_us": T, "segments": segments}


def rows(samples, c) -> list[dict]:
    out = []
    for i, s in enumerate(samples):
        lat, stop = int(c["latency_us"][i]), int(c["stop_us"][i])
        exercised = int(c["outcome"][i]) != NOT_EXERCISED
        row = {"T_s": seconds(s.T_us), "S_s": seconds(s.S_us), "R_s": seconds(s.R_us),
               "observable_s": seconds(s.T_us - s.R_us), "words": len(s.word_start),
               "segments": [[seconds(int(a)), seconds(int(b))] for a, b in c["segments"][i]]}
        row.update({name: bool(c["flags"][i, j]) for j, name in enumerate(FLAGS)})
        row.update({"outcome": OUTCOMES[int(c["outcome"][i])],
                    "latency_s": None if lat == INF else seconds(lat),
                    "stop_s": seconds(stop) if exercised and stop != INF else None,
                    "stop_observed": (stop != INF) if exercised else None,
                    "speech_in_interruption_s": seconds(int(c["speech_in_us"][i])),
                    "interruption_s": seconds(s.R_us - s.S_us),
                    "restarts": int(c["restarts"][i])})
        out.append(row)
    return out


def aggregate(c, *, selected: int, ineligible: int, boot: Bootstrap) -> tuple[dict, dict]:
    outcome = c["outcome"]
    ex = outcome != NOT_EXERCISED
    n_eligible, n_ex = len(outcome), int(np.count_nonzero(ex))
    unknown = ineligible + (n_eligible - n_ex)
    o, lat = outcome[ex], c["latency_us"][ex]

    def ex_share(k, better):
        return share(int(k), n_ex, unknown=unknown, selected=selected, better=better)

    metrics = {
        "exercised_rate": share(n_ex, n_eligible, unknown=ineligible, selected=selected, better="context"),
        "speaking_at_end_rate": ex_share(np.count_nonzero(o == SPEAKING_AT_END), "lower"),
    }
    metrics.update(response_shares(o, lat, n_ex, unknown=unknown, selected=selected))
    metrics["response_latency_s"] = latency_quantiles(lat, boot)
    metrics["stop_latency_s"] = latency_quantiles(c["stop_us"][ex], boot)
    metrics["speech_s_per_interruption_s"] = pooled_ratio(
        np.ascontiguousarray(c["speech_in_us"][ex]), np.ascontiguousarray((c["R_us"] - c["S_us"])[ex]), boot,
        better="lower", microseconds=True)
    metrics["restart_rate"] = ex_share(np.count_nonzero(c["restarts"][ex] > 0), "lower")
    extra = {"outcomes": {name: int(np.count_nonzero(outcome == code)) for code, name in OUTCOMES.items()},
             "exercised": n_ex,
             "min_observable_s": seconds(int((c["T_us"] - c["R_us"]).min())) if n_eligible else None}
    return metrics, extra
