"""User interruption (synthetic_user_interruption).

S and R come from interrupt.json; Silero segments of the whole output.wav say whether
the model was speaking at S (exercised) and whether speech carried over R. Every metric
but exercised_rate is over exercised samples; a not_exercised sample is an unknown
outcome in their selected bounds.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np

from ...kernels import INF, NO_RESPONSE, NOT_EXERCISED, RESPONSE, SPEAKING_AT_END, InterruptionOutcomes, interruption_outcomes
from ...common.timebase import seconds, to_us
from ...common.cells import fmt
from ...metrics.base import Swept, time_marks
from ...metrics.flat import column, flatten
from ...metrics.stats import Bootstrap
from ...metrics.table import LATENCY, POOLED_RATIO, SHARE, Metric, aggregate as aggregate_table
from .turn_taking import latencies_us, outcome_codes, response_metrics

OUTCOMES = {NOT_EXERCISED: "not_exercised", SPEAKING_AT_END: "speaking_at_end", RESPONSE: "response",
            NO_RESPONSE: "no_response"}
FLAGS = ("speech_at_onset", "speech_at_end", "speech_before_onset")
INPUTS = ("T_s", "S_s", "R_s")  # the row fields that come from the dataset, not the system

METRICS = (
    Metric("exercised_rate", SHARE, "context", "eligible", "Eligible samples with speech at S",
           lambda c: c.kernel.outcome != NOT_EXERCISED),
    Metric("speaking_at_end_rate", SHARE, "lower", "exercised", "Exercised samples that are speaking_at_end",
           lambda c: c.kernel.outcome == SPEAKING_AT_END, headline=True),
    *response_metrics("exercised", "Exercised samples"),
    Metric("stop_latency_s", LATENCY, "lower", "exercised",
           "Median with its interval, and p90, of the time from S to the end of the segment covering S; "
           "a segment that runs to T has no observed stop", lambda c: c.kernel.stop_us, headline=True),
    Metric("speech_s_per_interruption_s", POOLED_RATIO, "lower", "exercised",
           "Detected speech seconds inside [S, R] over interruption seconds, pooled over exercised samples",
           lambda c: (c.kernel.speech_in_us, c.R_us - c.S_us), denominator="interruption seconds", seconds=True,
           headline=True),
    Metric("restart_rate", SHARE, "lower", "exercised", "Exercised samples with a segment starting inside (S, R)",
           lambda c: c.kernel.restarts > 0),
)


@dataclass
class Components:
    kernel: InterruptionOutcomes
    S_us: np.ndarray
    R_us: np.ndarray
    T_us: np.ndarray
    segments: list

    # the shared response metrics read these two by name
    @property
    def outcome(self) -> np.ndarray:
        return self.kernel.outcome

    @property
    def latency_us(self) -> np.ndarray:
        return self.kernel.latency_us


def components(samples, segments: list[np.ndarray] | None = None, settings: None = None) -> Components:
    """`segments[i]` is sample i's (k, 2) speech segments in microseconds (its task has speech detection: always
    given); no settings group."""
    if segments is None:
        raise ValueError("the interruption task's components need each sample's speech segments")
    ga, goff = flatten([g[:, 0] for g in segments])
    gb, _ = flatten([g[:, 1] for g in segments])
    ws, woff = flatten([s.word_start for s in samples])
    S, R, T = (column([getattr(s, f) for s in samples]) for f in ("S_us", "R_us", "T_us"))
    return Components(interruption_outcomes(ga, gb, goff, ws, woff, S, R, T), S, R, T, segments)


def rows(samples, c: Components) -> list[dict]:
    k = c.kernel
    out = []
    for i, s in enumerate(samples):
        lat, stop = int(k.latency_us[i]), int(k.stop_us[i])
        exercised = int(k.outcome[i]) != NOT_EXERCISED
        row = {"T_s": seconds(s.T_us), "S_s": seconds(s.S_us), "R_s": seconds(s.R_us),
               "observable_s": seconds(s.T_us - s.R_us), "words": len(s.word_start),
               "segments": [[seconds(int(a)), seconds(int(b))] for a, b in c.segments[i]]}
        row.update({name: bool(getattr(k, name)[i]) for name in FLAGS})
        row.update({"outcome": OUTCOMES[int(k.outcome[i])],
                    "latency_s": None if lat == INF else seconds(lat),
                    "stop_s": seconds(stop) if exercised and stop != INF else None,
                    "stop_observed": (stop != INF) if exercised else None,
                    "speech_in_interruption_s": seconds(int(k.speech_in_us[i])),
                    "interruption_s": seconds(s.R_us - s.S_us),
                    "restarts": int(k.restarts[i])})
        out.append(row)
    return out


def _stop_us(r: dict) -> int:
    """stop_s back to microseconds: -1 for a not_exercised sample, INF for an unobserved stop."""
    if r["outcome"] == OUTCOMES[NOT_EXERCISED]:
        return -1
    return to_us(r["stop_s"]) if r["stop_observed"] else INF


def from_rows(rows: list[dict], subset: str | None = None, unified: dict | None = None) -> Components:
    """The components back from unified-samples.jsonl rows (eligible ones): the inverse of `rows`."""
    flags = {name: np.array([bool(r[name]) for r in rows], bool) for name in FLAGS}
    kernel = InterruptionOutcomes(
        outcome=outcome_codes(rows, OUTCOMES), latency_us=latencies_us(rows),
        stop_us=column([_stop_us(r) for r in rows]),
        speech_in_us=column([to_us(r["speech_in_interruption_s"]) for r in rows]),
        restarts=column([int(r["restarts"]) for r in rows]), **flags)
    S, R, T = (column([to_us(r[f]) for r in rows]) for f in ("S_s", "R_s", "T_s"))
    segments = [np.array([[to_us(a), to_us(b)] for a, b in r["segments"]], np.int64).reshape(-1, 2) for r in rows]
    return Components(kernel, S, R, T, segments)


def populations(c: Components) -> dict[str, np.ndarray]:
    """Every metric but exercised_rate is over the exercised samples."""
    return {"eligible": np.ones(len(c.kernel.outcome), bool), "exercised": c.kernel.outcome != NOT_EXERCISED}


def aggregate(c: Components, *, selected: int, ineligible: int, boot: Bootstrap) -> tuple[dict, dict]:
    outcome = c.kernel.outcome
    pops = populations(c)
    metrics = aggregate_table(METRICS, c, pops, selected=selected, ineligible=ineligible, boot=boot)
    extra = {"outcomes": {name: int(np.count_nonzero(outcome == code)) for code, name in OUTCOMES.items()},
             "exercised": int(np.count_nonzero(pops["exercised"])),
             "min_observable_s": seconds(int((c.T_us - c.R_us).min())) if len(outcome) else None}
    return metrics, extra


# fdbu sweep: the console's columns (sweep.json keeps every metric), each point's counts
SWEEP = Swept(shown={"exercised_rate": "exercised", "speaking_at_end_rate": "spk@end", "response_rate_1s": "resp<=1s",
                     "response_rate_2s": "resp<=2s", "response_rate_5s": "resp<=5s", "stop_latency_s": "stop_med_s",
                     "response_latency_s": "resp_med_s", "no_response_rate": "no_resp",
                     "speech_s_per_interruption_s": "speech/int", "restart_rate": "restart"},
              counts=("exercised", *OUTCOMES.values()),
              count_labels={"not_exercised": "not_ex", "speaking_at_end": "s@end", "response": "resp",
                            "no_response": "no_r"},
              counts_of=lambda extra: {"exercised": extra["exercised"], **extra["outcomes"]})


ROW = {"T_s": "seconds", "S_s": "seconds", "R_s": "seconds", "observable_s": "seconds", "words": "count",
       "segments": "segments", "speech_at_onset": "flag", "speech_at_end": "flag", "speech_before_onset": "flag",
       "outcome": "outcome", "latency_s": "seconds?", "stop_s": "seconds?", "stop_observed": "flag?",
       "speech_in_interruption_s": "seconds", "interruption_s": "seconds", "restarts": "count"}


def _segments_around(segments: list, t: float) -> tuple[float | None, float | None]:
    """The latest segment end at or before t and the earliest start after it."""
    ends = [b for a, b in segments if b <= t]
    starts = [a for a, b in segments if a > t]
    return (max(ends) if ends else None), (min(starts) if starts else None)


def _covering(segments: list, t: float, strict_start: bool = False):
    return next(((a, b) for a, b in segments if (a < t if strict_start else a <= t) and t < b), None)


def explain(row: dict, words: list) -> tuple[str, str]:
    """(outcome, the rule that decided it in plain words), restated from the row's own fields and words."""
    starts = [w[0] for w in words]
    S, R, segs = row["S_s"], row["R_s"], row["segments"]
    out = row["outcome"]
    if out == "not_exercised":
        end, start = _segments_around(segs, S)
        near = ("no speech segment at all" if not segs else
                f"nearest segments end {'(none before)' if end is None else fmt(end)} and start "
                f"{'(none after)' if start is None else fmt(start)}")
        return out, f"not exercised: no speech segment covers S = {fmt(S)} s; {near}"
    a, b = _covering(segs, S) or (None, None)
    at_s = f"speech at S = {fmt(S)} s (segment {fmt(a)}-{fmt(cast(float, b))} s covers it)" if a is not None else \
        f"speech at S = {fmt(S)} s"
    if out == "speaking_at_end":
        c = _covering(segs, R, strict_start=True)
        where = f"segment {fmt(c[0])}-{fmt(c[1])} s" if c else "a segment"
        return out, f"speaking at end: {at_s}, and {where} is still going at R = {fmt(R)} s"
    if out == "response":
        first = min((s for s in starts if s >= R), default=R + row["latency_s"])
        return out, (f"response: {at_s}, no segment runs over R = {fmt(R)} s; the first word from R on starts at "
                     f"{fmt(first)} s, latency {fmt(row['latency_s'])} s")
    return out, f"no response: {at_s}, no segment runs over R = {fmt(R)} s, and no word starts from R to T = {fmt(row['T_s'])} s"


marks = time_marks  # E, S and R: nothing of its own
