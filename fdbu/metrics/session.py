"""Full-Duplex-Bench v2 sessions: objective turn-taking timing of a whole multi-turn session (README: Definitions
75-86).

A v2 session has two channels on one clock (upstream's assumption: `combine_transcripts` sorts both channels by
start time): the examiner (input.wav, upstream's A.wav) and the system under test (output.wav, B.wav). Silero
segments both; each channel's segments closer than `session.merge_gap_s` are one *turn*. From the turns:

- every examiner turn that ends before T is a *turn end*: the system is already speaking there (`overlapped`), or
  it starts a turn within `session.window_s` and before the examiner's next turn (`response`, its latency the
  start minus the end: never 0 for an early start), or the examiner speaks again first (`examiner_resumed`), or the
  window passes (`no_response`), or T cuts the window short (`unobserved`);
- every examiner turn that starts while a system turn runs is an *examiner interruption*: the system stops when
  that turn ends (its stop latency; within `session.stop_within_s` it is a stop), and it *resumes over* the
  examiner if it starts another turn before the examiner's turn ends;
- talk-over: the system's detected speech inside the examiner's, in seconds;
- a *backchannel*: a system turn inside an examiner turn, no longer than `session.backchannel_max_s` with at most
  `session.backchannel_max_words` words of its transcript.

The arithmetic is `session_events`, one session at a time, on integer microseconds; `tests/twins.py` restates it
in plain Python. The metrics pool these over the sessions of a split, resampling whole sessions.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import List, NamedTuple

import numpy as np

from ..family import Entry, Group
from ..kernels import INF, ranked
from ..settings import MS_UP_TO_MINUTE, NOT_REACHED, check, opt, within
from ..timebase import seconds, to_us
from .base import Runs, Swept
from .paired import MINUS_INF, PLUS_INF, UNDEFINED
from .rankcorr import correlations
from .flat import column
from .stats import MEDIAN, Bootstrap, percentile_interval, rank
from .table import LATENCY, POOLED_RATIO, Metric, aggregate as aggregate_table

TASK = "session"
GROUP_KEY = "session"
TURN_END_OUTCOMES = ("response", "overlapped", "no_response", "examiner_resumed", "unobserved")
ANSWERABLE = ("response", "overlapped", "no_response")  # the turn ends the response rate is over
EXAMINER, SYSTEM = "input.wav", "output.wav"  # upstream's A.wav and B.wav
INPUTS = ()  # nothing is the dataset's alone: the examiner reacts to the system, so both channels are the run's


@dataclass(frozen=True)
class SessionSettings:
    """session.*: how turns are made and what counts as a response, a stop and a backchannel (microseconds)."""

    merge_gap_us: int = 500_000
    window_us: int = 3_000_000
    stop_within_us: int = 2_000_000
    backchannel_max_us: int = 1_000_000
    backchannel_max_words: int = 2
    offsets_ms: tuple[int, ...] = (-100, -50, 50, 100)

    KEYS = ("merge_gap", "window", "stop_within", "backchannel_max")

    @classmethod
    def of(cls, doc: dict | None) -> "SessionSettings":
        """From a unified.json's (or sweep.json's) `session` header; the defaults where there is none."""
        return cls.from_header((doc or {}).get(GROUP_KEY))

    @classmethod
    def from_header(cls, head: dict | None) -> "SessionSettings":
        head, d = head or {}, cls()
        us = {f"{k}_us": to_us(head[f"{k}_s"]) if f"{k}_s" in head else getattr(d, f"{k}_us") for k in cls.KEYS}
        return cls(**us, backchannel_max_words=int(head.get("backchannel_max_words", d.backchannel_max_words)),
                   offsets_ms=tuple(int(v) for v in head.get("offsets_ms", d.offsets_ms)))

    def header(self) -> dict:
        return {**{f"{k}_s": seconds(getattr(self, f"{k}_us")) for k in self.KEYS},
                "backchannel_max_words": self.backchannel_max_words, "offsets_ms": list(self.offsets_ms),
                "clock": CLOCK}

    def non_default(self) -> list[str]:
        d = SessionSettings().header()
        return [f"session.{k}={v}" for k, v in self.header().items() if v != d[k]]


CLOCK = ("A.wav and B.wav on one clock from their first samples: upstream's assumption (asr_batch.py's "
         "combine_transcripts sorts both channels by start time; the judge's windows are in that clock); the "
         "'offset' entry gives each latency if B were shifted against A")
DEFAULT = SessionSettings()


@dataclass
class SessionConfig:
    """session.* on the command line: the user's seconds, checked, as `SessionSettings`."""

    merge_gap_s: float = opt(seconds(DEFAULT.merge_gap_us), "v2: one channel's speech segments closer than this "
                             "(seconds) are one turn")
    window_s: float = opt(seconds(DEFAULT.window_us), "v2: a system turn starting within this many seconds after "
                          "the examiner's turn ends (and before the examiner's next) is a response")
    stop_within_s: float = opt(seconds(DEFAULT.stop_within_us), "v2: when the examiner starts while the system "
                               "speaks, a system turn ending within this many seconds is a stop")
    backchannel_max_s: float = opt(seconds(DEFAULT.backchannel_max_us), "v2: a system turn inside an examiner turn "
                                   "no longer than this (seconds) can be a backchannel")
    backchannel_max_words: int = opt(DEFAULT.backchannel_max_words, "v2: ... and with at most this many words")
    offsets_ms: List[int] = opt(list(DEFAULT.offsets_ms), "v2: the offsets (ms, B.wav shifted later against A.wav; "
                                "negative: earlier) at which each latency is given again, to show what a recording "
                                "offset between the channels could move it; at most 8, from -2000 to 2000, not 0")

    def __post_init__(self):
        within(self, "session.", merge_gap_s=MS_UP_TO_MINUTE, window_s=MS_UP_TO_MINUTE, stop_within_s=MS_UP_TO_MINUTE,
               backchannel_max_s=MS_UP_TO_MINUTE)
        check(0 <= self.backchannel_max_words <= 100, "session.backchannel_max_words", self.backchannel_max_words,
              "a whole number from 0 to 100")
        ok = len(self.offsets_ms) <= 8 and len(set(self.offsets_ms)) == len(self.offsets_ms) and all(
            type(v) is int and v != 0 and -2000 <= v <= 2000 for v in self.offsets_ms)
        check(ok, "session.offsets_ms", list(self.offsets_ms), "at most 8 different whole numbers of ms from -2000 to "
              "2000, none 0")

    def settings(self) -> SessionSettings:
        return SessionSettings(to_us(self.merge_gap_s), to_us(self.window_s), to_us(self.stop_within_s),
                               to_us(self.backchannel_max_s), int(self.backchannel_max_words),
                               tuple(sorted(int(v) for v in self.offsets_ms)))


GROUP = Group(GROUP_KEY, "Full-Duplex-Bench v2's session timing", SessionConfig, SessionSettings.from_header)


def settings_of(settings) -> SessionSettings:
    return settings if isinstance(settings, SessionSettings) else SessionSettings.of(settings)


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


JUDGED = ("latency_s", "overlap_share", "silence_share")  # the timing measured inside each judged event's window


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


BIN_US, N_BINS = 15_000_000, 8  # score_time.py's bins: 15 s over the first 120 s
BIN_FIELDS = ("answerable", "responses", "overlap_s", "observed_s", "judge_tt_s", "judge_s")


def session_bins(examiner: np.ndarray, system: np.ndarray, s: Session, T_us: int, judged) -> np.ndarray:
    """Definition 86: per 15 s bin [15k, 15k + 15) of the first 120 s, the session's answerable turn ends and
    responses ending in it, the seconds both channels speak and the seconds observed (up to T), and the judge's
    turn-taking score weighted by each event's overlap with the bin and that overlap, as score_time.py weights it
    (`overlap_duration`)."""
    out = np.zeros((N_BINS, len(BIN_FIELDS)))
    for k in range(N_BINS):
        lo, hi = k * BIN_US, (k + 1) * BIN_US
        inside = [o for e, o in zip(s.end_us, s.outcome) if lo <= e < hi]
        out[k, 0] = sum(o in ANSWERABLE for o in inside)
        out[k, 1] = inside.count("response")
        out[k, 2] = overlap_us(_clip(examiner, lo, hi), _clip(system, lo, hi)) / 1e6
        out[k, 3] = max(0, min(T_us, hi) - lo) / 1e6
        for w0, w1, tt, *_ in ([] if judged is None else judged.tolist()):
            ov = max(0.0, min(w1, hi / 1e6) - max(w0, lo / 1e6))
            out[k, 4] += tt * ov
            out[k, 5] += ov
    return out


def median_us(values: np.ndarray) -> int:
    """The spec's quantile rule at 1/2 (the ceil(N/2)-th smallest; INF sorts last); -1 for no value."""
    if not len(values):
        return -1
    return int(ranked(np.asarray(values, np.int64), rank(MEDIAN, len(values))))


COUNTS = ("examiner_turns", *TURN_END_OUTCOMES, "interruptions", "stops", "resumed", "backchannels")


@dataclass
class Components:
    T_us: np.ndarray
    counts: dict                 # COUNTS -> int64 per session
    talk_over_us: np.ndarray
    examiner_us: np.ndarray
    response_latency_us: np.ndarray  # each session's median response latency (no_response: INF); -1: none
    stop_latency_us: np.ndarray      # each session's median stop latency; -1: no interruption
    sessions: list                   # Session per sample (None when read back from rows)
    examiner_segments: list
    system_segments: list
    settings: SessionSettings = DEFAULT
    judged: list | None = None       # per session: None (not judged) or (k, 2 + 2 + len(JUDGED)) float rows:
    #                                  window start and end (s), TT, IF, then JUDGED's values
    bins: np.ndarray | None = None   # (sessions, N_BINS, len(BIN_FIELDS)): each session's counts per 15 s bin

    def answerable(self) -> np.ndarray:
        return sum(self.counts[k] for k in ANSWERABLE)


def _summarise(ss: list[Session], s: SessionSettings) -> tuple[dict, np.ndarray, np.ndarray]:
    counts = {k: column([len(x.examiner_turns) for x in ss]) if k == "examiner_turns" else
              column([x.outcome.count(k) for x in ss]) if k in TURN_END_OUTCOMES else
              column([len(x.interrupt_us) for x in ss]) if k == "interruptions" else
              column([int(np.count_nonzero(x.stop_us <= s.stop_within_us)) for x in ss]) if k == "stops" else
              column([int(np.count_nonzero(x.resumed)) for x in ss]) if k == "resumed" else
              column([x.backchannels for x in ss]) for k in COUNTS}
    resp = column([median_us(np.where(np.array(x.outcome) == "response", x.latency_us, INF)[
        np.isin(x.outcome, ("response", "no_response"))]) if x.outcome else -1 for x in ss])
    stop = column([median_us(x.stop_us) for x in ss])
    return counts, resp, stop


def components(samples, runs: Runs, settings: SessionSettings = DEFAULT) -> Components:
    """`runs` (fdbu.metrics.base.Runs): each channel's speech segments per session."""
    ex, sy = runs.files[EXAMINER], runs.files[SYSTEM]
    T = column([s.T_us for s in samples])
    ss = [session_events(ex[i], sy[i], int(T[i]), s.word_start, settings) for i, s in enumerate(samples)]
    counts, resp, stop = _summarise(ss, settings)
    judged: list = []
    for i, smp in enumerate(samples):
        events = smp.annotations.get("judge")
        judged.append(None if events is None else np.array(
            [[w0 / 1e6, w1 / 1e6, tt, if_, *event_timing(ex[i], sy[i], ss[i], w0, w1, int(T[i]))]
             for w0, w1, tt, if_ in events],
            float).reshape(-1, 4 + len(JUDGED)))
    bins = np.array([session_bins(ex[i], sy[i], ss[i], int(T[i]), judged[i]) for i in range(len(samples))],
                    float).reshape(-1, N_BINS, len(BIN_FIELDS))
    return Components(T, counts, column([x.talk_over_us for x in ss]), column([x.examiner_us for x in ss]), resp,
                      stop, ss, list(ex), list(sy), settings, judged, bins)


_TABLE = (
    Metric("response_rate", POOLED_RATIO, "higher", "answerable",
           "Examiner turn ends the system answers within session.window_s (and before the examiner's next turn), "
           "over turn ends that are answered, overlapped or left unanswered, pooled over sessions",
           lambda c: (c.counts["response"], c.answerable()), denominator="examiner turn ends", headline=True),
    Metric("overlapped_end_rate", POOLED_RATIO, "lower", "answerable",
           "Examiner turn ends with the system already speaking, over the same turn ends, pooled over sessions",
           lambda c: (c.counts["overlapped"], c.answerable()), denominator="examiner turn ends"),
    Metric("response_latency_s", LATENCY, "lower", "responding",
           "Median over sessions of each session's median time from an examiner turn's end to the system's next "
           "turn (an unanswered end counts as never; overlapped ends are not latencies)",
           lambda c: c.response_latency_us, headline=True),
    Metric("interruption_stop_rate", POOLED_RATIO, "higher", "interrupted",
           "Examiner interruptions (the examiner starts while the system speaks) whose system turn ends within "
           "session.stop_within_s, pooled over sessions", lambda c: (c.counts["stops"], c.counts["interruptions"]),
           denominator="examiner interruptions", headline=True),
    Metric("stop_latency_s", LATENCY, "lower", "interrupted",
           "Median over sessions of each session's median time from an examiner interruption's start to the end of "
           "the system turn it interrupts (a turn running to T: never)", lambda c: c.stop_latency_us),
    Metric("resumed_over_rate", POOLED_RATIO, "lower", "interrupted",
           "Examiner interruptions after which the system starts again before the examiner's turn ends",
           lambda c: (c.counts["resumed"], c.counts["interruptions"]), denominator="examiner interruptions"),
    Metric("talk_over_s_per_examiner_s", POOLED_RATIO, "lower", "eligible",
           "The system's detected speech inside the examiner's, over the examiner's speech, in seconds, pooled",
           lambda c: (c.talk_over_us, c.examiner_us), denominator="examiner speech seconds", seconds=True,
           headline=True),
    Metric("backchannels_per_examiner_turn", POOLED_RATIO, "context", "eligible",
           "System backchannels (short turns inside an examiner turn) per examiner turn, pooled over sessions",
           lambda c: (c.counts["backchannels"], c.counts["examiner_turns"]), denominator="examiner turns"),
)
# fdbu compare marks a v2 line from 50 paired sessions on (a split's release size): at 30 the split's headline family
# was marked in 7.1-7.5% of null datasets, above 5% + 3 s.e. (benchmarks/session_calibration.py)
MIN_PAIRS = 50
METRICS: tuple[Metric, ...] = tuple(replace(m, min_pairs=MIN_PAIRS) for m in _TABLE)


def populations(c: Components) -> dict[str, np.ndarray]:
    n = len(c.T_us)
    return {"eligible": np.ones(n, bool), "answerable": c.answerable() > 0,
            "responding": c.response_latency_us >= 0, "interrupted": c.counts["interruptions"] > 0}


def aggregate(c: Components, *, selected: int, ineligible: int, boot: Bootstrap) -> tuple[dict, dict]:
    pops = populations(c)
    metrics = aggregate_table(METRICS, c, pops, selected=selected, ineligible=ineligible, boot=boot)
    extra: dict = {k: int(c.counts[k].sum()) for k in COUNTS}
    extra.update({f"{k}_sessions": int(np.count_nonzero(v)) for k, v in pops.items() if k != "eligible"})
    extra[JUDGE_KEY] = judge_entry(c, boot)
    extra[OFFSET_KEY] = offset_entry(c, boot)
    extra[BINS_KEY] = bins_entry(c, boot)
    return metrics, extra


BINS_KEY = "bins"
BINNED = {"response_rate": (1, 0), "overlap_share": (2, 3), "judge_tt": (4, 5)}  # line -> (numerator, denominator)


def bin_label(k: int) -> str:
    return f"{k * BIN_US // 1_000_000}_{(k + 1) * BIN_US // 1_000_000}s"


def bins_entry(c: Components, boot: Bootstrap) -> dict:
    """Definition 86 pooled over the split's sessions, bin by bin: the response rate, the overlap share and the
    judge's time-weighted turn-taking score, each a ratio of sums with a 95% percentile interval resampling whole
    sessions (no test: a description of the conversation over time)."""
    b = c.bins if c.bins is not None else np.zeros((0, N_BINS, len(BIN_FIELDS)))
    n = len(b)
    idx = boot.indices(n) if n else np.zeros((0, 0), np.int64)
    lines: dict = {}
    for k in range(N_BINS):
        for name, (i, j) in BINNED.items():
            num, den = b[:, k, i], b[:, k, j]
            value = float(num.sum() / den.sum()) if den.sum() > 0 else None
            interval = None
            if value is not None and n:
                dens = den[idx].sum(axis=1)
                kept = dens > 0
                ratios = np.sort(num[idx].sum(axis=1)[kept] / dens[kept])
                interval = percentile_interval(ratios) if len(ratios) else None
            lines[f"{name}_{bin_label(k)}"] = {
                "difference": {"value": value, "value_flag": None, "interval": interval,
                               "interval_flags": [None, None]},
                "sessions": int(np.count_nonzero(den > 0)), "p": None, "p_holm": None, "marker": False,
                "reason": "descriptive"}
    return {"bin_s": BIN_US // 1_000_000, "bins": N_BINS, "lines": lines}


OFFSET_KEY = "offset"
SHIFTED = ("response_latency_s", "stop_latency_s")  # the latencies given again at each offset


def shifted(c: Components, offset_ms: int) -> "Components":
    """The components with every system segment moved `offset_ms` later (earlier when negative), cut to [0, T]: the
    session as it would read if B.wav's clock ran that far from A.wav's."""
    d = offset_ms * 1000
    system = [_clip(np.asarray(g, np.int64) + d, 0, int(T)) for g, T in zip(c.system_segments, c.T_us)]
    ss = [session_events(e, g, int(T), np.zeros(0, np.int64), c.settings)
          for e, g, T in zip(c.examiner_segments, system, c.T_us)]
    counts, resp, stop = _summarise(ss, c.settings)
    return Components(c.T_us, counts, column([x.talk_over_us for x in ss]), column([x.examiner_us for x in ss]),
                      resp, stop, ss, c.examiner_segments, system, c.settings)


def offset_entry(c: Components, boot: Bootstrap) -> dict:
    """Definition 84: each latency metric (SHIFTED) with B.wav moved by each of session.offsets_ms against A.wav, and
    its shift from the value as recorded: what a recording offset between the channels could do to it. No test: the
    offsets are what-ifs, not data."""
    base = {m.name: m for m in METRICS if m.name in SHIFTED}
    pops = populations(c)
    at0 = {name: aggregate_table((m,), c, pops, selected=len(c.T_us), ineligible=0, boot=Bootstrap(1, boot.seed))[name]
           for name, m in base.items()}
    lines: dict = {}
    for ms in c.settings.offsets_ms:
        moved = shifted(c, ms)
        mp = populations(moved)
        for name, m in base.items():
            rec = aggregate_table((m,), moved, mp, selected=len(c.T_us), ineligible=0,
                                  boot=Bootstrap(1, boot.seed))[name]
            v, v0 = rec["value"], at0[name]["value"]
            both = isinstance(v, float) and isinstance(v0, float)
            flag = None if both else PLUS_INF if isinstance(v0, float) and v == NOT_REACHED else \
                MINUS_INF if isinstance(v, float) and v0 == NOT_REACHED else UNDEFINED
            lines[f"{name}_at_{ms:+d}ms"] = {
                "value": v, "difference": {"value": round(v - v0, 6) if both else None,
                                           "value_flag": flag, "interval": None,
                                           "interval_flags": [None, None]},
                "p": None, "p_holm": None, "marker": False, "reason": "what-if"}
    return {"offsets_ms": list(c.settings.offsets_ms), "at_0": {k: r["value"] for k, r in at0.items()},
            "lines": lines}


JUDGE_KEY = "judge"
STATISTICS = ("kendall_tau_b", "spearman")
MIN_SESSIONS = 10  # an interval needs events of this many sessions (its calibration is simulated from 10 on:
#                    benchmarks/judge_calibration.py)


def expanded_interval(ordered: np.ndarray, clusters: int) -> list[float]:
    """The expanded percentile interval (Hesterberg 2015, "What teachers should know about the bootstrap", 4.4): the
    resampled values' quantiles at a/2 and 1 - a/2 with a/2 = Phi(-sqrt(S / (S - 1)) t_{0.975, S - 1}) over S
    resampled clusters, for the percentile interval's narrowness in small samples (benchmarks/judge_calibration.py:
    the plain 95% percentile interval leaves out 0 in 8.1% of null datasets of 10 sessions and 6.5-6.8% of 20; this
    one in 3.1% and 5.0%)."""
    from scipy.stats import norm, t

    half = float(norm.cdf(-math.sqrt(clusters / (clusters - 1)) * t.ppf(0.975, clusters - 1)))
    k = len(ordered)
    lo, hi = max(1, math.ceil(half * k)), max(1, math.ceil((1 - half) * k))
    return [float(ordered[lo - 1]), float(ordered[hi - 1])]


def judge_entry(c: Components, boot: Bootstrap) -> dict:
    """Definition 83: across the judged events of the subset's sessions, the rank correlation of each timing measured
    inside the event's window (JUDGED) with the judge's turn-taking score, Kendall's tau-b and Spearman's rho, each
    with a 95% percentile bootstrap interval resampling whole sessions (an event is never apart from its session's
    others; the expanded percentile interval, `expanded_interval`, from MIN_SESSIONS sessions on). Descriptive: no
    test, no marker (README: Full-Duplex-Bench v2)."""
    judged = [j for j in (c.judged or []) if j is not None]
    events = np.concatenate(judged) if judged else np.zeros((0, 4 + len(JUDGED)))
    out: dict = {"sessions": len(judged), "events": int(len(events)), "not_judged": len(c.T_us) - len(judged),
                 "lines": {}}
    if not judged:
        return out
    idx = boot.indices(len(judged))
    counts = np.zeros((len(idx), len(judged)), np.int64)
    np.add.at(counts, (np.repeat(np.arange(len(idx)), idx.shape[1]), idx.ravel()), 1)
    cluster = np.repeat(np.arange(len(judged)), [len(j) for j in judged])
    for m, name in enumerate(JUDGED):
        keep = ~np.isnan(events[:, 4 + m])
        x, y = events[keep, 4 + m], events[keep, 2]
        both = correlations(x, y, cluster[keep], np.vstack([np.ones((1, len(judged)), np.int64), counts]))
        point, resampled = both[0], both[1:]
        contributing = len(np.unique(cluster[keep]))
        for s, stat in enumerate(STATISTICS):
            values = np.sort(resampled[:, s][~np.isnan(resampled[:, s])])
            interval = expanded_interval(values, contributing) if len(values) and contributing >= MIN_SESSIONS \
                else None
            out["lines"][f"{name}_{stat}"] = {
                "difference": {"value": None if np.isnan(point[s]) else float(point[s]), "value_flag": None,
                               "interval": interval, "interval_flags": [None, None]},
                "n": int(keep.sum()), "sessions": contributing, "resamples_kept": int(len(values)),
                "p": None, "p_holm": None, "marker": False,
                "reason": "descriptive" if interval is not None or not len(values) else
                f"fewer than {MIN_SESSIONS} sessions: no interval"}
    return out


def _quantile(us: int):
    return None if us < 0 else "not reached" if us == INF else seconds(us)


def _segments(segs) -> list:
    return [[seconds(int(a)), seconds(int(b))] for a, b in segs]


def rows(samples, c: Components) -> list[dict]:
    out = []
    for i, s in enumerate(samples):
        row = {"T_s": seconds(s.T_us), "words": len(s.word_start),
               "segments": _segments(c.system_segments[i]),  # the system's, as every task names output.wav's
               "input_segments": _segments(c.examiner_segments[i])}
        row.update({k: int(c.counts[k][i]) for k in COUNTS})
        row.update({"talk_over_s": seconds(int(c.talk_over_us[i])), "examiner_speech_s": seconds(int(c.examiner_us[i])),
                    "response_latency_s": _quantile(int(c.response_latency_us[i])),
                    "stop_latency_s": _quantile(int(c.stop_latency_us[i]))})
        j = c.judged[i] if c.judged is not None else None
        row["judged"] = j is not None
        row["judge_events"] = [] if j is None else [[_cell(x) for x in ev] for ev in j.tolist()]
        row["bins"] = c.bins[i].tolist() if c.bins is not None else []
        out.append(row)
    return out


def _cell(x: float):
    """A judged event's value in a row: nan (no value) null, +inf (never) NOT_REACHED."""
    return None if x != x else NOT_REACHED if x == float("inf") else x


def _uncell(x) -> float:
    return float("nan") if x is None else float("inf") if x == NOT_REACHED else float(x)


ROW = {"T_s": "seconds", "words": "count", "segments": "segments", "input_segments": "segments",
       **{k: "count" for k in COUNTS}, "talk_over_s": "seconds", "examiner_speech_s": "seconds",
       "response_latency_s": "quantile?", "stop_latency_s": "quantile?", "judged": "flag",
       "judge_events": "number rows", "bins": "number rows"}


def _us(v) -> int:
    return -1 if v is None else INF if v == "not reached" else to_us(v)


def _segs(rows: list[dict], key: str) -> list[np.ndarray]:
    return [np.array([[to_us(a), to_us(b)] for a, b in r[key]], np.int64).reshape(-1, 2) for r in rows]


def from_rows(rows: list[dict], subset: str | None = None, unified: dict | None = None) -> Components:
    """The components back from unified-samples.jsonl rows: the inverse of `rows`."""
    return Components(column([to_us(r["T_s"]) for r in rows]), {k: column([r[k] for r in rows]) for k in COUNTS},
                      column([to_us(r["talk_over_s"]) for r in rows]),
                      column([to_us(r["examiner_speech_s"]) for r in rows]),
                      column([_us(r["response_latency_s"]) for r in rows]),
                      column([_us(r["stop_latency_s"]) for r in rows]), [None] * len(rows),
                      _segs(rows, "input_segments"), _segs(rows, "segments"), settings_of(unified),
                      [np.array([[_uncell(x) for x in ev] for ev in r["judge_events"]], float).reshape(
                          -1, 4 + len(JUDGED)) if r["judged"] else None for r in rows],
                      np.array([r["bins"] for r in rows], float).reshape(-1, N_BINS, len(BIN_FIELDS)))


def explain(row: dict, words: list) -> tuple[str, str]:
    """A session has no single outcome: its counts in words."""
    said = ", ".join(f"{row[k]} {k.replace('_', ' ')}" for k in TURN_END_OUTCOMES if row[k])
    return "session", (f"{row['examiner_turns']} examiner turns; turn ends: {said or 'none'}; "
                       f"{row['interruptions']} examiner interruptions, {row['stops']} stopped; "
                       f"{row['backchannels']} backchannels")


def marks(row: dict, read) -> dict:
    """The drill-down's shaded windows: each judged event, with the judge's scores and the timing inside it."""
    out = []
    for w0, w1, tt, if_, lat, ovl, sil in row["judge_events"]:
        latency = "none" if lat is None else "never" if lat == NOT_REACHED else f"{lat:.3f} s"
        out.append([w0, w1, f"judged event {w0:g}-{w1:g} s: turn-taking {tt:g}, instruction {if_:g}; response "
                            f"latency {latency}, overlap {ovl:.2f}, silence {sil:.2f}"])
    return {"windows": out} if out else {}


SWEEP = Swept(shown={"response_rate": "resp", "overlapped_end_rate": "ovl_end", "response_latency_s": "resp_med_s",
                     "interruption_stop_rate": "stop", "talk_over_s_per_examiner_s": "over/ex"},
              counts=COUNTS, count_labels={"response": "resp", "overlapped": "ovl", "interruptions": "int"},
              counts_of=lambda extra: {k: extra[k] for k in COUNTS})


def judge_lines(entry: dict) -> dict[str, dict]:
    return entry["lines"]


JUDGED_LABELS = {"latency_s": "response latency", "overlap_share": "overlap share", "silence_share": "silence share"}


def judge_label(name: str) -> str:
    """latency_s_kendall_tau_b -> "judge TT vs response latency: Kendall's tau-b"."""
    metric, stat = next((name[:-len(s) - 1], s) for s in STATISTICS if name.endswith(s))
    return f"judge TT vs {JUDGED_LABELS[metric]}: " + ("Kendall's tau-b" if stat == "kendall_tau_b" else
                                                          "Spearman's rho")


def check_judge(r, entry: dict, at: str, doc: dict) -> None:
    """A v2 subset's `judge` entry as the scored reader `r` checks it: its counts and each line the report, the API
    and the console read."""
    j = r.obj(entry, JUDGE_KEY, f"{at}.{JUDGE_KEY}")
    r.fields(j, {"sessions": "count", "events": "count", "not_judged": "count"}, f"{at}.{JUDGE_KEY}.")
    lines = j.get("lines")
    if not isinstance(lines, dict):
        r.refuse(f"{at}.{JUDGE_KEY}.lines", "is missing or not an object")
    for name, line in lines.items():
        where = f"{at}.{JUDGE_KEY}.lines.{name}"
        if name not in {f"{m}_{s}" for m in JUDGED for s in STATISTICS} or not isinstance(line, dict):
            r.refuse(where, "is not a line fdbu writes")
        r.fields(line, {"n": "count", "sessions": "count", "resamples_kept": "count", "p": "unit?", "p_holm": "unit?",
                        "marker": "flag", "reason": "text?"}, f"{where}.")
        d = r.obj(line, "difference", f"{where}.difference")
        if not (d.get("value") is None or (r.ok("number", d["value"]) and -1 <= d["value"] <= 1)):
            r.refuse(f"{where}.difference.value", f"is {d.get('value')!r}, not a correlation from -1 to 1 or null")
        iv = d.get("interval")
        if iv is not None and not (isinstance(iv, list) and len(iv) == 2 and all(r.ok("number", x) for x in iv)):
            r.refuse(f"{where}.difference.interval", "is not null or two numbers")


def judge_console(j: dict) -> list[str]:
    """What score prints of the judge entry, under the subset's table."""
    if not j["sessions"]:
        return [f"  the judge: no session judged ({j['not_judged']} not judged): no correlation with its scores"]
    unjudged = f", {j['not_judged']} not judged" if j["not_judged"] else ""
    out = [f"  the judge's turn-taking score against the timing inside each judged event ({j['events']} events in "
           f"{j['sessions']} sessions{unjudged}; "
           "rank correlations with 95% intervals over sessions, descriptive):"]
    for name, line in j["lines"].items():
        d = line["difference"]
        value = "undefined" if d["value"] is None else f"{d['value']:+.3f}"
        iv = "" if d["interval"] is None else f" [{d['interval'][0]:+.3f}, {d['interval'][1]:+.3f}]"
        why = "" if line["reason"] == "descriptive" else f"; {line['reason']}"
        out.append(f"    {judge_label(name):<46} {value}{iv}  ({line['n']} events, {line['sessions']} session{'s' if line['sessions'] != 1 else ''}{why})")
    return out


def offset_console(o: dict) -> list[str]:
    """What score prints of the offset entry."""
    out = ["  if B.wav's clock were offset against A.wav's (B later by the offset; the channels' shared clock is "
           "upstream's assumption):"]
    for name in SHIFTED:
        cells = [f"{_num(o['at_0'][name])} as recorded"] + [
            f"{ms:+d} ms {_num(o['lines'][f'{name}_at_{ms:+d}ms']['value'])}" for ms in o["offsets_ms"]]
        out.append(f"    {name:<22} " + ", ".join(cells))
    return out


def _num(v) -> str:
    return "n/a" if v is None else v if isinstance(v, str) else f"{v:.3f}"


def check_offset(r, entry: dict, at: str, doc: dict) -> None:
    o = r.obj(entry, OFFSET_KEY, f"{at}.{OFFSET_KEY}")
    lines, at0 = r.obj(o, "lines", f"{at}.{OFFSET_KEY}.lines"), r.obj(o, "at_0", f"{at}.{OFFSET_KEY}.at_0")
    offsets = o.get("offsets_ms")
    if not (isinstance(offsets, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in offsets)):
        r.refuse(f"{at}.{OFFSET_KEY}.offsets_ms", "is not a list of whole numbers")
    for name in SHIFTED:
        r.value(at0, name, "quantile?", f"{at}.{OFFSET_KEY}.at_0.{name}")
        for ms in offsets:
            key = f"{name}_at_{ms:+d}ms"
            line = lines.get(key)
            if not isinstance(line, dict):
                r.refuse(f"{at}.{OFFSET_KEY}.lines.{key}", "is missing or not an object")
            r.value(line, "value", "quantile?", f"{at}.{OFFSET_KEY}.lines.{key}.value")
            r.obj(line, "difference", f"{at}.{OFFSET_KEY}.lines.{key}.difference")


def offset_label(name: str) -> str:
    """response_latency_s_at_-100ms -> "response latency change (s), B shifted -100 ms": the line's value in a table
    is the change from the value as recorded, not the latency."""
    metric, ms = name.split("_s_at_")
    return f"{metric.replace('_', ' ')} change (s), B shifted {ms[:-2]} ms"


OFFSET_ENTRY = Entry(key=OFFSET_KEY, lines=lambda o: o["lines"], better=lambda subset, doc: {
    f"{n}_at_{ms:+d}ms": "context" for n in SHIFTED for ms in SessionSettings.of(doc).offsets_ms},
    label=lambda name: offset_label(name), check=check_offset, console=offset_console,
    count=lambda o: len(o["lines"]), columns={"value": "float"},
    row=lambda o, line: {"value": line["value"] if isinstance(line["value"], float) else None})


def bins_console(e: dict) -> list[str]:
    """What score prints of the bins entry: one row per line, one column per bin."""
    head = "".join(f"{bin_label(k).replace('_', '-'):>10}" for k in range(N_BINS))
    out = ["  by 15 s of conversation (pooled over sessions; 95% intervals in unified.json):",
           f"    {'':<16}{head}"]
    for name in BINNED:
        cells = []
        for k in range(N_BINS):
            v = e["lines"][f"{name}_{bin_label(k)}"]["difference"]["value"]
            cells.append(f"{'-' if v is None else f'{v:.3f}':>10}")
        out.append(f"    {name:<16}" + "".join(cells))
    return out


def check_bins(r, entry: dict, at: str, doc: dict) -> None:
    e = r.obj(entry, BINS_KEY, f"{at}.{BINS_KEY}")
    lines = r.obj(e, "lines", f"{at}.{BINS_KEY}.lines")
    for name in BINNED:
        for k in range(N_BINS):
            key = f"{name}_{bin_label(k)}"
            line = lines.get(key)
            if not isinstance(line, dict):
                r.refuse(f"{at}.{BINS_KEY}.lines.{key}", "is missing or not an object")
            r.fields(line, {"sessions": "count", "marker": "flag"}, f"{at}.{BINS_KEY}.lines.{key}.")
            d = r.obj(line, "difference", f"{at}.{BINS_KEY}.lines.{key}.difference")
            r.value(d, "value", "ratio?", f"{at}.{BINS_KEY}.lines.{key}.difference.value")


def bins_label(name: str) -> str:
    """response_rate_0_15s -> "response rate, 0-15 s"; judge_tt_... -> "judge TT, ..."."""
    metric, lo, hi = name.rsplit("_", 2)
    return f"{metric.replace('_', ' ').replace('tt', 'TT')}, {lo}-{hi[:-1]} s"


BINS_ENTRY = Entry(key=BINS_KEY, lines=lambda e: e["lines"], better=lambda subset, doc: {
    f"{n}_{bin_label(k)}": "context" for n in BINNED for k in range(N_BINS)},
    label=lambda name: bins_label(name), check=check_bins,
    console=bins_console, count=lambda e: e["bins"], columns={"sessions": "int"},
    row=lambda e, line: {"sessions": line["sessions"]})


JUDGE_ENTRY = Entry(key=JUDGE_KEY, lines=judge_lines, better=lambda subset, doc: {
    f"{m}_{s}": "context" for m in JUDGED for s in STATISTICS}, label=judge_label, check=check_judge,
    console=judge_console, count=lambda j: j["events"], columns={"n": "int"}, row=lambda j, line: {"n": line["n"]})
