"""Regenerate the shipped word bank: `python -m fdbu.synth.render_bank` (needs espeak-ng and sox).

Each word is rendered alone by espeak-ng, resampled to 16 kHz mono PCM16 by sox and
trimmed of leading and trailing silence, so a word's audio starts and ends where the
synthetic transcript says it does. The bank is one FLAC file plus an index of offsets.
"""
from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import soundfile as sf

BANK = Path(__file__).parent / "bank"
WORDS = ("yes okay so the answer is that we should go there first and then talk about your plan "
         "later today because it really depends on what you want to do next").split()
VOICE = "en-us"


def render_word(word: str, tmp: Path) -> np.ndarray:
    raw, out = tmp / "raw.wav", tmp / "out.wav"
    subprocess.run(["espeak-ng", "-v", VOICE, "-s", "170", "-w", str(raw), word], check=True)
    subprocess.run(["sox", str(raw), "-r", "16000", "-c", "1", "-b", "16", str(out),
                    "silence", "1", "0.01", "0.5%", "reverse", "silence", "1", "0.01", "0.5%", "reverse"], check=True)
    audio, sr = sf.read(str(out), dtype="int16")
    assert sr == 16000 and audio.ndim == 1
    return audio


def main() -> None:
    words = list(dict.fromkeys(WORDS))
    with tempfile.TemporaryDirectory() as d:
        clips = [render_word(w, Path(d)) for w in words]
    index, offset = [], 0
    for w, clip in zip(words, clips):
        index.append({"word": w, "offset": offset, "samples": len(clip)})
        offset += len(clip)
    BANK.mkdir(exist_ok=True)
    sf.write(str(BANK / "words.flac"), np.concatenate(clips), 16000, subtype="PCM_16")
    (BANK / "words.json").write_text(json.dumps({"sample_rate": 16000, "voice": VOICE, "words": index}, indent=1) + "\n")
    print(f"{len(words)} words, {offset / 16000:.1f} s of speech")


if __name__ == "__main__":
    main()
