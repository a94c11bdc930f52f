"""A task that exists nowhere but in the tests, "cue_reply": after a cue at C (cue.json), does the system say
anything, and how soon? Its reader, metric module, generator and Task are all here: registering `SUBSET`
(`fdbu.tasks.register`) is the only step, and synth, score, compare, report and the API take it with no other
file touched (tests/test_registry.py). This module is its metric module (fdbu.metrics.base.MetricModule)."""
from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np

from fdbu import tasks
from fdbu.errors import FdbuError
from fdbu.kernels import INF
from fdbu.common.cells import fmt
from fdbu.metrics.base import time_marks
from fdbu.metrics.stats import Bootstrap
from fdbu.metrics.table import LATENCY, SHARE, Metric, aggregate as aggregate_table
from fdbu.tree.readers import parse_json
from fdbu.common.timebase import seconds, to_us

CUE = "cue.json"
INPUTS = ("T_s", "cue_s")
ROW = {"T_s": "seconds", "cue_s": "seconds", "words": "count", "outcome": "outcome", "latency_s": "seconds?"}
OUTCOMES = {0: "reply", 1: "silence"}


def read_cue(data: bytes, where: str, T_us: int) -> dict:
    """cue.json -> {"cue_us": C}: [{"timestamp": [C, C]}], C inside [0, T]."""
    doc = parse_json(data, where, CUE)
    try:
        C = to_us(float(doc[0]["timestamp"][0]))
    except (TypeError, KeyError, IndexError, ValueError):
        raise FdbuError(where, CUE, "needs the cue in [0].timestamp[0]") from None
    if not 0 <= C <= T_us:
        raise FdbuError(where, CUE, "the cue is outside [0, T]")
    return {"cue_us": C}


@dataclass
class Components:
    latency_us: np.ndarray  # from the cue to the first word at or after it; INF: none
    cue_us: np.ndarray
    T_us: np.ndarray

    @property
    def replied(self) -> np.ndarray:
        return self.latency_us != INF


METRICS = (
    Metric("reply_rate", SHARE, "higher", "eligible", "Samples with a word at or after the cue",
           lambda c: c.replied, headline=True),
    Metric("reply_latency_s", LATENCY, "lower", "eligible", "Median latency from the cue to the first word after it",
           lambda c: c.latency_us, headline=True),
)


def components(samples, segments=None, settings=None) -> Components:
    lat = []
    for s in samples:
        after = s.word_start[s.word_start >= s.cue_us]
        lat.append(int(after.min()) - s.cue_us if after.size else INF)
    return Components(np.array(lat, np.int64), np.array([s.cue_us for s in samples], np.int64),
                      np.array([s.T_us for s in samples], np.int64))


def rows(samples, c: Components) -> list[dict]:
    return [{"T_s": seconds(s.T_us), "cue_s": seconds(s.cue_us), "words": len(s.word_start),
             "outcome": OUTCOMES[0 if c.latency_us[i] != INF else 1],
             "latency_s": None if c.latency_us[i] == INF else seconds(int(c.latency_us[i]))}
            for i, s in enumerate(samples)]


def from_rows(rows: list[dict], subset: str | None = None, unified: dict | None = None) -> Components:
    return Components(np.array([INF if r["latency_s"] is None else to_us(r["latency_s"]) for r in rows], np.int64),
                      np.array([to_us(r["cue_s"]) for r in rows], np.int64),
                      np.array([to_us(r["T_s"]) for r in rows], np.int64))


def populations(c: Components) -> dict[str, np.ndarray]:
    return {"eligible": np.ones(len(c.latency_us), bool)}


def aggregate(c: Components, *, selected: int, ineligible: int, boot: Bootstrap) -> tuple[dict, dict]:
    metrics = aggregate_table(METRICS, c, populations(c), selected=selected, ineligible=ineligible, boot=boot)
    return metrics, {"min_observable_s": seconds(int((c.T_us - c.cue_us).min())) if len(c.T_us) else None}


def explain(row: dict, words: list) -> tuple[str, str]:
    if row["outcome"] == "reply":
        return "reply", f"reply: the first word after the cue C = {fmt(row['cue_s'])} s, latency {fmt(row['latency_s'])} s"
    return "silence", f"silence: no word starts from the cue C = {fmt(row['cue_s'])} s to T = {fmt(row['T_s'])} s"


def marks(row: dict, read) -> dict:
    return {**time_marks(row), "C": row["cue_s"]}


def generate(rng, system: str, **_):
    """(T, capture, annotation, transcript, intended): a reply 0.3-0.9 s after the cue, or silence."""
    from fdbu.synth import Capture

    C = round(float(rng.uniform(2.0, 4.0)), 3)
    T = round(C + float(rng.uniform(4.0, 5.0)), 3)
    cap = Capture(int(round(T * 16000)), rng)
    intended = {"outcome": "silence"}
    if system in ("prompt", "slow", "overlap", "never_stops"):
        cap.say(C + float(rng.uniform(0.3, 0.9)), words=3)
        intended["outcome"] = "reply"
    return T, cap, [{"text": "[CUE]", "timestamp": [C, C]}], cap.transcript(), intended


TASK = tasks.Task(name="cue_reply", annotation=CUE, read=read_cue, metrics=sys.modules[__name__],
                  reference="cue_us", speech_detection=False, label="cue reply (from C)",
                  latency="reply_latency_s", latency_from="seconds after the cue (C)", generator=generate)
SUBSET = tasks.Subset("made_up_cue_reply", TASK, 20)
