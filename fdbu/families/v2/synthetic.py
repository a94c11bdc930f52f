"""Synthetic v2 runs as upstream leaves them (fdbu synth family=v2 layout=official): a session's folder and the stub
judge's processed answer placed on the generator's known turns (its `Layout.synth`)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import soundfile as sf

from ...common.audio import SAMPLE_RATE as SR, wav_bytes
from .files import TASK_KEY, TURN_KEY, transcripts_bytes
from .runs import JUDGE_SUFFIX, TRIM_S


def stub_judge(intended: dict, T: float, index: int) -> dict:
    """A processed judge output placed on the generator's known turns: one event per examiner turn end, its window
    around the end and the answer (after a mute system's end: the silence there, an event with no speech in it),
    its turn-taking score from what happened there (answered within 1 s: 5, 2 s: 4, later: 3; overlapped: 2;
    no answer: 1), an instruction score and a task score that follow no timing. Windows end by T and by 120 s: the
    judge reads transcripts of audio trimmed to 120 s (eval/run_evaluation.sh runs the trim and --max_time 120)."""
    T = min(T, float(TRIM_S))
    events = []
    for k, e in enumerate(intended["turn_ends"]):
        end, outcome = e["end_s"], e["outcome"]
        if outcome == "response":
            window = [max(0.0, end - 1.0), end + e["latency_s"] + 1.0]
            tt = 5 if e["latency_s"] < 1.0 else 4 if e["latency_s"] < 2.0 else 3
        elif outcome == "overlapped":
            window, tt = [max(0.0, end - 1.5), end + 1.0], 2
        else:
            window, tt = [end + 0.3, end + 2.8], 1
        window = [round(min(x, T), 2) for x in window]
        if window[1] > window[0]:
            events.append([window, tt, 1 + (index + k) % 5])
    return {TURN_KEY: events, TASK_KEY: 1 + index % 5}


def write_synthetic(root: Path, subset: str, index: int, cap, annotation: dict, transcript: dict, intended: dict,
                    more: dict) -> str:
    """One synthetic session as upstream leaves it: `<root>/<split>/<task id>/` with A.wav, B.wav (every third one
    0.1-0.2 s short, as two tracks that arrive apart are), combined.wav, A.json, B.json (asr_batch.py's indent=4)
    and transcripts.json, and the stub judge's `<root>/eval_results/<split>/<task id>_processed.json`."""
    split, task = annotation["split"], annotation["task_id"]
    folder = root / split / task
    folder.mkdir(parents=True)
    a, b = more["input.wav"], cap
    short = (index % 3) * int(0.1 * SR)
    b_audio = b.audio[:len(b.audio) - short] if short else b.audio
    (folder / "A.wav").write_bytes(wav_bytes(a.audio))
    (folder / "B.wav").write_bytes(wav_bytes(b_audio))
    n = min(len(a.audio), len(b_audio))
    sf.write(str(folder / "combined.wav"), np.stack([a.audio[:n], b_audio[:n]], axis=1), SR, subtype="PCM_16")
    a_doc, b_doc = a.transcript(), transcript
    (folder / "A.json").write_text(json.dumps(a_doc, indent=4))
    (folder / "B.json").write_text(json.dumps(b_doc, indent=4))
    (folder / "transcripts.json").write_bytes(transcripts_bytes(a_doc, b_doc))
    judged = root / "eval_results" / split
    judged.mkdir(parents=True, exist_ok=True)
    (judged / f"{task}{JUDGE_SUFFIX}").write_text(json.dumps(stub_judge(intended, a.n / SR, index), indent=2))
    return f"{subset}/{task}"
