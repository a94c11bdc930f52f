"""numba kernels: the metric math as pure functions over flat integer arrays.

This folder sits at the top of the repository (the layout ARCHITECTURE.md describes) and installs as
`fdbu.kernels`: pyproject.toml maps it there (`package-dir`), so both an editable and a
regular install import it as `fdbu.kernels`, never as `kernels`. Every sample of a subset is processed in one call:
per-sample variable-length data (word starts and ends, pauses, speech segments)
are concatenated, and `off[i]:off[i+1]` selects sample i's part. All times are
int64 microseconds; `INF` stands for +infinity (a latency that never happened).
"""
from .bootstrap import Resampled, ranked, resample_ranked, resample_ratios
from .outcomes import (INF, NOT_EXERCISED, NO_RESPONSE, RESPONSE, SPEAKING_AT_END, EARLY_START,
                       InterruptionOutcomes, PauseComponents, TurnTakingOutcomes, interruption_outcomes,
                       pause_components, turn_taking_outcomes)
from .segments import Segments, speech_segments

__all__ = [
    "INF", "EARLY_START", "RESPONSE", "NO_RESPONSE", "NOT_EXERCISED", "SPEAKING_AT_END",
    "pause_components", "turn_taking_outcomes", "interruption_outcomes",
    "ranked", "resample_ranked", "resample_ratios", "speech_segments",
    "PauseComponents", "TurnTakingOutcomes", "InterruptionOutcomes", "Segments", "Resampled",
]
