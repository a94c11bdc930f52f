"""The batched backend: probabilities within the margin, guarded segments equal to the reference path."""
import hashlib
import shutil

import numpy as np
import pytest
import soundfile as sf

from fdbu.errors import FdbuError
from fdbu.report import write
from fdbu.score import score_path
from fdbu.vad import MARGIN, Job, SpeechDetector
from fdbu.vad.audio import batches
from fdbu.vad.batched import BatchedSilero


def jobs_of(tree, subset="synthetic_user_interruption"):
    out = []
    for p in sorted((tree / subset).glob("*/output.wav")):
        out.append(Job(str(p.parent.name), p, hashlib.sha256(p.read_bytes()).hexdigest(), sf.info(str(p)).frames))
    return out


def test_probabilities_deviate_far_less_than_the_margin(silero, synth_tree):
    audios = [sf.read(str(p), dtype="float32")[0] for p in sorted(synth_tree.glob("*/*/output.wav"))]
    # odd lengths too: the short last window is zero-padded exactly as the reference pads it
    audios += [audios[0][:12345], audios[1][:513], audios[2][:511], np.zeros(0, np.float32)]
    batched = BatchedSilero(silero.model, "cpu").probabilities(audios)
    worst = 0.0
    for a, p in zip(audios, batched):
        ref = silero.reference_probs(a)
        assert p.shape == ref.shape == ((len(a) + 511) // 512,)
        if len(a):
            worst = max(worst, float(np.abs(p.astype(np.float64) - ref.astype(np.float64)).max()))
    assert worst < MARGIN / 5


def test_guard_recomputes_files_near_a_threshold(synth_tree):
    jobs = jobs_of(synth_tree)
    wide = SpeechDetector(backend="batched", device="cpu", cache=False, margin=0.3)
    ref = SpeechDetector(backend="reference", cache=False)
    got = wide.segments(jobs)
    speaking = sum(len(r) > 0 for r in ref.segments(jobs))
    # every file with speech crosses both thresholds, so a margin of 0.3 flags it
    assert speaking > 0 and wide.stats.recomputed >= speaking
    assert [g.tolist() for g in got] == [r.tolist() for r in ref.segments(jobs)]


def test_batched_and_reference_write_identical_unified_json(synth_tree, boot, tmp_path):
    outputs = {}
    for backend in ("reference", "batched"):
        tree = tmp_path / backend
        shutil.copytree(synth_tree, tree)
        det = SpeechDetector(backend=backend, device="cpu", cache=False, verify=3 if backend == "batched" else 0)
        write(score_path(tree, det, boot), tree)
        outputs[backend] = [(tree / f).read_bytes() for f in ("unified.json", "unified-samples.jsonl")]
        if backend == "batched":
            assert det.stats.verified == 3
    assert outputs["reference"] == outputs["batched"]


def test_verify_stops_on_a_segment_difference(synth_tree, monkeypatch):
    det = SpeechDetector(backend="batched", device="cpu", cache=False, verify=100)
    real = BatchedSilero.probabilities

    def shifted(self, audios):  # a broken backend: far outside the margin, so the guard cannot see it
        return [np.clip(p + 0.3, 0, 1).astype(np.float32) for p in real(self, audios)]

    monkeypatch.setattr(BatchedSilero, "probabilities", shifted)
    with pytest.raises(FdbuError, match="vad.verify: the batched backend's segments"):
        det.segments(jobs_of(synth_tree))


def test_loader_batches_are_bounded_by_audio_seconds(synth_tree):
    jobs = jobs_of(synth_tree)
    sizes = [sum(len(a) for _, a in b) for b in batches([(j.where, j.path, j.samples) for j in jobs], 20.0)]
    longest = max(j.samples for j in jobs)
    assert len(sizes) > 1 and all(s <= max(20 * 16000, longest) for s in sizes)
    assert sum(sizes) == sum(j.samples for j in jobs)


def test_bad_settings_are_refused():
    with pytest.raises(FdbuError, match="vad.backend='onnx'"):
        SpeechDetector(backend="onnx")
    with pytest.raises(FdbuError, match="device='tpu'"):
        SpeechDetector(device="tpu")
