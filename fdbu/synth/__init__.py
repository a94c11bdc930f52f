"""Synthetic captures: complete, valid reference trees from real synthetic speech.

Each sample's output.wav is built from the shipped word bank (espeak-ng words, 16 kHz; `speech`),
its output.json lists exactly the words placed, and `synth.json` records the system
behaviour and the outcome the sample was built to have, so tests can check the scorer
against ground truth. Sample i of a subset depends only on (seed, subset, i), and its dataset
part (T, annotation, eligibility) not on the system, so trees of several systems built with one
seed hold the same samples and can be compared pair by pair (`fdbu compare`).

`speech` (the bank, a capture), `samples` (one generator per task) and `trees` (writing a tree) are its parts;
their names are this package's too, each module imported when one of its names is first asked for, so the bank
loads without the generators or the task registry.
"""
from __future__ import annotations

import importlib

_PARTS = {"speech": ("bank", "Capture", "GAP_S", "BANK", "SR"),
          "samples": ("SYSTEMS", "V15_SYSTEMS", "EVENTS", "pause_sample", "turn_taking_sample",
                      "interruption_sample", "backchannel_sample", "overlap_sample"),
          "trees": ("synthesize", "check", "LAYOUTS", "REASONS", "DRAW", "OFFICIAL_REASON")}
_WHERE = {name: part for part, names in _PARTS.items() for name in names}
__all__ = list(_WHERE)


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
