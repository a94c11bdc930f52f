"""Stage 2: speech detection on output.wav (Silero VAD).

`silero.py` is the adapter around silero-vad (the reference path), `batched_numpy.py` (on a
CPU, with the weights `weights.py` reads from the model's archive: no torch) and `batched.py`
(torch, on a GPU) compute the same probabilities for many files at once, `calibration.py` measures the batched path's
deviation on this device, `detect.py` caches, guards and verifies.
"""
from .detect import BACKENDS, Job, SpeechDetector
from .silero import SegmentRule, SileroSettings, SileroVAD

__all__ = ["BACKENDS", "Job", "SpeechDetector", "SegmentRule", "SileroSettings", "SileroVAD"]
