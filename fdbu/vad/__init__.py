"""Stage 2: speech detection on output.wav (Silero VAD)."""
from .silero import SileroSettings, SileroVAD

__all__ = ["SileroSettings", "SileroVAD"]
