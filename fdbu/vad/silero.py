"""The one module that calls silero-vad: every parameter passed explicitly (the lhotse way).

The reference path is exactly the spec's call: `load_silero_vad()` and
`get_speech_timestamps(...)` on the whole output.wav, one file at a time.
"""
from __future__ import annotations

import contextlib
import importlib.metadata
import importlib.resources
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import soundfile as sf
import torch

from ..atomic import sha256_file
from ..errors import FdbuError
from ..timebase import to_us

MODEL_PACKAGE = "silero_vad.data"
MODEL_FILE = "silero_vad.jit"


@dataclass(frozen=True)
class SileroSettings:
    """The spec's settings: Silero's defaults except no padding."""

    threshold: float = 0.5
    min_speech_duration_ms: int = 250
    min_silence_duration_ms: int = 100
    speech_pad_ms: int = 0
    sampling_rate: int = 16000

    def __post_init__(self):
        if not 0.0 < self.threshold < 1.0:
            raise FdbuError("config", None, f"vad.threshold {self.threshold} is outside (0, 1)")
        if self.min_speech_duration_ms < 0 or self.min_silence_duration_ms < 0 or self.speech_pad_ms < 0:
            raise FdbuError("config", None, "vad durations must be non-negative")
        if self.sampling_rate != 16000:
            raise FdbuError("config", None, f"vad.sampling_rate {self.sampling_rate}: fdbu scores 16 kHz audio only")

    def as_dict(self) -> dict:
        return asdict(self)


@contextlib.contextmanager
def _one_thread():
    """One intra-op thread: the window loop gains nothing from more, and it pins the float sums."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def model_path() -> Path:
    return Path(str(importlib.resources.files(MODEL_PACKAGE).joinpath(MODEL_FILE)))


class SileroVAD:
    """Loads the packaged JIT model once; `segments()` gives one file's speech segments."""

    backend = "reference"

    def __init__(self, settings: SileroSettings = SileroSettings()):
        from silero_vad import load_silero_vad

        self.settings = settings
        self.model = load_silero_vad(onnx=False, opset_version=16, sequence=False,
                                     sampling_rate=settings.sampling_rate, max_frames=512)
        self.version = importlib.metadata.version("silero-vad")
        self.model_file = MODEL_FILE
        self.model_sha256 = sha256_file(model_path())

    def signature(self) -> dict:
        """What the segments depend on. No backend or device: those must not change a segment."""
        return {
            "silero_vad_version": self.version,
            "model_file": self.model_file,
            "model_sha256": self.model_sha256,
            "torch_version": torch.__version__,
            "settings": self.settings.as_dict(),
        }

    def segment_samples(self, audio: np.ndarray) -> list[tuple[int, int]]:
        """Speech segments of a mono float waveform as [start, end) sample indices."""
        from silero_vad import get_speech_timestamps

        s = self.settings
        with _one_thread():
            stamps = get_speech_timestamps(
                torch.from_numpy(np.ascontiguousarray(audio, dtype=np.float32)),
                self.model,
                threshold=s.threshold,
                sampling_rate=s.sampling_rate,
                min_speech_duration_ms=s.min_speech_duration_ms,
                max_speech_duration_s=float("inf"),
                min_silence_duration_ms=s.min_silence_duration_ms,
                speech_pad_ms=s.speech_pad_ms,
                return_seconds=False,
                time_resolution=1,
                visualize_probs=False,
                progress_tracking_callback=None,
                neg_threshold=None,
                window_size_samples=512,
                min_silence_at_max_speech=98,
                use_max_poss_sil_at_max_speech=True,
            )
        return [(int(t["start"]), int(t["end"])) for t in stamps]

    def segments(self, wav: Path, where: str = "") -> np.ndarray:
        """Segments of output.wav in integer microseconds, (k, 2), sorted and disjoint."""
        try:
            audio, sr = sf.read(str(wav), dtype="float32", always_2d=False)
        except Exception as e:
            raise FdbuError(where or str(wav), "output.wav", f"cannot be decoded ({e})") from None
        if sr != self.settings.sampling_rate or audio.ndim != 1:
            raise FdbuError(where or str(wav), "output.wav", f"is not mono {self.settings.sampling_rate} Hz")
        return samples_to_us(self.segment_samples(audio), sr)


def samples_to_us(stamps: list[tuple[int, int]], sampling_rate: int) -> np.ndarray:
    """Sample indices / rate, rounded to the microsecond (clarification 1)."""
    out = np.array([(to_us(a / sampling_rate), to_us(b / sampling_rate)) for a, b in stamps], np.int64).reshape(-1, 2)
    if out.size and (np.any(out[:, 0] >= out[:, 1]) or np.any(out[1:, 0] < out[:-1, 1])):
        raise FdbuError("vad", None, f"Silero returned segments that are not sorted and disjoint: {stamps}")
    return out
