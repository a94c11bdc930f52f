"""Real synthetic speech: the shipped word bank (espeak-ng words, 16 kHz) and a capture being built from it, with
the transcript of exactly the words placed. A leaf: the calibration corpus (fdbu.vad.calibration) reads the bank
without the generators or the task registry."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import soundfile as sf

from ..common.audio import SAMPLE_RATE as SR, wav_bytes

GAP_S = 0.05  # between words of one utterance: far below Silero's 100 ms minimum silence
BANK = Path(__file__).parent / "bank"


@lru_cache(maxsize=1)
def bank() -> tuple[list[str], list[np.ndarray]]:
    index = json.loads((BANK / "words.json").read_text())
    audio, sr = sf.read(str(BANK / "words.flac"), dtype="int16")
    assert sr == SR
    words = index["words"]
    return [w["word"] for w in words], [audio[w["offset"]:w["offset"] + w["samples"]] for w in words]


@dataclass
class Capture:
    """One sample's output being built: audio samples and the transcript words placed."""

    n: int
    rng: np.random.Generator
    audio: np.ndarray = field(init=False)
    words: list[tuple[str, int, int]] = field(default_factory=list)  # (text, start, end) in samples

    def __post_init__(self):
        self.audio = np.zeros(self.n, np.int16)

    def _word(self) -> tuple[str, np.ndarray]:
        names, clips = bank()
        k = int(self.rng.integers(len(names)))
        return names[k], clips[k]

    def place(self, start: int, name: str, clip: np.ndarray) -> int:
        """Put one word at `start` (cut at T); returns the sample after it."""
        end = min(start + len(clip), self.n)
        if end > start:
            self.audio[start:end] = clip[:end - start]
            self.words.append((name, start, end))
        return end

    def say(self, start_s: float, *, words: int | None = None, until_s: float | None = None) -> float:
        """Speak from start_s: `words` words, or words until one ends at or after until_s (or T)."""
        pos, said = int(round(start_s * SR)), 0
        limit = self.n if until_s is None else int(round(until_s * SR))
        while pos < self.n and (said < words if words is not None else pos < limit):
            pos = self.place(pos, *self._word()) + int(GAP_S * SR)
            said += 1
        return pos / SR

    def say_backwards(self, end_s: float, from_s: float) -> None:
        """Fill [from_s, end_s) with words placed right to left, ending at end_s."""
        end = int(round(end_s * SR))
        while True:
            name, clip = self._word()
            start = end - len(clip)
            if start < int(round(from_s * SR)):
                return
            self.place(start, name, clip)
            end = start - int(GAP_S * SR)

    def transcript(self, from_s: float = 0.0) -> dict:
        """output.json in the Full-Duplex-Bench format, words starting at or after from_s."""
        chunks: list[dict[str, Any]]
        chunks = [{"text": t, "timestamp": [round(a / SR, 3), round(b / SR, 3)]}
                  for t, a, b in sorted(self.words, key=lambda w: w[1]) if round(a / SR, 3) >= from_s]
        return {"text": " ".join(c["text"] for c in chunks), "chunks": chunks}

    def wav(self) -> bytes:
        return wav_bytes(self.audio)
