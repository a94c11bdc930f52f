"""One root for every cache fdbu keeps, with a subfolder per kind (vad-probs, asr).

The caches are content-addressed (keyed by what their entries depend on), so one root can be
shared by runs, trees and machines.
"""
from __future__ import annotations

import os
from pathlib import Path

# the subfolders of the root: one per kind of cache (the calibrations live beside the probabilities)
VAD_PROBS = "vad-probs"
CALIBRATION = "calibration"   # under VAD_PROBS
ASR = "asr"


def cache_root() -> Path:
    """$XDG_CACHE_HOME/fdbu, or ~/.cache/fdbu."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "fdbu"
