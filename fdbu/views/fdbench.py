"""FD-Bench's timing numbers (its Sec. 2.3 "Evaluation Metrics" and Fig. 2; ../shared/spec/related-fd-bench.md) on a
v1.0 tree.

FD-Bench released no code; every rule below is its definition read onto Full-Duplex-Bench's annotations, and
each choice the paper leaves open is a setting (docs: Numbers in other benchmarks' terms). Onsets are the
unified rules' own: word onsets on turn-taking (FD-Bench reads Silero's), Silero segments on interruption.

- candor_turn_taking, the paper's "user-non-interrupt inquiries": the first word's onset d = start - E decides
  early_interrupt (d < -early_reply_s), early_reply (-early_reply_s <= d < 0), reply (0 <= d, within
  reply_within_s when set), late_reply, no_reply. SRR counts early replies and replies, EIR early interrupts;
  ERT and EIT are E minus the onset, medians over early replies and early interrupts.
- synthetic_user_interruption, the paper's "user-interrupt inquiries": an exercised sample is interrupted (SI)
  when the segment covering S ends before the capture does (stop_by=T, the default: the paper sets no deadline,
  and its IRD medians of 3.6-13.2 s are only possible when a stop after the user's interruption counts), or by R
  (stop_by=R); it is replied to (SRI) when it is interrupted and its unified outcome is response (no speech
  carried over R, a word after R), within reply_within_s when set. IRD is the stop latency over SI (the paper's
  population) and over every exercised sample (+inf for a stop not seen: the unified stop_latency_s); FSED is the
  response latency over exercised samples that respond. Whatever the deadline, the exercised samples are split
  into those that stopped by R, after R, or never (the counts), so a reader sees what the deadline changes.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..metrics.table import LATENCY, SHARE, Metric
from ..config.settings import MS_UP_TO_MINUTE, check, opt, within
from ..common.timebase import seconds, to_us
from .base import INF, Part, Records, View, ViewSettings, us

SOURCE = ("FD-Bench: A Full-Duplex Benchmarking Pipeline Designed for Full Duplex Spoken Dialogue Systems, Sec. 2.3 "
          "(Evaluation Metrics) and Fig. 2")
DEFAULT_EARLY_REPLY_US = 1_000_000
STOP_BY = {"T": "before the capture ends (the default: the paper states no deadline, and only this reading reaches "
                "its published IRD medians)", "R": "by R, the end of the user's interruption"}


@dataclass(frozen=True)
class Settings(ViewSettings):
    """FD-Bench's open choices: how long after E (or R) a reply still succeeds (None: anywhere before T; the paper
    states no window), and how far before E an onset is still an early reply rather than an early interrupt (the
    paper gives no split; fdbu's 1 s lies between its reported ERT, "a few hundred milliseconds", and EIT, "around
    two seconds")."""

    VIEW = "fdbench"
    KINDS = {"reply_within_s": "seconds?", "early_reply_s": "seconds", "stop_by": "text"}  # the header's fields

    reply_within_us: int | None = None
    early_reply_us: int = DEFAULT_EARLY_REPLY_US
    stop_by: str = "T"  # an interrupt succeeds when the agent stops before the capture ends (T) or by R

    def header(self) -> dict:
        return {"reply_within_s": us(self.reply_within_us) if self.reply_within_us is not None else None,
                "early_reply_s": seconds(self.early_reply_us), "stop_by": self.stop_by}

    @staticmethod
    def of(header: dict) -> "Settings":
        """The settings a unified.json's view header records."""
        reply = header["reply_within_s"]
        if header["stop_by"] not in STOP_BY:
            raise ValueError(f"stop_by {header['stop_by']!r}, not one of {', '.join(STOP_BY)}")
        return Settings(None if reply is None else to_us(reply), to_us(header["early_reply_s"]), header["stop_by"])

    def within(self, us_: int) -> bool:
        return self.reply_within_us is None or us_ <= self.reply_within_us


@dataclass
class Config:
    """fdbench.* on the command line: the open choices in seconds, checked, as `Settings`."""

    reply_within_s: Optional[float] = opt(None, "FD-Bench's reply window after E (SRR) and R (SRIR): null counts a "
                                                "reply anywhere before T (the paper states no window)")
    early_reply_s: float = opt(seconds(DEFAULT_EARLY_REPLY_US), "an onset at most this long before E is an early "
                               "reply (ERT, counted in SRR), an earlier one an early interrupt (EIR, EIT); the paper "
                               "gives no split")
    stop_by: str = opt("T", "a successful interrupt (SI; IRD and SRIR follow it, FSED does not: Definition 69): "
                            "the agent stops before the capture ends (T; the paper states no deadline) or by R, the "
                            "end of the user's interruption (R)")

    def __post_init__(self):
        within(self, "fdbench.", early_reply_s=MS_UP_TO_MINUTE)
        if self.reply_within_s is not None:
            within(self, "fdbench.", reply_within_s=MS_UP_TO_MINUTE)
        check(self.stop_by in STOP_BY, "fdbench.stop_by", self.stop_by, "T (before the capture ends) or R (by R)")

    def settings(self) -> Settings:
        return Settings(None if self.reply_within_s is None else to_us(self.reply_within_s), to_us(self.early_reply_s),
                        self.stop_by)


# candor_turn_taking


def _turn_records(eligible, comps, s: Settings, segments=None) -> list[dict]:
    out: list[dict] = []
    for sample, E in zip(eligible, comps.E_us):
        if len(sample.word_start) == 0:
            out.append({"onset_s": None, "outcome": "no_reply"})
            continue
        d = int(sample.word_start.min()) - int(E)
        cls = ("early_interrupt" if d < -s.early_reply_us else "early_reply" if d < 0 else
               "reply" if s.within(d) else "late_reply")
        out.append({"onset_s": seconds(d), "outcome": cls})
    return out


def _is(*classes):
    return lambda c: np.isin(c.outcome, classes)


def _turn_table(s: Settings) -> tuple[Metric, ...]:
    window = "before T" if s.reply_within_us is None else f"within {seconds(s.reply_within_us):g} s of E"
    early = f"{seconds(s.early_reply_us):g} s"
    return (
        Metric("SRR", SHARE, "higher", "eligible", f"Successful replies: the first onset at most {early} before E "
               f"or after it, {window} (SRRate)", _is("early_reply", "reply"), headline=True),
        Metric("EIR", SHARE, "lower", "eligible", f"Early interrupts: the first onset more than {early} before E "
               "(EIRate)", _is("early_interrupt"), headline=True),
        Metric("ERT_s", LATENCY, "context", "early_reply", "Early-reply time: E minus the first onset, median over "
               "early replies", lambda c: -c.onset_s),
        Metric("EIT_s", LATENCY, "context", "early_interrupt", "Early-interrupt time: E minus the first onset, "
               "median over early interrupts", lambda c: -c.onset_s),
    )


def _turn_populations(c: Records) -> dict[str, np.ndarray]:
    return {"eligible": np.ones(len(c), bool), "early_reply": c.outcome == "early_reply",
            "early_interrupt": c.outcome == "early_interrupt"}


# synthetic_user_interruption


def _interruption_records(eligible, comps, s: Settings, segments=None) -> list[dict]:
    from ..kernels import NOT_EXERCISED, RESPONSE

    k = comps.kernel
    out = []
    for i in range(len(eligible)):
        stop, outcome = int(k.stop_us[i]), int(k.outcome[i])
        stopped = ("not_exercised" if outcome == NOT_EXERCISED else "never" if stop == INF else
                   "by_R" if stop <= int(comps.R_us[i] - comps.S_us[i]) else "after_R")
        if outcome == NOT_EXERCISED:
            cls = "not_exercised"
        elif stopped == "never" or (stopped == "after_R" and s.stop_by == "R"):
            cls = "kept_talking"
        elif outcome == RESPONSE and s.within(int(k.latency_us[i])):
            cls = "replied"
        else:
            cls = "interrupted"
        out.append({"outcome": cls, "stopped": stopped})
    return out


def _interruption_table(s: Settings) -> tuple[Metric, ...]:
    window = "" if s.reply_within_us is None else f" within {seconds(s.reply_within_us):g} s"
    deadline = "by R" if s.stop_by == "R" else "before the capture ends"
    return (
        Metric("SIR", SHARE, "higher", "exercised", "Successful interrupts: exercised samples whose segment covering "
               f"S ends {deadline} (SIRate; fdbench.stop_by={s.stop_by})", _is("interrupted", "replied"),
               headline=True),
        Metric("SRIR", SHARE, "higher", "interrupted", f"Successful replies to interrupts: interrupted samples that "
               f"respond after R{window} (SRIRate)", _is("replied"), headline=True),
        Metric("IRD_s", LATENCY, "lower", "interrupted", "Interrupt-response delay: S to the stop, median over "
               "successful interrupts (the paper's population)", lambda c: c.row("stop_s"), headline=True),
        Metric("IRD_all_exercised_s", LATENCY, "lower", "exercised", "The same delay over every exercised sample, "
               "+inf for a stop not seen (equals the unified stop_latency_s)", lambda c: c.row("stop_s")),
        Metric("FSED_s", LATENCY, "lower", "responded", "First-speech-emit delay: R to the first word, median over "
               "exercised samples that respond (whatever reply_within_s)", lambda c: c.row("latency_s"),
               headline=True),
    )


def _interruption_populations(c: Records) -> dict[str, np.ndarray]:
    return {"eligible": np.ones(len(c), bool), "exercised": c.outcome != "not_exercised",
            "interrupted": np.isin(c.outcome, ("interrupted", "replied")),
            "responded": c.row("outcome", "text") == "response",
            "stopped_by_R": c.stopped == "by_R", "stopped_after_R": c.stopped == "after_R",
            "never_stopped": c.stopped == "never"}


VIEW = View(
    name="fdbench", title="FD-Bench", source=SOURCE, settings=Settings(), config=Config,
    parts={"turn_taking": Part("turn_taking", _turn_table, _turn_records, {"onset_s": "signed seconds?", "outcome": "text"},
                               _turn_populations),
           "user_interruption": Part("user_interruption", _interruption_table, _interruption_records,
                                     {"outcome": "text", "stopped": "text"}, _interruption_populations)},
    not_computable=("NIR: needs FD-Bench's noise stimuli between inquiries, which Full-Duplex-Bench does not have",
                    "the GPT-4o score and C-PPL: judge and language-model numbers, not timing", "WER: not timing"))
