"""Pause handling (synthetic_pause_handling, candor_pause_handling).

The window is a non-yielding user turn: from the first annotated pause start to T a
model word onset takes the floor too early. Pause i owns [a_i, a_{i+1}); the last
pause owns [a_n, T] (clarification 3).
"""
from __future__ import annotations

import numpy as np

from ..kernels import pause_components
from ..timebase import seconds
from .flat import column, flatten
from .stats import Bootstrap, pooled_ratio, share

# name -> (kind, better, definition)
METRICS = {
    "pause_intrusion_rate": ("share", "lower", "Samples with a model word starting at or after the first pause start"),
    "pause_intrusion_per_pause": ("pooled_ratio", "lower", "Pauses whose owned time contains a model word start, over all pauses"),
    "intrusion_s_per_pause_s": ("pooled_ratio", "lower", "Annotated pause seconds covered by ASR word spans, over all annotated pause seconds"),
    "inside_pause_onset_rate": ("share", "context", "Samples with a model word starting inside an annotated pause [a, b)"),
    "pre_pause_speech_rate": ("share", "context", "Samples with a model word starting before the first pause start"),
    "carry_in_rate": ("share", "context", "Samples with a model word that starts before the first pause start and ends after it"),
    "any_speech_rate": ("share", "context", "Samples with any model word in the window"),
}
FLAGS = ("pause_intrusion", "inside_pause_onset", "pre_pause_speech", "carry_in", "any_speech")
FLAG_OF = {"pause_intrusion_rate": 0, "inside_pause_onset_rate": 1, "pre_pause_speech_rate": 2,
           "carry_in_rate": 3, "any_speech_rate": 4}


def components(samples) -> dict[str, np.ndarray]:
    ws, woff = flatten([s.word_start for s in samples])
    we, _ = flatten([s.word_end for s in samples])
    pa, poff = flatten([s.pauses[:, 0] for s in samples])
    pb, _ = flatten([s.pauses[:, 1] for s in samples])
    flags, counts = pause_components(ws, we, woff, pa, pb, poff, column([s.T_us for s in samples]))
    return {"flags": flags, "intrusion_words": counts[:, 0], "intruded_pauses": counts[:, 1],
            "pauses": counts[:, 2], "covered_us": counts[:, 3], "pause_us": counts[:, 4]}


def rows(samples, c) -> list[dict]:
    out = []
    for i, s in enumerate(samples):
        row = {"T_s": seconds(s.T_us), "words": len(s.word_start), "pauses": int(c["pauses"][i]),
               "first_pause_s": seconds(int(s.pauses[0, 0])), "pause_s": seconds(int(c["pause_us"][i]))}
        row.update({name: bool(c["flags"][i, j]) for j, name in enumerate(FLAGS)})
        row["intrusion_words"] = int(c["intrusion_words"][i])
        row["intruded_pauses"] = int(c["intruded_pauses"][i])
        row["pause_covered_s"] = seconds(int(c["covered_us"][i]))
        out.append(row)
    return out


def aggregate(c, *, selected: int, ineligible: int, boot: Bootstrap) -> tuple[dict, dict]:
    """Returns (metrics, extra subset fields)."""
    n = len(c["pauses"])
    metrics = {}
    for name, (kind, better, _) in METRICS.items():
        if kind == "share":
            k = int(c["flags"][:, FLAG_OF[name]].sum())
            metrics[name] = share(k, n, unknown=ineligible, selected=selected, better=better)
        elif name == "pause_intrusion_per_pause":
            metrics[name] = pooled_ratio(c["intruded_pauses"], c["pauses"], boot, better=better)
        else:
            metrics[name] = pooled_ratio(c["covered_us"], c["pause_us"], boot, better=better, microseconds=True)
    return metrics, {}
