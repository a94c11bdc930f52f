"""Audio in and out, one way for every stage: 16 kHz mono, decoded as torchaudio.load scales it.

Silero VAD and Parakeet both take 16 kHz mono; `fdbu export` normalises every output to it
and writes PCM16, so a tree holds 16 kHz PCM16 WAV files only (docs: Definitions 19, 25).
"""
from __future__ import annotations

import io
import wave
from pathlib import Path

import numpy as np
import soundfile as sf

from ..errors import FdbuError

SAMPLE_RATE = 16000


def seconds_of(samples: int) -> float:
    return samples / SAMPLE_RATE


def read_wav(path: Path, where: str, sample_rate: int = SAMPLE_RATE) -> np.ndarray:
    """Mono float32 in [-1, 1) (PCM16 / 32768, as torchaudio.load scales it). A PCM16 file (every tree's) is read as
    its integers and scaled here: x / 32768 is exact in float32, so these are libsndfile's floats bit for bit (a test
    reads every int16 value both ways), at a quarter of its conversion's time, and never NaN."""
    try:
        with sf.SoundFile(str(path)) as f:
            sr, integers = f.samplerate, f.subtype == "PCM_16"
            if sr != sample_rate or f.channels != 1:  # refused before its samples are decoded
                raise FdbuError(where, Path(path).name, f"is not mono {sample_rate} Hz")
            audio = f.read(dtype="int16" if integers else "float32", always_2d=False)
    except FdbuError:
        raise
    except Exception as e:  # soundfile raises its own error types for unreadable files
        raise FdbuError(where, Path(path).name, f"cannot be decoded ({e})") from None
    if integers:
        scaled = audio.astype(np.float32)
        scaled *= np.float32(1 / 32768)
        return scaled
    problem = non_finite(audio, sr)  # a float WAV may hold them; speech detection would give NaN
    if problem:
        raise FdbuError(where, Path(path).name, f"{problem}: not a recording")
    return audio


def non_finite(audio: np.ndarray, sr: int) -> str | None:
    """What is wrong with audio holding NaN or infinity (a float WAV may), or None: said where it is read."""
    finite = np.isfinite(audio)
    if finite.all():  # (empty audio too)
        return None
    bad = np.flatnonzero(~finite.reshape(len(audio), -1).all(axis=1))  # frames with a non-finite sample, any channel
    return f"holds {len(bad)} non-finite samples (NaN or infinity), the first at {bad[0] / sr:.3f} s"


def pcm16(audio: np.ndarray) -> np.ndarray:
    """float in [-1, 1) -> int16: x * 32768 rounded half to even, clipped (PCM16 input comes back bit for bit)."""
    return np.clip(np.round(np.asarray(audio, np.float64) * 32768.0), -32768, 32767).astype("<i2")


def pcm16_frames(data: bytes) -> np.ndarray | None:
    """(frames, channels) int16 of a 16-bit PCM WAV's bytes (what `wav_bytes` writes, and every tree holds), read with
    the standard library's `wave` without decoding to floats; None for anything else."""
    try:
        with wave.open(io.BytesIO(data)) as w:
            if w.getsampwidth() != 2:
                return None
            channels, raw = w.getnchannels(), w.readframes(w.getnframes())
    except (wave.Error, EOFError):
        return None
    if channels < 1 or len(raw) % (2 * channels):
        return None
    return np.frombuffer(raw, "<i2").reshape(-1, channels)


def wav_bytes(samples: np.ndarray, sample_rate: int = SAMPLE_RATE) -> bytes:
    """A mono PCM16 WAV file of int16 samples (or floats, converted by `pcm16`)."""
    samples = np.asarray(samples)
    data = samples.astype("<i2") if samples.dtype.kind in "iu" else pcm16(samples)
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(sample_rate)
        w.writeframes(data.tobytes())
    return buf.getvalue()
