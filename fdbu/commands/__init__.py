"""Every command, one module each: its checked config (`fdbu.config.store`) in, a `Ran` out.

`fdbu/commands/<name>.py` holds command `name`'s `run` (registered with `@registry.command`); what
several share (`Ran`, the detector, writing files as one unit, reading scored systems) is in `base`.
The CLI (`fdbu.cli.main`: argv, Hydra, printing) and the Python API (`fdbu.api`: results in memory) both
call these, so a command's steps (check the outputs, build the detector, compute, write as one unit)
exist once; neither of them imports the other. Nothing here prints, and nothing here reads Hydra.
"""
from __future__ import annotations

from . import asr, calibrate, compare, evaluate, export, report, score, sweep, synth, vad  # registers each
from .base import Ran, make_detector

__all__ = ["Ran", "make_detector", "asr", "calibrate", "compare", "evaluate", "export", "report", "score", "sweep",
           "synth", "vad"]
