"""Full-Duplex-Bench v2 sessions, one session at a time (docs: Definitions 77-82, 86): turns from speech segments,
the turn ends, examiner interruptions, talk-over and backchannels (`session_events`), the timing inside a judged
event's window (`event_timing`) and the 15 s bins (`session_bins`), on integer microseconds. `tests/twins.py`
restates `session_events` in plain Python; `fdbu.families.v2.metrics` pools them over a split's sessions.
"""
from __future__ import annotations

from fractions import Fraction
from typing import NamedTuple

import numpy as np

from ...kernels import INF, ranked
from .hooks import ANSWERABLE, BIN_US, DEFAULT, N_BINS, SessionSettings
from ...metrics.stats import MEDIAN, rank

BIN_FIELDS = ("answerable", "responses", "overlap_s", "observed_s", "judge_tt_s", "judge_s", "judge_if_s")
US = 1_000_000


def turns(segments: np.ndarray, gap_us: int) -> np.ndarray:
    """(k, 2) segments, sorted, merged where the silence between two is shorter than `gap_us`."""
    segs = np.asarray(segments, np.int64).reshape(-1, 2)
    if len(segs) == 0:
        return segs
    keep = np.ones(len(segs), bool)
    keep[1:] = segs[1:, 0] - segs[:-1, 1] >= gap_us  # a turn starts where the silence before it is long enough
    starts = np.flatnonzero(keep)
    ends = np.r_[starts[1:], len(segs)] - 1
    return np.stack([segs[starts, 0], segs[ends, 1]], axis=1)


def overlap_us(a: np.ndarray, b: np.ndarray) -> int:
    """Microseconds covered by both of two sorted, disjoint segment lists."""
    i = j = total = 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i, 0], b[j, 0]), min(a[i, 1], b[j, 1])
        total += max(0, int(hi) - int(lo))
        if a[i, 1] < b[j, 1]:
            i += 1
        else:
            j += 1
    return total


class Session(NamedTuple):
    """One session's events: turn ends (outcome, latency) and examiner interruptions (stop latency, resumed)."""

    examiner_turns: np.ndarray   # (k, 2)
    system_turns: np.ndarray     # (m, 2)
    end_us: np.ndarray           # each examiner turn end before T
    outcome: list                # its TURN_END_OUTCOMES name
    latency_us: np.ndarray       # response: onset - end; otherwise -1
    overlap_us: np.ndarray       # overlapped: end - max(the covering system turn's start, the examiner turn's start)
    interrupt_us: np.ndarray     # each examiner turn start inside a system turn
    stop_us: np.ndarray          # that system turn's end - the start; INF where it runs to T
    resumed: np.ndarray          # a system turn starts after the stop and before the examiner turn ends
    backchannels: int
    talk_over_us: int            # system speech inside examiner speech
    examiner_us: int             # examiner speech


def session_events(examiner: np.ndarray, system: np.ndarray, T_us: int, word_starts: np.ndarray,
                   s: SessionSettings = DEFAULT) -> Session:
    """Definitions 77-80 on one session: `examiner` and `system` are each channel's speech segments (microseconds),
    `word_starts` the system transcript's word starts."""
    A, B = turns(examiner, s.merge_gap_us), turns(system, s.merge_gap_us)
    ends, outcome, lat, ovl = [], [], [], []
    for i, (a0, a1) in enumerate(A):
        if a1 >= T_us:
            continue  # the examiner still speaks at T: no end observed
        cover = np.flatnonzero((B[:, 0] < a1) & (B[:, 1] > a1))
        ends.append(a1)
        if cover.size:
            outcome.append("overlapped")
            lat.append(-1)
            ovl.append(int(a1 - max(B[cover[0], 0], a0)))
            continue
        ovl.append(0)
        nxt = A[i + 1, 0] if i + 1 < len(A) else T_us
        limit = min(a1 + s.window_us, nxt, T_us)
        onsets = B[(B[:, 0] >= a1) & (B[:, 0] <= limit), 0]
        if onsets.size:
            outcome.append("response")
            lat.append(int(onsets[0] - a1))
        else:
            outcome.append("examiner_resumed" if nxt < a1 + s.window_us and i + 1 < len(A) else
                           "unobserved" if T_us < a1 + s.window_us else "no_response")
            lat.append(-1)
    starts, stops, resumed = [], [], []
    for a0, a1 in A:
        cover = np.flatnonzero((B[:, 0] < a0) & (B[:, 1] > a0))
        if not cover.size:
            continue
        b1 = int(B[cover[0], 1])
        starts.append(a0)
        stops.append(INF if b1 >= T_us else b1 - int(a0))
        resumed.append(bool(np.any((B[:, 0] > b1) & (B[:, 0] < a1))))
    bc = 0
    for b0, b1 in B:
        inside = np.any((A[:, 0] < b0) & (A[:, 1] > b1))
        words = int(np.count_nonzero((word_starts >= b0) & (word_starts <= b1)))
        bc += bool(inside and b1 - b0 <= s.backchannel_max_us and words <= s.backchannel_max_words)
    ex = np.asarray(examiner, np.int64).reshape(-1, 2)
    return Session(A, B, np.array(ends, np.int64), outcome, np.array(lat, np.int64), np.array(ovl, np.int64),
                   np.array(starts, np.int64), np.array(stops, np.int64), np.array(resumed, bool), bc,
                   overlap_us(ex, np.asarray(system, np.int64).reshape(-1, 2)), int((ex[:, 1] - ex[:, 0]).sum()))


def _clip(segs: np.ndarray, lo: int, hi: int) -> np.ndarray:
    segs = np.asarray(segs, np.int64).reshape(-1, 2)
    c = np.stack([np.maximum(segs[:, 0], lo), np.minimum(segs[:, 1], hi)], axis=1)
    return c[c[:, 1] > c[:, 0]]




def event_timing(examiner: np.ndarray, system: np.ndarray, s: Session, w0: int, w1: int,
                 T_us: int) -> tuple[float, ...]:
    """Definition 82: inside a judged event's window [w0, w1], the latency at the first examiner turn end in it (a
    response's latency; no response: +inf; no end there, or another outcome: nan), and the shares of the window
    where both channels speak (overlap) and where neither does (silence), over the window up to T (none at all for a
    window starting at or after T)."""
    w1 = min(w1, T_us)  # a window may end up to 1 s past T (readers.JUDGE_PAST_T_MS): read up to T
    if w1 <= w0:
        return float("nan"), float("nan"), float("nan")
    k = np.flatnonzero((s.end_us >= w0) & (s.end_us <= w1))
    latency = float("nan")
    if k.size:
        outcome = s.outcome[int(k[0])]
        latency = s.latency_us[int(k[0])] / 1e6 if outcome == "response" else \
            float("inf") if outcome == "no_response" else float("nan")
    a, b = _clip(examiner, w0, w1), _clip(system, w0, w1)
    both = overlap_us(a, b)
    either = int((a[:, 1] - a[:, 0]).sum() + (b[:, 1] - b[:, 0]).sum()) - both
    width = w1 - w0
    return latency, both / width, (width - either) / width




def session_bins(examiner: np.ndarray, system: np.ndarray, s: Session, T_us: int, judged) -> list[list]:
    """Definition 86: per 15 s bin [15k, 15k + 15) of the first 120 s, the session's answerable turn ends and
    responses ending in it, the seconds both channels speak and the seconds observed (up to T), and the judge's
    turn-taking score weighted by each event's overlap with the bin, that overlap, and the instruction-following
    score weighted the same, as score_time.py weights them (`overlap_duration`). Exact (Definition 10): counts as
    ints, seconds as Fractions of microseconds, the judge's columns from `judge_bins` (`judged`: the session's
    (window start us, end us, TT, IF) rows, or None)."""
    out = []
    judge = judge_bins([] if judged is None else judged)
    for k in range(N_BINS):
        lo, hi = k * BIN_US, (k + 1) * BIN_US
        inside = [o for e, o in zip(s.end_us, s.outcome) if lo <= e < hi]
        out.append([sum(o in ANSWERABLE for o in inside), inside.count("response"),
                    Fraction(overlap_us(_clip(examiner, lo, hi), _clip(system, lo, hi)), US),
                    Fraction(max(0, min(T_us, hi) - lo), US), *judge[k]])
    return out


def judge_bins(events) -> list[tuple[Fraction, Fraction, Fraction]]:
    """Per bin, the judge's sum of TT x overlap, the overlap in seconds (`max(0, min(w1, hi) - max(w0, lo))`) and
    the sum of IF x overlap, exact: windows in integer microseconds, each score the number the judge file holds,
    read exactly."""
    out = []
    for k in range(N_BINS):
        lo, hi = k * BIN_US, (k + 1) * BIN_US
        tt_sum, if_sum, den = Fraction(0), Fraction(0), 0
        for w0, w1, tt, if_ in events:
            ov = max(0, min(int(w1), hi) - max(int(w0), lo))
            tt_sum += Fraction(tt) * ov
            if_sum += Fraction(if_) * ov
            den += ov
        out.append((tt_sum / US, Fraction(den, US), if_sum / US))
    return out


def median_us(values: np.ndarray) -> int:
    """The spec's quantile rule at 1/2 (the ceil(N/2)-th smallest; INF sorts last); -1 for no value."""
    if not len(values):
        return -1
    return int(ranked(np.asarray(values, np.int64), rank(MEDIAN, len(values))))


