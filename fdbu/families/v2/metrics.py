"""Full-Duplex-Bench v2 sessions: objective turn-taking timing of a whole multi-turn session (docs: Definitions
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

The arithmetic is `fdbu.families.v2.events`, one session at a time, on integer microseconds; `tests/twins.py`
restates it in plain Python. This module pools it over the sessions of a split, resampling whole sessions, and makes
the family's entries; `fdbu.families.v2.hooks` holds the settings group and how the entries are shown.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from fractions import Fraction

import numpy as np

from ...kernels import INF
from ...config.settings import NOT_REACHED
from ...common.timebase import seconds, to_us
from ...metrics.base import Runs, Swept
from ...metrics.paired import MINUS_INF, PLUS_INF, UNDEFINED
from .rankcorr import correlations
from ...metrics.flat import column
from .events import BIN_FIELDS, US, Session, _clip, event_timing, judge_bins, median_us, session_bins, session_events
from .hooks import ANSWERABLE, BIN_US, BINNED, BINS_KEY, DEFAULT, EXAMINER, JUDGE_KEY, JUDGED, N_BINS, OFFSET_KEY, SHIFTED, STATISTICS, SYSTEM, TURN_END_OUTCOMES, SessionSettings, bin_label, settings_of
from ...metrics.stats import Bootstrap, percentile_interval
from ...metrics.table import LATENCY, POOLED_RATIO, Metric, aggregate as aggregate_table

INPUTS = ()  # nothing is the dataset's alone: the examiner reacts to the system, so both channels are the run's
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
    bins: np.ndarray | None = None   # (sessions, N_BINS, len(BIN_FIELDS)) objects: each session's counts per 15 s
    #                                  bin, exact (ints and Fractions: Definition 10)

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


def components(samples, segments: Runs | None = None, settings: SessionSettings | None = None) -> Components:
    """`segments` (fdbu.metrics.base.Runs): each channel's speech segments per session (always given: its task segments
    both channels); `settings` the group session.* (None: the defaults)."""
    runs = segments
    if runs is None:
        raise ValueError("the session task's components need both channels' speech segments")
    settings = DEFAULT if settings is None else settings
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
    bins = _bins([session_bins(ex[i], sy[i], ss[i], int(T[i]), None if (e := smp.annotations.get("judge")) is None
                               else [ev[:4] for ev in e]) for i, smp in enumerate(samples)])
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





def bins_entry(c: Components, boot: Bootstrap) -> dict:
    """Definition 86 pooled over the split's sessions, bin by bin: the response rate, the overlap share and the
    judge's time-weighted turn-taking score, each a ratio of sums with a 95% percentile interval resampling whole
    sessions (no test: a description of the conversation over time). Exact (Definition 10): the sums in integers
    over a common denominator, each ratio correctly rounded (a score of 5 everywhere is [5, 5])."""
    b = c.bins if c.bins is not None else np.zeros((0, N_BINS, len(BIN_FIELDS)), object)
    n = len(b)
    drawn = np.zeros((0, 0), np.int64)
    if n:  # how often each resample draws each session
        idx = boot.indices(n)
        drawn = np.zeros((len(idx), n), np.int64)
        np.add.at(drawn, (np.repeat(np.arange(len(idx)), n), idx.ravel()), 1)
    lines: dict = {}
    for k in range(N_BINS):
        for name, (i, j) in BINNED.items():
            both, _ = _integers(list(b[:, k, i]) + list(b[:, k, j]))  # one denominator: the ratio is of ints
            num, den = both[:n], both[n:]
            value, interval = _ratio(num, den, drawn)
            lines[f"{name}_{bin_label(k)}"] = {
                "difference": {"value": value, "value_flag": None, "interval": interval,
                               "interval_flags": [None, None]},
                "sessions": sum(d > 0 for d in den), "p": None, "p_holm": None, "marker": False,
                "reason": "descriptive"}
    return {"bin_s": BIN_US // 1_000_000, "bins": N_BINS, "lines": lines}


def _integers(values: list) -> tuple[list[int], int]:
    """Exact numbers (ints, Fractions) as integers over their least common denominator."""
    d = math.lcm(1, *(Fraction(v).denominator for v in values))
    return [int(Fraction(v) * d) for v in values], d


def _sums(drawn: np.ndarray, values: list[int]) -> list[int]:
    """Each resample's sum of the sessions it draws (`drawn`: resample x session counts), exactly: int64 where no
    sum can overflow, else Python's integers."""
    if max((abs(v) for v in values), default=0) * max(1, drawn.shape[1]) < 2 ** 62:
        return (drawn @ np.array(values, np.int64)).tolist()
    return list(drawn.astype(object) @ np.array(values, object))


def _ratio(num: list[int], den: list[int], drawn: np.ndarray) -> tuple[float | None, list[float] | None]:
    """sum(num) / sum(den), correctly rounded (Python's int / int), and the percentile interval of the resamples'
    ratios (a resample with nothing in the denominator left out); None where the denominator is 0."""
    if sum(den) <= 0:
        return None, None
    ratios = sorted(a / d for a, d in zip(_sums(drawn, num), _sums(drawn, den)) if d > 0)
    return sum(num) / sum(den), percentile_interval(np.array(ratios)) if ratios else None


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
    test, no marker (docs: Full-Duplex-Bench v2)."""
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
        row["bins"] = [[float(x) for x in b] for b in c.bins[i]] if c.bins is not None else []
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
                      _bins([_row_bins(r) for r in rows]))


def _bins(per_session: list) -> np.ndarray:
    return np.array(per_session + [[[0] * len(BIN_FIELDS)] * N_BINS], object)[:-1].reshape(-1, N_BINS,
                                                                                            len(BIN_FIELDS))


def _row_bins(r: dict) -> list[list]:
    """A row's bins back exact: counts as ints, seconds from their microseconds, the judge's columns recomputed from
    its judged events (windows to the microsecond, as read; a row's TT x overlap sum is a float, not exact)."""
    judge = judge_bins([(to_us(ev[0]), to_us(ev[1]), ev[2], ev[3]) for ev in r["judge_events"]])
    return [[int(b[0]), int(b[1]), Fraction(to_us(b[2]), US), Fraction(to_us(b[3]), US), *judge[k]]
            for k, b in enumerate(r["bins"])]


def explain(row: dict, words: list) -> tuple[str, str]:
    """A session has no single outcome: its counts in words."""
    said = ", ".join(f"{row[k]} {k.replace('_', ' ')}" for k in TURN_END_OUTCOMES if row[k])
    return "session", (f"{row['examiner_turns']} examiner turns; turn ends: {said or 'none'}; "
                       f"{row['interruptions']} examiner interruptions, {row['stops']} stopped; "
                       f"{row['backchannels']} backchannels")


def across(row: dict) -> str:
    """The report's across-systems outcome of a session (it has no single one): its turn ends and stops counted,
    the nonzero ones, so two systems' sessions differ there exactly when a count differs."""
    said = [f"{row[k]} {k.replace('_', ' ')}" for k in TURN_END_OUTCOMES if row[k]]
    if row["interruptions"]:
        said.append(f"{row['stops']}/{row['interruptions']} stopped")
    return ", ".join(said) or "no examiner turn end"


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


