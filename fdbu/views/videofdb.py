"""VideoFDB's timing classes and TOR-Alignment (its Sec. 4.2 and App. C.2; ../shared/spec/related-videofdb.md) on a
v1.0 tree and on v1.5's overlap subsets.

VideoFDB released no code; each class is its App. C.2 rule read onto Full-Duplex-Bench's annotations (docs:
Numbers in other benchmarks' terms). The cue is the annotated time the class is about: E on turn-taking, S on
interruption.

- smooth-handoff (candor_turn_taking): latency = the first word onset at or after E, or 0 when a word spans E
  ("already speaking at cue onset": the clamp fdbu's unified rule rejects, so `speaking_at_cue_rate` says how
  many samples it decides); a sample passes when its latency is at most handoff_within_s (v1.0 annotates no
  hand-off window: a setting).
- yield-required (synthetic_user_interruption): latency = the end of the speech segment overlapping S, or of the
  last one before it (negative: already silent), minus S; a sample passes when it is at most yield_within_s
  (the paper's 1.5 s). A segment that runs to T has no end seen: no latency (not reached), and it fails. App. C.2
  does not say what a sample with no speech at or before S scores: `yield_rate` passes it (nothing to yield; the
  paper calls continue-speaking's like case "vacuously correct"), `yield_rate_exercised` leaves it out (fdbu's
  rule: not exercised).
- stay-silent (synthetic_pause_handling, candor_pause_handling): the windows are the annotated pauses; Silero
  segments the pause outputs (the one place fdbu runs it on them: the unified pause metrics read words); a sample
  passes when its speech inside the pauses is at most 1 s, or when every segment overlapping a pause is a
  backchannel (shorter than 1 s, fewer than 2 words starting in it).
- continue-speaking (v1.5's user_backchannel and background_speech: the user, or someone near them, makes a sound
  that offers no floor while the agent speaks): the agent's activity is the share of a window its Silero segments of
  the event run (output.wav) cover; a sample is active when its activity over the 3 s before the event (clipped at
  0) is at least 30%, and then passes when its activity over the event window [o_s, o_e] stays at least 50%; a
  sample that is not active passes vacuously (App. C.2's words), and `continue_rate_active` gives the
  share over the active samples beside it. An empty event window is covered or not at its instant.
- TOR-Alignment: the share of samples passing their class, pooled over the classes the tree has.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..metrics.flat import flatten
from ..metrics.table import LATENCY, SHARE, Metric
from ..config.settings import MS_UP_TO_MINUTE, check, opt, within
from ..common.timebase import seconds, to_us
from .base import INF, Part, Records, View, ViewSettings, us

SOURCE = ("VideoFDB: Evaluating Full-Duplex Vision-Speech Capabilities in Conversational Agents, Sec. 4.2 "
          "(Evaluation Scoring & Metrics) and App. C.2 (Timing Metrics Details)")
YIELD_US = 1_500_000  # App. C.2: "the agent must yield within 1.5 s"
WORD_RULES = {"overlap": "a word overlapping the segment (the default: a word that starts 9 ms before its segment is "
                         "still said in it)", "start": "a word starting inside the segment"}


@dataclass(frozen=True)
class Settings(ViewSettings):
    """VideoFDB's numbers and fdbu's choices where v1.0 has no annotation: the yield tolerance (the paper's 1.5 s)
    and the hand-off window after E (v1.0 annotates none; fdbu takes the paper's one stated tolerance, 1.5 s)."""

    VIEW = "videofdb"
    KINDS = {"yield_within_s": "seconds", "handoff_within_s": "seconds", "backchannel_words": "text"}  # the header

    yield_within_us: int = YIELD_US
    handoff_within_us: int = YIELD_US
    backchannel_words: str = "overlap"  # a backchannel's words: those overlapping its segment, or starting in it

    def header(self) -> dict:
        return {"yield_within_s": seconds(self.yield_within_us), "handoff_within_s": seconds(self.handoff_within_us),
                "backchannel_words": self.backchannel_words}

    @staticmethod
    def of(header: dict) -> "Settings":
        """The settings a unified.json's view header records."""
        if header["backchannel_words"] not in WORD_RULES:
            raise ValueError(f"backchannel_words {header['backchannel_words']!r}, not one of {', '.join(WORD_RULES)}")
        return Settings(to_us(header["yield_within_s"]), to_us(header["handoff_within_s"]), header["backchannel_words"])


@dataclass
class Config:
    """videofdb.* on the command line: the tolerances in seconds, checked, as `Settings`."""

    yield_within_s: float = opt(seconds(YIELD_US), "VideoFDB's yield-required tolerance after S (the paper's 1.5 s)")
    handoff_within_s: float = opt(seconds(YIELD_US), "the smooth-handoff window after E (v1.0 annotates none; the "
                                  "paper's one stated tolerance)")
    backchannel_words: str = opt("overlap", "stay-silent's backchannel (< 1 s, < 2 words): its words are those "
                                            "overlapping the segment (overlap) or starting in it (start); the paper "
                                            "does not say")

    def __post_init__(self):
        within(self, "videofdb.", yield_within_s=MS_UP_TO_MINUTE, handoff_within_s=MS_UP_TO_MINUTE)
        check(self.backchannel_words in WORD_RULES, "videofdb.backchannel_words", self.backchannel_words,
              "overlap (a word overlapping the segment) or start (a word starting in it)")

    def settings(self) -> Settings:
        return Settings(to_us(self.yield_within_s), to_us(self.handoff_within_s), self.backchannel_words)


def _cue(spans_start: list, spans_end: list, cue: np.ndarray):
    from ..kernels import cue_timing

    a, off = flatten(spans_start)
    b, _ = flatten(spans_end)
    return cue_timing(a, b, off, np.ascontiguousarray(cue, np.int64))


# smooth-handoff (candor_turn_taking)
def _handoff_records(eligible, comps, s: Settings, segments=None) -> list[dict]:
    t = _cue([x.word_start for x in eligible], [x.word_end for x in eligible], comps.E_us)
    out = []
    for i in range(len(eligible)):
        latency = 0 if t.speaking_at_cue[i] else int(t.onset_after[i])
        out.append({"speaking_at_cue": bool(t.speaking_at_cue[i]), "latency_s": us(latency),
                    "passes": latency != INF and latency <= s.handoff_within_us})
    return out


def _handoff_table(s: Settings) -> tuple[Metric, ...]:
    return (
        Metric("smooth_handoff_rate", SHARE, "higher", "eligible", "smooth-handoff: samples whose latency (the first "
               f"onset at or after E; 0 when a word spans E) is at most {seconds(s.handoff_within_us):g} s",
               lambda c: c.passes, headline=True),
        Metric("smooth_handoff_latency_s", LATENCY, "lower", "with_latency", "Its latency, median over the samples "
               "that have one (a word spanning E or after it)", lambda c: c.latency_s, headline=True),
        Metric("handoff_latency_all_s", LATENCY, "lower", "eligible", "The same median over every sample, "
               "one with no word at or after E counted as not reached (the paper does not say which population)",
               lambda c: c.latency_s),
        Metric("speaking_at_cue_rate", SHARE, "context", "eligible", "Samples with a word spanning E: latency 0 by "
               "the paper's clamp", lambda c: c.speaking_at_cue),
    )


def _handoff_populations(c: Records) -> dict[str, np.ndarray]:
    return {"eligible": np.ones(len(c), bool), "with_latency": c.latency_s != INF}


# yield-required (synthetic_user_interruption)
def _yield_records(eligible, comps, s: Settings, segments=None) -> list[dict]:
    from ..kernels import NOT_EXERCISED

    t = _cue([g[:, 0] for g in comps.segments], [g[:, 1] for g in comps.segments], comps.S_us)
    out = []
    for i in range(len(eligible)):
        end, silent = int(t.last_end[i]), int(t.last_end[i]) == INF
        if not silent and end >= int(comps.T_us[i] - comps.S_us[i]):
            end = INF  # the segment runs to T: its end is not seen
        out.append({"silent": silent, "latency_s": us(end), "passes": silent or end <= s.yield_within_us,
                    "exercised": int(comps.kernel.outcome[i]) != NOT_EXERCISED})
    return out


def _yield_table(s: Settings) -> tuple[Metric, ...]:
    k = f"{seconds(s.yield_within_us):g} s"
    return (
        Metric("yield_rate", SHARE, "higher", "eligible", f"yield-required: samples whose speech at or before S "
               f"ends at most {k} after S, or that have none (a silent agent passes: fdbu's reading)",
               lambda c: c.passes, headline=True),
        Metric("yield_rate_exercised", SHARE, "higher", "exercised", f"The same over exercised samples (speech at "
               f"S): the segment covering S ends at most {k} after S", lambda c: c.passes),
        Metric("yield_latency_s", LATENCY, "lower", "spoke", "The end of the segment overlapping S, or of the last "
               "one before it, minus S (negative: silent at S; not reached: it runs to T); median over samples with "
               "speech at or before S",
               lambda c: c.latency_s, headline=True),
    )


def _yield_populations(c: Records) -> dict[str, np.ndarray]:
    return {"eligible": np.ones(len(c), bool), "exercised": c.exercised, "spoke": ~c.silent}


# stay-silent (synthetic_pause_handling, candor_pause_handling)
STAY_SILENT_US = 1_000_000  # App. C.2: "in-window agent speech is <= 1 s"
BACKCHANNEL_US, BACKCHANNEL_WORDS = 1_000_000, 2  # "backchannels (< 1 s and < 2 words)"


def _silent_records(eligible, comps, s: Settings, segments=None) -> list[dict]:
    from ..kernels import window_speech

    segments = segments if segments is not None else [np.zeros((0, 2), np.int64) for _ in eligible]
    a, off = flatten([g[:, 0] for g in segments])
    b, _ = flatten([g[:, 1] for g in segments])
    wa, woff = flatten([x.pauses[:, 0] for x in eligible])
    wb, _ = flatten([x.pauses[:, 1] for x in eligible])
    ws, wsoff = flatten([x.word_start for x in eligible])
    we, _ = flatten([x.word_end for x in eligible])
    t = window_speech(a, b, off, wa, wb, woff, ws, we, wsoff, BACKCHANNEL_US, BACKCHANNEL_WORDS,
                      s.backchannel_words == "overlap")
    return [{"in_window_s": seconds(int(t.in_window_us[i])), "segments_in_window": int(t.overlapping[i]),
             "backchannels": int(t.short[i]),
             "passes": bool(t.in_window_us[i] <= STAY_SILENT_US or t.short[i] == t.overlapping[i])}
            for i in range(len(eligible))]


def _silent_table(s: Settings) -> tuple[Metric, ...]:
    return (
        Metric("stay_silent_rate", SHARE, "higher", "eligible", "stay-silent: samples whose detected speech inside "
               "the annotated pauses is at most 1 s, or whose every segment overlapping a pause is a backchannel "
               "(< 1 s, < 2 words)", lambda c: c.passes, headline=True),
        Metric("backchannel_pass_rate", SHARE, "context", "eligible", "Samples that pass only as backchannels: more "
               "than 1 s of speech in the pauses, every segment there shorter than 1 s with fewer than 2 words",
               lambda c: c.passes & (c.in_window_s > STAY_SILENT_US)),
    )


def _silent_populations(c: Records) -> dict[str, np.ndarray]:
    return {"eligible": np.ones(len(c), bool)}


# continue-speaking (v1.5: user_backchannel, background_speech)
PRE_CUE_US, ACTIVE_BEFORE, ACTIVE_DURING = 3_000_000, 0.3, 0.5  # App. C.2: "previous 3 s is >= 30% ... >= 50%"
CONTINUE_SUBSETS = ("user_backchannel", "background_speech")


def activity(segments: np.ndarray, lo: int, hi: int) -> float:
    """The share of [lo, hi] (microseconds) the segments cover; an empty window: 1.0 when a segment covers lo."""
    if hi <= lo:
        return float(any(a <= lo < b for a, b in segments.tolist()))
    covered = sum(max(0, min(b, hi) - max(a, lo)) for a, b in segments.tolist())
    return covered / (hi - lo)


def _continue_records(eligible, comps, s: Settings, segments=None) -> list[dict]:
    out = []
    for i in range(len(eligible)):
        o_s, o_e, segs = int(comps.o_s[i]), int(comps.o_e[i]), comps.segments[i]
        before = activity(segs, max(0, o_s - PRE_CUE_US), o_s) if o_s > 0 else 0.0
        during = activity(segs, o_s, o_e)
        active = before >= ACTIVE_BEFORE
        out.append({"activity_before": before, "activity_during": during, "active": active,
                    "passes": (not active) or during >= ACTIVE_DURING})
    return out


def _continue_table(s: Settings) -> tuple[Metric, ...]:
    rule = (f"active (speech on at least {ACTIVE_BEFORE:.0%} of the {seconds(PRE_CUE_US):g} s before the event) and "
            f"speaking on at least {ACTIVE_DURING:.0%} of the event window")
    return (
        Metric("continue_speaking_rate", SHARE, "higher", "eligible", f"continue-speaking: samples {rule}, or not "
               "active (vacuously correct: App. C.2)", lambda c: c.passes, headline=True),
        Metric("continue_rate_active", SHARE, "higher", "active", f"The same over the active samples: "
               f"speaking on at least {ACTIVE_DURING:.0%} of the event window", lambda c: c.passes),
        Metric("active_before_event_rate", SHARE, "context", "eligible", f"Samples active before the event (speech on "
               f"at least {ACTIVE_BEFORE:.0%} of the {seconds(PRE_CUE_US):g} s before it): the ones the class decides",
               lambda c: c.active),
    )


def _continue_populations(c: Records) -> dict[str, np.ndarray]:
    return {"eligible": np.ones(len(c), bool), "active": c.active}


VIEW = View(
    name="videofdb", title="VideoFDB", source=SOURCE, settings=Settings(), config=Config,
    parts={"pause_handling": Part("pause_handling", _silent_table, _silent_records,
                                  {"in_window_s": "seconds", "segments_in_window": "count", "backchannels": "count",
                                   "passes": "flag"}, _silent_populations, passes="passes", segments=True,
                                  label="stay-silent"),
           "turn_taking": Part("turn_taking", _handoff_table, _handoff_records,
                               {"speaking_at_cue": "flag", "latency_s": "seconds?", "passes": "flag"},
                               _handoff_populations, passes="passes", label="smooth-handoff"),
           "user_interruption": Part("user_interruption", _yield_table, _yield_records,
                                     {"silent": "flag", "latency_s": "signed seconds?", "passes": "flag",
                                      "exercised": "flag"},
                                     _yield_populations, passes="passes", label="yield-required"),
           "overlap": Part("overlap", _continue_table, _continue_records,
                           {"activity_before": "unit", "activity_during": "unit", "active": "flag", "passes": "flag"},
                           _continue_populations, passes="passes", covers=CONTINUE_SUBSETS,
                           label="continue-speaking")},
    pooled="TOR_alignment",
    not_computable=(
        "continue-speaking on a v1.0 tree: it needs an overlap event while the agent speaks (v1.5's user_backchannel "
        "and background_speech give it)",
        "backchannel-produced: icc_backchannel annotates no window for the agent's backchannel",
        "the rubric axes (0-5): LM-judge scores on video, not timing"))
