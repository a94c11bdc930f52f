"""The made-up family's task, "hold", as its metric module (fdbu.metrics.base.MetricModule): after a hold cue at H
(hold.json) the system should stay silent for a window, then reply. Its reader, components, table and rows, the
settings its components read (`HoldSettings`, the family's group `hold.*`), and its generator."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fdbu.common.cells import fmt
from fdbu.errors import FdbuError
from fdbu.kernels import INF
from fdbu.metrics.base import time_marks
from fdbu.metrics.paired import paired_line
from fdbu.metrics.stats import Bootstrap
from fdbu.metrics.table import LATENCY, SHARE, Metric, aggregate as aggregate_table
from fdbu.tree.readers import parse_json
from fdbu.common.timebase import seconds, to_us

HOLD = "hold.json"
INPUTS = ("T_s", "hold_s")
ROW = {"T_s": "seconds", "hold_s": "seconds", "outcome": "outcome", "latency_s": "seconds?"}
OUTCOMES = {0: "held", 1: "too_soon", 2: "silent"}


# ---- the family's settings group: hold.window_s ----------------------------------------------------------------

@dataclass(frozen=True)
class HoldSettings:
    window_us: int = 1_000_000

    def header(self) -> dict:
        return {"window_s": seconds(self.window_us)}

    def non_default(self) -> list[str]:
        return [] if self.window_us == HoldSettings().window_us else [f"hold.window_s={seconds(self.window_us)}"]

    @staticmethod
    def of(head: dict | None) -> "HoldSettings":
        return HoldSettings(to_us(head["window_s"])) if head else HoldSettings()


# ---- the task: reader, components, table, rows -----------------------------------------------------------------

def read_hold(data: bytes, where: str, T_us: int) -> dict:
    doc = parse_json(data, where, HOLD)
    try:
        H = to_us(float(doc[0]["timestamp"][0]))
    except (TypeError, KeyError, IndexError, ValueError):
        raise FdbuError(where, HOLD, "needs the cue in [0].timestamp[0]") from None
    if not 0 <= H <= T_us:
        raise FdbuError(where, HOLD, "the cue is outside [0, T]")
    return {"hold_us": H}


@dataclass
class Components:
    latency_us: np.ndarray  # from H to the first word at or after it; INF: none
    hold_us: np.ndarray
    T_us: np.ndarray
    settings: HoldSettings

    @property
    def held(self) -> np.ndarray:
        return (self.latency_us >= self.settings.window_us) & (self.latency_us != INF)


METRICS = (
    Metric("held_rate", SHARE, "higher", "eligible", "Samples silent for the window after H, then replying",
           lambda c: c.held, headline=True),
    Metric("reply_latency_s", LATENCY, "context", "eligible", "Median latency from H to the first word after it",
           lambda c: c.latency_us),
)


def components(samples, segments=None, settings: HoldSettings | None = None) -> Components:
    settings = settings if settings is not None else HoldSettings()
    lat = []
    for s in samples:
        after = s.word_start[s.word_start >= s.hold_us]
        lat.append(int(after.min()) - s.hold_us if after.size else INF)
    return Components(np.array(lat, np.int64), np.array([s.hold_us for s in samples], np.int64),
                      np.array([s.T_us for s in samples], np.int64), settings)


def _outcome(c: Components, i: int) -> str:
    return OUTCOMES[2 if c.latency_us[i] == INF else 0 if c.held[i] else 1]


def rows(samples, c: Components) -> list[dict]:
    return [{"T_s": seconds(s.T_us), "hold_s": seconds(s.hold_us), "outcome": _outcome(c, i),
             "latency_s": None if c.latency_us[i] == INF else seconds(int(c.latency_us[i]))}
            for i, s in enumerate(samples)]


def from_rows(rows: list[dict], subset: str | None = None, unified: dict | None = None) -> Components:
    return Components(np.array([INF if r["latency_s"] is None else to_us(r["latency_s"]) for r in rows], np.int64),
                      np.array([to_us(r["hold_s"]) for r in rows], np.int64),
                      np.array([to_us(r["T_s"]) for r in rows], np.int64), HoldSettings.of((unified or {}).get("hold")))


def populations(c: Components) -> dict[str, np.ndarray]:
    return {"eligible": np.ones(len(c.latency_us), bool)}


def entry(c: Components, boot: Bootstrap) -> dict:
    """The family's entry: replies within twice the window against within the window, paired per sample."""
    n, ones = len(c.latency_us), np.ones(len(c.latency_us), np.int64)
    within_1, within_2 = ((c.latency_us < k * c.settings.window_us).astype(np.int64) for k in (1, 2))
    line = {**paired_line(SHARE, (within_1, ones), (within_2, ones), n, boot), "p_holm": None, "marker": False}
    return {"n": n, "late_reply_rate": line}


def aggregate(c: Components, *, selected: int, ineligible: int, boot: Bootstrap) -> tuple[dict, dict]:
    metrics = aggregate_table(METRICS, c, populations(c), selected=selected, ineligible=ineligible, boot=boot)
    return metrics, {"hold": entry(c, boot)}


def explain(row: dict, words: list) -> tuple[str, str]:
    return row["outcome"], f"{row['outcome']}: the first word {fmt(row['latency_s'])} s after H"


def marks(row: dict, read) -> dict:
    return {**time_marks(row), "H": row["hold_s"]}


def generate(rng, system: str, *, hold: tuple[float, float] = (2.0, 4.0), **_):
    """(T, capture, annotation, transcript, intended): H drawn from `hold` (the family's setting of synth, hold_s=),
    then a reply 1.2-2 s after H ("patient"), 0.2-0.6 s ("eager"), or silence."""
    from fdbu.synth import Capture

    H = round(float(rng.uniform(*hold)), 3)
    T = round(H + float(rng.uniform(4.0, 5.0)), 3)
    cap = Capture(int(round(T * 16000)), rng)
    if system != "mute":
        cap.say(H + float(rng.uniform(1.2, 2.0) if system == "patient" else rng.uniform(0.2, 0.6)), words=3)
    return T, cap, [{"text": "[HOLD]", "timestamp": [H, H]}], cap.transcript(), {"system": system}


