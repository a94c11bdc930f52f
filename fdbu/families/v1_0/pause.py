"""Pause handling (synthetic_pause_handling, candor_pause_handling).

The window is a non-yielding user turn: from the first annotated pause start to T a
model word onset takes the floor too early. Pause i owns [a_i, a_{i+1}); the last
pause owns [a_n, T] (docs: Definition 3).
"""
from __future__ import annotations

import numpy as np

from ...kernels import PauseComponents, pause_components
from ...tree.readers import parse_json
from ...common.timebase import seconds, to_us
from ...common.cells import fmt
from ...metrics.base import time_marks
from ...metrics.flat import column, flatten
from ...metrics.stats import Bootstrap
from ...metrics.table import POOLED_RATIO, SHARE, Metric, aggregate as aggregate_table

FLAGS = ("pause_intrusion", "inside_pause_onset", "pre_pause_speech", "carry_in", "any_speech")
# the row fields that come from the dataset, not the system: equal in every system's tree for one sample
INPUTS = ("T_s", "pauses", "first_pause_s", "pause_s")


def _flag(name):
    return lambda c: getattr(c, name)


METRICS = (
    Metric("pause_intrusion_rate", SHARE, "lower", "eligible",
           "Samples with a model word starting at or after the first pause start", _flag("pause_intrusion"),
           headline=True),
    Metric("pause_intrusion_per_pause", POOLED_RATIO, "lower", "eligible",
           "Pauses whose owned time contains a model word start, over all pauses",
           lambda c: (c.intruded_pauses, c.pauses), denominator="pauses"),
    Metric("intrusion_s_per_pause_s", POOLED_RATIO, "lower", "eligible",
           "Annotated pause seconds covered by ASR word spans, over all annotated pause seconds",
           lambda c: (c.covered_us, c.pause_us), denominator="pause seconds", seconds=True),
    Metric("inside_pause_onset_rate", SHARE, "context", "eligible",
           "Samples with a model word starting inside an annotated pause [a, b)", _flag("inside_pause_onset")),
    Metric("pre_pause_speech_rate", SHARE, "context", "eligible",
           "Samples with a model word starting before the first pause start", _flag("pre_pause_speech")),
    Metric("carry_in_rate", SHARE, "context", "eligible",
           "Samples with a model word that starts before the first pause start and ends after it", _flag("carry_in")),
    Metric("any_speech_rate", SHARE, "context", "eligible", "Samples with any model word in the window",
           _flag("any_speech")),
)


def components(samples, segments: None = None, settings: None = None) -> PauseComponents:
    """From the words alone (no speech detection, no settings group)."""
    ws, woff = flatten([s.word_start for s in samples])
    we, _ = flatten([s.word_end for s in samples])
    pa, poff = flatten([s.pauses[:, 0] for s in samples])
    pb, _ = flatten([s.pauses[:, 1] for s in samples])
    return pause_components(ws, we, woff, pa, pb, poff, column([s.T_us for s in samples]))


def rows(samples, c: PauseComponents) -> list[dict]:
    out = []
    for i, s in enumerate(samples):
        row = {"T_s": seconds(s.T_us), "words": len(s.word_start), "pauses": int(c.pauses[i]),
               "first_pause_s": seconds(int(s.pauses[0, 0])), "pause_s": seconds(int(c.pause_us[i]))}
        row.update({name: bool(getattr(c, name)[i]) for name in FLAGS})
        row["intrusion_words"] = int(c.intrusion_words[i])
        row["intruded_pauses"] = int(c.intruded_pauses[i])
        row["pause_covered_s"] = seconds(int(c.covered_us[i]))
        out.append(row)
    return out


def from_rows(rows: list[dict], subset: str | None = None, unified: dict | None = None) -> PauseComponents:
    """The components back from unified-samples.jsonl rows (eligible ones): the inverse of `rows`."""
    flags = [np.array([bool(r[name]) for r in rows], bool) for name in FLAGS]
    counts = [column([int(r[name]) for r in rows]) for name in ("intrusion_words", "intruded_pauses", "pauses")]
    times = [column([to_us(r[name]) for r in rows]) for name in ("pause_covered_s", "pause_s")]
    return PauseComponents(*flags, *counts, *times)


def populations(c: PauseComponents) -> dict[str, np.ndarray]:
    """The samples each metric is over (`Metric.over`), as masks over the eligible samples."""
    return {"eligible": np.ones(len(c.pauses), bool)}


def aggregate(c: PauseComponents, *, selected: int, ineligible: int, boot: Bootstrap) -> tuple[dict, dict]:
    """Returns (metrics, extra subset fields)."""
    return aggregate_table(METRICS, c, populations(c), selected=selected, ineligible=ineligible, boot=boot), {}


ROW = {"T_s": "seconds", "words": "count", "pauses": "count", "first_pause_s": "seconds", "pause_s": "seconds",
       "pause_intrusion": "flag", "inside_pause_onset": "flag", "pre_pause_speech": "flag", "carry_in": "flag",
       "any_speech": "flag", "intrusion_words": "count", "intruded_pauses": "count", "pause_covered_s": "seconds"}


def explain(row: dict, words: list) -> tuple[str, str]:
    """(outcome, the rule that decided it in plain words), restated from the row's own fields."""
    p = row["first_pause_s"]
    if row["pause_intrusion"]:
        return "intrusion", (f"intrusion: {row['intrusion_words']} word(s) start at or after the first pause "
                             f"start {fmt(p)} s; {row['intruded_pauses']} of {row['pauses']} pauses intruded")
    return "no intrusion", f"no intrusion: no word starts at or after the first pause start {fmt(p)} s"


def marks(row: dict, read) -> dict:
    """E/S/R where present, and the annotated pauses from the sample's pause.json (read checked by the caller)."""
    out = time_marks(row)
    raw = read("pause.json")
    if raw is not None:
        data = parse_json(raw, row["sample_id"], "pause.json")
        out["pauses"] = [[float(e["timestamp"][0]), float(e["timestamp"][1])] for e in data]
    return out
