"""The Silero adapter is exactly the spec's call on real synthetic speech, and says what it ran."""
import hashlib
import importlib.metadata
import importlib.resources
from decimal import ROUND_HALF_EVEN, Decimal

import numpy as np
import soundfile as sf
import torch
from silero_vad import get_speech_timestamps, load_silero_vad

from fdbu.vad import Job, SileroSettings
from fdbu.vad.silero import samples_to_us


def speech_wav(synth_tree):
    """An interruption output that holds speech."""
    for p in sorted((synth_tree / "synthetic_user_interruption").glob("*/output.wav")):
        audio, _ = sf.read(str(p), dtype="float32")
        if np.abs(audio).max() > 0.1:
            return p, audio
    raise AssertionError("no speech in the synthetic tree")


def test_segments_equal_the_spec_call(silero, vad, synth_tree):
    wav, audio = speech_wav(synth_tree)
    model = load_silero_vad()
    direct = get_speech_timestamps(torch.from_numpy(audio), model, threshold=0.5, min_speech_duration_ms=250,
                                   min_silence_duration_ms=100, speech_pad_ms=0, sampling_rate=16000)
    assert direct, "Silero found no speech in espeak-ng words"
    stamps = [(d["start"], d["end"]) for d in direct]
    assert silero.segment_samples(audio) == stamps
    # the split at silero-vad's own seam (probabilities, then its from_probs step) is the same call
    assert silero.segments_from_probs(silero.reference_probs(audio), len(audio)) == stamps
    job = Job("x", wav, hashlib.sha256(wav.read_bytes()).hexdigest(), len(audio))
    want = [[round(a / 16000, 6), round(b / 16000, 6)] for a, b in stamps]
    assert (vad.segments([job])[0] / 1e6).tolist() == want
    padded = get_speech_timestamps(torch.from_numpy(audio), model, sampling_rate=16000)  # Silero's 30 ms default
    assert [(d["start"], d["end"]) for d in padded] != stamps


def test_signature_names_version_model_and_settings(silero):
    sig = silero.signature()
    assert sig["silero_vad_version"] == importlib.metadata.version("silero-vad")
    path = importlib.resources.files("silero_vad.data").joinpath("silero_vad.jit")
    assert sig["model_sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert sig["settings"] == {"threshold": 0.5, "min_speech_duration_ms": 250, "min_silence_duration_ms": 100,
                               "speech_pad_ms": 0, "sampling_rate": 16000}


def exact_us(x: float) -> int:
    """Half-to-even on the float's exact binary value, by Decimal: independent of fdbu.common.timebase."""
    return int(Decimal(x).quantize(Decimal("1e-6"), rounding=ROUND_HALF_EVEN) * 1000000)


def test_sample_indices_become_rounded_microseconds():
    # 1 sample = 62.5 us: odd indices land near a half microsecond and round by the float's exact value
    stamps = [(1, 3), (16001, 16003), (123457, 480001)]
    got = samples_to_us(stamps, 16000)
    assert got.tolist() == [[exact_us(a / 16000), exact_us(b / 16000)] for a, b in stamps]


def test_settings_are_validated():
    import pytest

    from fdbu.errors import FdbuError

    with pytest.raises(FdbuError, match=r"vad.threshold=1.5: a number in \(0, 1\)"):
        SileroSettings(threshold=1.5)
    with pytest.raises(FdbuError, match="16 kHz"):
        SileroSettings(sampling_rate=8000)


def test_audio_with_nan_or_infinity_from_python_is_refused_as_the_cli_refuses_it(silero):
    """Through the Python API, as from a file (fdbu.common.audio.read_wav): NaN or infinity in the samples is refused in one
    line naming how many and where, not answered with NaN probabilities and no speech (issue 76)."""
    import pytest

    audio = np.zeros(16000, np.float32)
    audio[8000:8010] = np.nan
    audio[12000] = np.inf
    for call in (silero.segment_samples, silero.reference_probs, silero.official_backchannel_segments):
        with pytest.raises(ValueError, match=r"^the audio holds 11 non-finite samples \(NaN or infinity\), the first "
                                             r"at 0\.500 s: not a recording$"):
            call(audio)
    assert silero.reference_probs(np.zeros(16000, np.float32)).shape == (32,)  # finite audio: its 32 windows
