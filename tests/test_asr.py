"""The ASR stage on NeMo's real transcription path, with tiny random models built here: a
Conformer-RNNT and a FastConformer-TDT (Parakeet's head: durations, TDT word times)."""
import builtins
import hashlib
import json

import numpy as np
import pytest
from importlib.util import find_spec
import soundfile as sf

# the asr extra, told by its package's presence: importing NeMo (10-15 s) is left to the tests that use it, not
# paid by every worker that collects this file
pytestmark = [pytest.mark.skipif(find_spec("nemo.collections.asr") is None, reason="the asr extra (nemo_toolkit[asr]) is not installed"),
              pytest.mark.slow]

from builders import untranscribed  # noqa: E402
from fdbu.asr import nemo_model  # noqa: E402
from fdbu.asr.nemo_model import ParakeetASR  # noqa: E402
from fdbu.asr.stage import _jobs, run  # noqa: E402
from fdbu.errors import FdbuError  # noqa: E402
from fdbu.tree.load import load_tree  # noqa: E402

UI = "synthetic_user_interruption"


@pytest.fixture(scope="session", params=["rnnt", "tdt"])
def kind(request):
    return request.param


@pytest.fixture(scope="session")
def checkpoint(built, kind):
    return built(kind)[0]


@pytest.fixture(scope="session")
def model(built, kind):
    return built(kind)[1]


def transcripts(tree):
    return {str(p.relative_to(tree)): p.read_bytes() for p in sorted(tree.glob("*/*/output.json"))}


def test_cut_at_R_offset_added_back_and_the_official_format(synth_tree, tmp_path, model, checkpoint):
    tree = untranscribed(synth_tree, tmp_path / "t")
    path, counts = run(tree, lambda: model, batch_size=4, cache_dir=None)
    manifest = json.loads((tree / "manifest.json").read_text())
    eligible = [r for r in manifest["samples"] if r["eligible"]]
    assert counts == {"kept": 0, "from_cache": 0, "transcribed": len(eligible), "verified": 2,  # auto, >= 50 files
                      "nemo_batch_size": 4, "decoding": model.decoding}
    assert len(eligible) >= 50
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
    # a checkpoint given without asr.model is named by its weights, not by its file name (which could be anything)
    assert receipt["config"]["model_id"] == f"checkpoint sha256:{model.checkpoint_sha256[:12]}"
    assert receipt["config"]["nemo_version"] and receipt["config"]["source"] == "fdbu asr"
    assert receipt["config"]["batch_size"] == 4  # asked for; and the files per NeMo call it got, and how
    assert receipt["config"]["nemo_batch_size"] == model.files_per_call(4)
    assert receipt["config"]["decoding"] == model.decoding
    assert receipt["subsets"][UI]["task"] == "user_interruption"
    assert receipt["subsets"]["candor_turn_taking"]["task"] == "default"
    for subset, entry in receipt["subsets"].items():
        for name, digest in entry["transcripts"].items():
            assert hashlib.sha256((tree / subset / name / "output.json").read_bytes()).hexdigest() == digest
    load_tree(tree)  # the scorer accepts what the stage wrote


def test_checkpoint_hash_is_recorded(checkpoint, model):
    assert model.checkpoint_sha256 == hashlib.sha256(checkpoint.read_bytes()).hexdigest()


def call_sizes(model, monkeypatch) -> list[int]:
    """The number of files of every NeMo transcribe call, and the batch size it was given."""
    sizes, real = [], model.model.transcribe

    def spy(audio, **kw):
        sizes.append((len(audio), kw["batch_size"]))
        return real(audio, **kw)

    monkeypatch.setattr(model.model, "transcribe", spy)
    return sizes


def test_batch_sizes_1_4_16_give_the_same_words_and_times(synth_tree, tmp_path, model, kind, monkeypatch):
    """Files of mixed lengths (every subset, interruption outputs cut at R) in batches of 1, 4 and 16:
    the same output.json bytes, with NeMo decoding several files per call (TDT through the durations
    fix, which test_nemo_3_0_0_batched_tdt_... shows is needed)."""
    out, sizes = {}, call_sizes(model, monkeypatch)
    for bs in (1, 4, 16):
        tree = untranscribed(synth_tree, tmp_path / f"b{bs}")
        path, counts = run(tree, lambda: model, batch_size=bs, max_batch_seconds=60, cache_dir=None, verify=0)
        out[bs] = transcripts(tree)
        config = json.loads(path.read_text())["config"]
        assert (config["batch_size"], config["nemo_batch_size"]) == (bs, bs)
        assert config["decoding"] == (nemo_model.BATCHED_FIXED if kind == "tdt" else nemo_model.BATCHED)
    assert out[1] == out[4] == out[16]
    lengths = {len(json.loads(v)["chunks"]) for v in out[1].values()}
    assert max(n for n, bs in sizes if bs == 16) > 4 and len(lengths) > 5  # batches of many files, of many lengths


def test_nemo_3_0_0_batched_tdt_mixes_up_durations_and_the_fix_keeps_them(synth_tree, built):
    """NVIDIA-NeMo/Speech#16097 in the installed NeMo: its batched greedy TDT loop on the plain PyTorch
    path keeps tokens and frames but stores some tokens' durations from a later step. fdbu's fix
    (NeMo's source with the one line of PR #16098) decodes every file as it decodes alone. If the
    first assertion fails, the installed NeMo has the fix and fdbu falls back (see the next test)."""
    nemo_model.require_nemo()  # NeMo loaded as fdbu loads it, first (tests/leaks.py)
    from nemo.collections.asr.parts.submodules.transducer_decoding.tdt_label_looping import (
        GreedyBatchedTDTLabelLoopingComputer as Loop)

    fresh = ParakeetASR(built("tdt")[0])  # NeMo's loop as installed: the fix is set on first use only
    audios = [sf.read(str(p), dtype="float32")[0] for p in sorted(synth_tree.glob("*/*/output.wav"))]

    def steps(batch_size):
        hyps = fresh.model.transcribe(audios, batch_size=batch_size, timestamps=True, verbose=False)
        return [[(int(t), int(f), int(d)) for t, f, d in zip(h.y_sequence, h.timestamp["timestep"], h.token_duration)]
                for h in hyps]

    alone, together = steps(1), steps(16)
    assert [[s[:2] for s in h] for h in together] == [[s[:2] for s in h] for h in alone]
    assert sum(a != b for x, y in zip(together, alone) for a, b in zip(x, y)) > 10
    loop = nemo_model._tdt_loop(fresh.model)
    assert loop.torch_impl.__func__ is Loop.torch_impl
    assert fresh.decoding == nemo_model.BATCHED_FIXED and loop.torch_impl.__func__ is not Loop.torch_impl
    assert steps(16) == steps(4) == alone


def test_the_fix_applies_only_to_the_source_it_was_written_for(synth_tree, tmp_path, built, monkeypatch):
    """Another NeMo (here: another expected SHA-256): no fix, one file per NeMo call, and the reason in a note
    (the `fdbu` logger's, which the CLI prints; caught here by a handler of the test's own, whatever ran before
    in this process); the transcripts are those of the fixed batches."""
    import logging

    notes: list = []
    catch = logging.Handler(logging.WARNING)
    catch.emit = lambda record: notes.append(record.getMessage())  # type: ignore[method-assign]
    monkeypatch.setattr(logging.getLogger("fdbu"), "handlers", [*logging.getLogger("fdbu").handlers, catch])
    fixed = untranscribed(synth_tree, tmp_path / "fixed")  # first: the shared model settles its way unpatched
    path, _ = run(fixed, lambda: built("tdt")[1], batch_size=16, cache_dir=None, verify=0)
    assert json.loads(path.read_text())["config"]["decoding"] == nemo_model.BATCHED_FIXED
    monkeypatch.setattr(nemo_model, "TDT_LOOP_SHA256", "0" * 64)
    fresh = ParakeetASR(built("tdt")[0])
    sizes = call_sizes(fresh, monkeypatch)
    tree = untranscribed(synth_tree, tmp_path / "t")
    path, counts = run(tree, lambda: fresh, batch_size=16, cache_dir=None, verify=4)
    err = "\n".join(notes)
    assert "batched TDT loop (tdt_label_looping.py, torch_impl) is not the NeMo 3.0.0 source" in err
    assert "expected 000000000000...); NeMo decodes one file per call" in err
    assert sizes and all(bs == 1 for _, bs in sizes)  # NeMo's batch_size: one file per forward pass
    config = json.loads(path.read_text())["config"]
    assert (config["batch_size"], config["nemo_batch_size"], config["decoding"]) == (16, 1, nemo_model.ONE_FILE)
    assert counts["verified"] == 0  # nothing is decoded several per call, so nothing to check
    assert nemo_model._tdt_loop(fresh.model).torch_impl.__func__.__name__ == "torch_impl"
    assert not getattr(nemo_model._tdt_loop(fresh.model).torch_impl, "fdbu_fixed", False)
    assert transcripts(tree) == transcripts(fixed)


def test_where_batches_differ_the_sentinel_says_so_and_every_file_is_decoded_one_per_call(synth_tree, tmp_path, built,
                                                                                            monkeypatch, caplog):
    """A first `fdbu asr` never ends in the sentinel's refusal (issue 73: on a GPU, batched decoding differed and the
    run stopped with "rerun with asr.batch_size=1"): a decoder made to differ when batched (NeMo 3.0.0's TDT loop
    with a fix that fixes nothing) is said in one note, and every file is decoded one per call, word for word and time
    for time what a batch_size=1 run writes, asr.json saying how."""
    import logging
    import re

    tree = untranscribed(synth_tree, tmp_path / "t")
    _, counts = run(tree, lambda: built("tdt")[1], batch_size=16, cache_dir=None, verify=5)
    assert counts["verified"] == 5 and counts["decoding"] != nemo_model.ONE_FILE  # batches that agree stay batches
    one = untranscribed(synth_tree, tmp_path / "one")
    run(one, lambda: built("tdt")[1], batch_size=1, cache_dir=None)
    monkeypatch.setattr(nemo_model, "KEPT_DURATIONS", nemo_model.STALE_DURATIONS)  # a fix that fixes nothing
    fresh = ParakeetASR(built("tdt")[0])
    again = untranscribed(synth_tree, tmp_path / "again")
    with caplog.at_level(logging.WARNING, logger="fdbu"):
        _, counts = run(again, lambda: fresh, batch_size=16, cache_dir=None, verify=5)
    said = [r.getMessage() for r in caplog.records if "asr.verify" in r.getMessage()]
    assert len(said) == 1 and re.fullmatch(
        r"fdbu asr: asr.verify: NeMo decoding 16 files per call \(batched, TDT durations fixed\) gave other words or "
        r"times than one file per call on [1-5] of 5 files checked \(\S+ output.wav: word \d+: .*\); every file is "
        r"decoded one per call, as the official asr.py does \(asr.batch_size=1 asks for that from the start\)", said[0]), \
        said
    assert counts["decoding"] == nemo_model.ONE_FILE and counts["nemo_batch_size"] == 1 and counts["verified"] == 5
    assert transcripts(again) == transcripts(one) and len(transcripts(again)) == len(transcripts(tree))
    from fdbu.asr.stage import decoding_note

    assert decoding_note(counts) == "; NeMo: one file per call, up to 1 files per call; 5 files decoded both ways " \
        "differed, so every file one per call"
    config = json.loads((again / "asr.json").read_text())["config"]
    assert (config["decoding"], config["nemo_batch_size"], config["batch_size"]) == (nemo_model.ONE_FILE, 1, 16)


def test_resume_after_an_interrupted_run(synth_tree, tmp_path, built, monkeypatch):
    model = built("rnnt")[1]  # the journal does not care which decoder wrote the transcripts
    tree = untranscribed(synth_tree, tmp_path / "t")
    real, calls = ParakeetASR.transcribe, []

    def dies_after_one_batch(self, audios, batch_size):
        calls.append(len(audios))
        if len(calls) > 1:
            raise KeyboardInterrupt
        return real(self, audios, batch_size)

    monkeypatch.setattr(ParakeetASR, "transcribe", dies_after_one_batch)
    with pytest.raises(KeyboardInterrupt):  # no sentinel: its NeMo calls would come first
        run(tree, lambda: model, batch_size=3, cache_dir=tmp_path / "cache", verify=0)
    monkeypatch.setattr(ParakeetASR, "transcribe", real)
    assert not (tree / "asr.json").exists() and len(transcripts(tree)) == 3
    # a transcript the stopped run did not write is still refused ...
    other = next(p for p in sorted(tree.glob("*/*/output.wav")) if not (p.parent / "output.json").exists())
    (other.parent / "output.json").write_text('{"text": "", "chunks": []}')
    with pytest.raises(FdbuError, match="pass asr.resume=true"):
        run(tree, lambda: model, batch_size=3, cache_dir=tmp_path / "cache")
    (other.parent / "output.json").unlink()
    # ... while the next run continues the stopped one by its journal, no option needed
    _, counts = run(tree, lambda: model, batch_size=3, cache_dir=tmp_path / "cache")
    assert counts["kept"] == 3 and counts["transcribed"] == len(transcripts(tree)) - 3
    assert not (tree / ".fdbu-asr.journal").exists()
    fresh = untranscribed(synth_tree, tmp_path / "fresh")
    run(fresh, lambda: model, batch_size=3, cache_dir=None)
    assert transcripts(tree) == transcripts(fresh)
    with pytest.raises(FdbuError, match="already has asr.json"):
        run(tree, lambda: model, cache_dir=None)


def test_cache_skips_unchanged_outputs(synth_tree, tmp_path, built):
    model = built("rnnt")[1]
    first = untranscribed(synth_tree, tmp_path / "first")
    run(first, lambda: model, cache_dir=tmp_path / "cache")
    again = untranscribed(synth_tree, tmp_path / "again")  # a re-export of the same outputs
    _, counts = run(again, lambda: model, cache_dir=tmp_path / "cache")
    assert counts["transcribed"] == 0 and counts["from_cache"] == len(transcripts(again))
    assert transcripts(again) == transcripts(first)


def test_empty_and_silent_audio_are_not_errors(model):
    # the tiny models are built to hear nothing in silence: NeMo's empty hypothesis, not a skipped call
    silent, empty = model.transcribe([np.zeros(16000, np.float32), np.zeros(0, np.float32)], 2)
    assert silent == [] and empty == []


def test_the_adapter_reads_what_nemo_returns_for_rnnt_and_tdt_alike():
    nemo_model.require_nemo()  # NeMo loaded as fdbu loads it, first (tests/leaks.py)
    from nemo.collections.asr.parts.utils.rnnt_utils import Hypothesis

    def hyp(text, timestamp):
        return Hypothesis(score=0.0, y_sequence=[], text=text, timestamp=timestamp)

    # an empty hypothesis: a dict of empty lists with timestamps, [] without
    assert nemo_model.words_of(hyp("", {"timestep": [], "char": [], "word": [], "segment": []})) == []
    assert nemo_model.words_of(hyp("", [])) == []
    words = [{"word": "go", "start_offset": 3, "end_offset": 3, "start": 0.24, "end": 0.24},
             {"word": "on", "start_offset": 5, "end_offset": None, "start": 0.4, "end": None}]
    assert nemo_model.words_of(hyp("go on", {"word": words})) == [
        nemo_model.Word("go", 0.24, 0.24), nemo_model.Word("on", 0.4, None)]  # TDT duration 0; a null end
    with pytest.raises(FdbuError, match="'go on' without word timestamps"):
        nemo_model.words_of(hyp("go on", [3, 5]))


def record_hypotheses(model, monkeypatch) -> dict:
    """SHA-256 of each waveform handed to NeMo -> the hypothesis NeMo returned for it."""
    seen, real = {}, model.model.transcribe

    def spy(audio, **kw):
        hyps = real(audio, **kw)
        for a, h in zip(audio, hyps):
            seen[hashlib.sha256(a.tobytes()).hexdigest()] = h
        return hyps

    monkeypatch.setattr(model.model, "transcribe", spy)
    return seen


def words_from_frames(model, hyp) -> list[tuple[str, float, float, int]]:
    """(word, start, end, duration of its last token) from the hypothesis' own tokens: a word is a
    piece starting with the SentencePiece space and the pieces after it; it starts at its first
    token's frame and ends at its last token's frame plus that token's TDT duration (RNNT: plus
    one frame); a frame is the mel hop times the encoder's subsampling."""
    nemo = model.model
    stride = nemo.cfg.preprocessor.window_stride * nemo.encoder.subsampling_factor
    assert stride == pytest.approx(0.08)  # Parakeet's: 10 ms hop, subsampling x8
    sp = nemo.tokenizer.tokenizer
    ids = [int(t) for t in hyp.y_sequence]
    frames = [int(f) for f in hyp.timestamp["timestep"]]
    tdt = nemo.cfg.decoding.get("model_type") == "tdt"
    durations = [int(d) for d in hyp.token_duration] if tdt else [1] * len(ids)
    assert len(frames) == len(durations) == len(ids)
    words = []
    for tok, frame, dur in zip(ids, frames, durations):
        if sp.id_to_piece(tok).startswith("\u2581") or not words:
            words.append([[tok], frame, frame + dur, dur])
        else:
            words[-1][0].append(tok)
            words[-1][2:] = [frame + dur, dur]
    return [(sp.decode(toks), f0 * stride, f1 * stride, d) for toks, f0, f1, d in words]


def transcript_problems(tree, model, seen) -> tuple[list, list[int], int]:
    """Every output.json word that differs from the words derived from its hypothesis (R added
    back), the durations of the words' last tokens, and the number of words."""
    problems, last_durations, n = [], [], 0
    for job in _jobs(tree):
        chunks = json.loads((job.folder / "output.json").read_text())["chunks"]
        audio = job.audio()
        want = words_from_frames(model, seen[hashlib.sha256(audio.tobytes()).hexdigest()]) if len(audio) else []
        got = [(c["text"], c["timestamp"][0], c["timestamp"][1]) for c in chunks]
        if len(got) != len(want):
            problems.append((job.sample_id, "word count", len(got), len(want)))
        for g, (text, start, end, dur) in zip(got, want):
            w = (text, start + job.offset, end + job.offset)
            if g != pytest.approx(w, abs=1e-9):  # float rounding only: a frame is 0.08 s
                problems.append((job.sample_id, g, w))
            last_durations.append(dur)
        n += len(want)
    return problems, last_durations, n


def test_word_times_are_the_hypothesis_frames_and_durations(synth_tree, tmp_path, model, kind, monkeypatch):
    tree = untranscribed(synth_tree, tmp_path / "t")
    seen = record_hypotheses(model, monkeypatch)
    run(tree, lambda: model, batch_size=4, cache_dir=None)
    problems, last_durations, n = transcript_problems(tree, model, seen)
    assert problems == [] and n > 50
    if kind == "tdt":  # the check can tell TDT ends from RNNT ends (+1 frame) and zero-length words occur
        assert 0 in last_durations and max(last_durations) >= 2


def test_the_check_fails_when_tdt_durations_are_ignored(synth_tree, tmp_path, built, monkeypatch):
    """A deliberately broken timestamp path: NeMo's TDT decoding made to place token ends the RNNT
    way (one frame after the token), ignoring the predicted durations."""
    nemo_model.require_nemo()  # NeMo loaded as fdbu loads it, first (tests/leaks.py)
    from nemo.collections.asr.parts.submodules.rnnt_decoding import AbstractRNNTDecoding

    model = built("tdt")[1]
    tree = untranscribed(synth_tree, tmp_path / "t")
    seen = record_hypotheses(model, monkeypatch)
    model.model.transcribe([np.zeros(1600, np.float32)], batch_size=1, timestamps=True, verbose=False)
    monkeypatch.setattr(model.model.decoding, "_compute_offsets", AbstractRNNTDecoding._compute_offsets)
    run(tree, lambda: model, batch_size=4, cache_dir=None)
    problems, last_durations, _ = transcript_problems(tree, model, seen)
    assert len(problems) == sum(d != 1 for d in last_durations) > 0  # every word whose last duration is not 1
    assert all(got[:2] == pytest.approx(want[:2]) and got[2] != pytest.approx(want[2]) for _, got, want in problems)


def test_errors_before_any_transcription(built, tmp_path, monkeypatch):
    checkpoint = built("rnnt")[0]
    with pytest.raises(FdbuError, match="missing.nemo does not exist; give a local .nemo file, or load the model by name"):
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


def test_refuses_an_output_that_changed_after_export(synth_tree, tmp_path, built):
    model = built("rnnt")[1]
    tree = untranscribed(synth_tree, tmp_path / "t")
    wav = sorted((tree / UI).glob("*/output.wav"))[0]
    wav.write_bytes(wav.read_bytes()[:-2] + b"\x01\x00")
    with pytest.raises(FdbuError, match=rf"{UI}/\d+: output.wav: SHA-256 \w+ differs from manifest.json"):
        run(tree, lambda: model, cache_dir=None)
    assert transcripts(tree) == {} and not (tree / "asr.json").exists()
