"""Stage 2: speech detection on output.wav (Silero VAD).

`silero.py` is the adapter around silero-vad (the reference path), `batched.py` computes
the same probabilities for many files at once, `detect.py` caches, guards and verifies.
"""
from .detect import BACKENDS, MARGIN, Job, SpeechDetector
from .silero import SileroSettings, SileroVAD

__all__ = ["BACKENDS", "MARGIN", "Job", "SpeechDetector", "SileroSettings", "SileroVAD"]
