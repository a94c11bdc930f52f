"""The ASR stage on NeMo's real transcription path, with a tiny random model built here."""
import builtins
import hashlib
import json
import shutil

import numpy as np
import pytest
import soundfile as sf

pytest.importorskip("nemo.collections.asr", reason="the asr extra (nemo_toolkit[asr]) is not installed")

import tiny_asr  # noqa: E402
from fdbu.asr import nemo_model  # noqa: E402
from fdbu.asr.nemo_model import ParakeetASR  # noqa: E402
from fdbu.asr.stage import run  # noqa: E402
from fdbu.errors import FdbuError  # noqa: E402
from fdbu.tree import load_tree  # noqa: E402

UI = "synthetic_user_interruption"


@pytest.fixture(scope="session")
def checkpoint(tmp_path_factory):
    return tiny_asr.build(tmp_path_factory.mktemp("tiny-asr"))


@pytest.fixture(scope="session")
def model(checkpoint):
    return ParakeetASR(checkpoint, device="cpu")


def untranscribed(synth_tree, dest):
    """The synthetic tree as fdbu export leaves it: no output.json, no asr.json."""
    shutil.copytree(synth_tree, dest)
    (dest / "asr.json").unlink()
    for p in dest.glob("*/*/output.json"):
        p.unlink()
    return dest


def transcripts(tree):
    return {str(p.relative_to(tree)): p.read_bytes() for p in sorted(tree.glob("*/*/output.json"))}


def test_cut_at_R_offset_added_back_and_the_official_format(synth_tree, tmp_path, model):
    tree = untranscribed(synth_tree, tmp_path / "t")
    path, counts = run(tree, lambda: model, batch_size=4, cache_dir=None)
    manifest = json.loads((tree / "manifest.json").read_text())
    eligible = [r for r in manifest["samples"] if r["eligible"]]
    assert counts == {"kept": 0, "from_cache": 0, "transcribed": len(eligible)}
    some_words = 0
    for row in eligible:
        folder = tree / row["sample_id"]
        doc = json.loads((folder / "output.json").read_text())
        assert set(doc) == {"text", "chunks"} and doc["text"] == " ".join(c["text"] for c in doc["chunks"])
        if row["subset"] != UI:
            continue
        R = json.loads((folder / "interrupt.json").read_text())[0]["timestamp"][1]
        audio, _ = sf.read(str(folder / "output.wav"), dtype="float32")
        want = model.transcribe([audio[int(R * 16000):]], 1)[0]
        assert [c["timestamp"] for c in doc["chunks"]] == [[w.start + R, w.end + R] for w in want]
        assert all(c["timestamp"][0] >= R for c in doc["chunks"])
        some_words += len(want)
    assert some_words > 0
    receipt = json.loads(path.read_text())
    assert receipt["config"]["checkpoint_sha256"] == model.checkpoint_sha256
    assert receipt["config"]["model_id"] == "tiny" and receipt["config"]["nemo_version"]  # the checkpoint, tiny.nemo
    assert receipt["subsets"][UI]["task"] == "user_interruption"
    assert receipt["subsets"]["candor_turn_taking"]["task"] == "default"
    for subset, entry in receipt["subsets"].items():
        for name, digest in entry["transcripts"].items():
            assert hashlib.sha256((tree / subset / name / "output.json").read_bytes()).hexdigest() == digest
    load_tree(tree)  # the scorer accepts what the stage wrote


def test_checkpoint_hash_is_recorded(checkpoint, model):
    assert model.checkpoint_sha256 == hashlib.sha256(checkpoint.read_bytes()).hexdigest()


def test_batch_size_one_and_n_give_the_same_words_and_times(synth_tree, tmp_path, model):
    a = untranscribed(synth_tree, tmp_path / "a")
    b = untranscribed(synth_tree, tmp_path / "b")
    run(a, lambda: model, batch_size=1, cache_dir=None)
    run(b, lambda: model, batch_size=16, max_batch_seconds=60, cache_dir=None)
    assert transcripts(a) == transcripts(b)


def test_resume_after_an_interrupted_run(synth_tree, tmp_path, model, monkeypatch):
    tree = untranscribed(synth_tree, tmp_path / "t")
    real, calls = ParakeetASR.transcribe, []

    def dies_after_one_batch(self, audios, batch_size):
        calls.append(len(audios))
        if len(calls) > 1:
            raise KeyboardInterrupt
        return real(self, audios, batch_size)

    monkeypatch.setattr(ParakeetASR, "transcribe", dies_after_one_batch)
    with pytest.raises(KeyboardInterrupt):
        run(tree, lambda: model, batch_size=3, cache_dir=tmp_path / "cache")
    monkeypatch.setattr(ParakeetASR, "transcribe", real)
    assert not (tree / "asr.json").exists() and len(transcripts(tree)) == 3
    with pytest.raises(FdbuError, match="pass asr.resume=true"):
        run(tree, lambda: model, batch_size=3, cache_dir=tmp_path / "cache")
    _, counts = run(tree, lambda: model, batch_size=3, resume=True, cache_dir=tmp_path / "cache")
    assert counts["kept"] == 3 and counts["transcribed"] == len(transcripts(tree)) - 3
    fresh = untranscribed(synth_tree, tmp_path / "fresh")
    run(fresh, lambda: model, batch_size=3, cache_dir=None)
    assert transcripts(tree) == transcripts(fresh)
    with pytest.raises(FdbuError, match="already has asr.json"):
        run(tree, lambda: model, cache_dir=None)


def test_cache_skips_unchanged_outputs(synth_tree, tmp_path, model):
    first = untranscribed(synth_tree, tmp_path / "first")
    run(first, lambda: model, cache_dir=tmp_path / "cache")
    again = untranscribed(synth_tree, tmp_path / "again")  # a re-export of the same outputs
    _, counts = run(again, lambda: model, cache_dir=tmp_path / "cache")
    assert counts["transcribed"] == 0 and counts["from_cache"] == len(transcripts(again))
    assert transcripts(again) == transcripts(first)


def test_empty_and_silent_audio_are_not_errors(model):
    silent, empty = model.transcribe([np.zeros(16000, np.float32), np.zeros(0, np.float32)], 2)
    assert empty == [] and isinstance(silent, list)  # a random model may "hear" words in silence


def test_errors_before_any_transcription(checkpoint, tmp_path, monkeypatch):
    with pytest.raises(FdbuError, match="does not exist; fdbu loads a local .nemo file"):
        ParakeetASR(tmp_path / "missing.nemo")
    with pytest.raises(FdbuError, match="not the pinned asr.sha256=00"):
        ParakeetASR(checkpoint, sha256="00" * 32)
    real_import = builtins.__import__

    def no_nemo(name, *a, **k):
        if name.startswith("nemo"):
            raise ImportError(name=name)
        return real_import(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_nemo)
    with pytest.raises(FdbuError, match=r"needs NeMo, which is not installed \(nemo\): pip install 'fdbu\[asr\]'"):
        nemo_model.require_nemo()


def test_refuses_an_output_that_changed_after_export(synth_tree, tmp_path, model):
    tree = untranscribed(synth_tree, tmp_path / "t")
    wav = sorted((tree / UI).glob("*/output.wav"))[0]
    wav.write_bytes(wav.read_bytes()[:-2] + b"\x01\x00")
    with pytest.raises(FdbuError, match=rf"{UI}/\d+: output.wav: SHA-256 \w+ differs from manifest.json"):
        run(tree, lambda: model, cache_dir=None)
    assert transcripts(tree) == {} and not (tree / "asr.json").exists()
