"""Every refusal of the tree reader: one line naming the sample, the file and the problem."""
import json

import numpy as np
import pytest

from builders import interrupt_ann, pause_ann, sample, transcript, turn_ann, wav_bytes, write_tree
from fdbu.errors import FdbuError
from fdbu.tree.load import load_tree

PH, TT, UI = "synthetic_pause_handling", "candor_turn_taking", "synthetic_user_interruption"


def refuse(root, *fragments):
    with pytest.raises(FdbuError) as e:
        load_tree(root)
    msg = str(e.value)
    assert "\n" not in msg
    for f in fragments:
        assert f in msg, msg
    return msg


def good(tmp_path, **kw):
    return write_tree(tmp_path, [sample(PH, "1", 10.0, [(4.0, 4.5)], pause_ann([(3, 4)])),
                                 sample(TT, "2", 10.0, [(6.0, 6.5)], turn_ann(5.0)),
                                 sample(UI, "3", 10.0, [(7.0, 7.5)], interrupt_ann(4.0, 6.0))], **kw)


def test_good_tree_loads(tmp_path):
    tree = load_tree(good(tmp_path))
    assert [s.sample_id for s in tree.samples] == [f"{PH}/1", f"{TT}/2", f"{UI}/3"]
    assert tree.samples[1].E_us == 5_000_000 and tree.samples[2].T_us == 10_000_000


def test_refuses_tree_without_asr_json(tmp_path):
    (good(tmp_path) / "asr.json").unlink()
    refuse(tmp_path, "was exported but not transcribed (manifest.json, no asr.json); run fdbu asr tree=")


def test_refuses_malformed_manifest(tmp_path):
    (good(tmp_path) / "manifest.json").write_text("{not json")
    refuse(tmp_path, "manifest.json", "is not valid JSON (line 1")


@pytest.mark.parametrize("words,problem", [
    ([(float("nan"), 1.0)], "word 0 start is nan; times must be finite"),
    ([(float("inf"), None)], "word 0 start is inf"),
    ([(4.0, float("nan"))], "word 0 end is nan"),
    ([("4.0", None)], "word 0 start is '4.0', not a number"),
    ([(10.5, 11.0)], "word 0 start 10.500000 s lies outside the window [0, 10.000000] s"),
    ([(-0.1, 0.0)], "lies outside the window"),
])
def test_refuses_bad_word_times(tmp_path, words, problem):
    write_tree(tmp_path, [sample(TT, "2", 10.0, words, turn_ann(5.0))])
    refuse(tmp_path, f"{TT}/2", "output.json", problem)


def test_word_end_is_not_range_checked_and_null_end_is_zero_length(tmp_path):
    write_tree(tmp_path, [sample(TT, "2", 10.0, [(9.5, 12.0), (9.0, None)], turn_ann(5.0))])
    s = load_tree(tmp_path).samples[0]
    assert s.word_end.tolist() == [12_000_000, 9_000_000]


def test_word_start_a_hair_past_T_is_inside_after_rounding(tmp_path):
    write_tree(tmp_path, [sample(TT, "2", 10.0, [(10.0000000000004, None)], turn_ann(5.0))])
    assert load_tree(tmp_path).samples[0].word_start.tolist() == [10_000_000]


@pytest.mark.parametrize("pauses,problem", [
    ([], "lists no pause"),
    ([(4, 3)], "pause 0 starts at 4.000000 s, after its end 3.000000 s"),
    ([(3, 4), (3.5, 5)], "pause 1 [3.500000, 5.000000] s is not sorted after, or overlaps, pause 0"),
    ([(5, 6), (3, 4)], "is not sorted after"),
    ([(3, 11)], "pause 0 end 11.000000 s lies outside the window"),
])
def test_refuses_bad_pauses(tmp_path, pauses, problem):
    write_tree(tmp_path, [sample(PH, "1", 10.0, [], pause_ann(pauses))])
    refuse(tmp_path, f"{PH}/1", "pause.json", problem)


def test_touching_pauses_are_valid(tmp_path):
    write_tree(tmp_path, [sample(PH, "1", 10.0, [], pause_ann([(3, 4), (4, 4), (4, 5)]))])
    assert load_tree(tmp_path).samples[0].pauses.tolist() == [[3_000_000, 4_000_000], [4_000_000, 4_000_000],
                                                             [4_000_000, 5_000_000]]


@pytest.mark.parametrize("ann,problem", [
    (turn_ann(10.5), "E 10.500000 s lies outside the window"),
    ([], "is empty"),
    ([{"timestamp": [None, 1]}], "E (timestamp[0]) is None, not a number"),
])
def test_refuses_bad_turn_end(tmp_path, ann, problem):
    write_tree(tmp_path, [sample(TT, "2", 10.0, [], ann)])
    refuse(tmp_path, f"{TT}/2", "turn_taking.json", problem)


@pytest.mark.parametrize("S,R,words,file,problem", [
    (6.0, 4.0, [], "interrupt.json", "S 6.000000 s is after R 4.000000 s"),
    (4.0, 10.2, [], "interrupt.json", "R 10.200000 s lies outside the window"),
    (4.0, 6.0, [(5.9, 6.2)], "output.json", "word 0 starts at 5.900000 s, before R = 6.000000 s"),
])
def test_refuses_bad_interruption(tmp_path, S, R, words, file, problem):
    write_tree(tmp_path, [sample(UI, "3", 10.0, words, interrupt_ann(S, R))])
    refuse(tmp_path, f"{UI}/3", file, problem)


@pytest.mark.parametrize("file", ["output.json", "pause.json"])
def test_refuses_changed_files_of_eligible_samples(tmp_path, file):
    root = good(tmp_path)
    path = root / PH / "1" / file
    path.write_bytes(path.read_bytes() + b" ")
    refuse(root, f"{PH}/1", file, "differs from", "asr.json" if file == "output.json" else "manifest.json")


def test_refuses_changed_interruption_audio(tmp_path):
    root = good(tmp_path)
    (root / UI / "3" / "output.wav").write_bytes(wav_bytes(np.ones(160000, np.int16)))
    refuse(root, f"{UI}/3", "output.wav", "differs from manifest.json")


def test_other_subsets_audio_is_not_read(tmp_path):
    root = good(tmp_path)
    (root / PH / "1" / "output.wav").unlink()
    load_tree(root)


def test_ineligible_samples_need_no_files(tmp_path):
    write_tree(tmp_path, [sample(UI, "3", 10.0, eligible=False, reasons=["timeout"])])
    assert load_tree(tmp_path).samples[0].eligible is False


@pytest.mark.parametrize("file", ["output.json", "interrupt.json", "output.wav"])
def test_refuses_missing_files(tmp_path, file):
    root = good(tmp_path)
    (root / UI / "3" / file).unlink()
    refuse(root, f"{UI}/3", file, "is missing")


def _rewrite_wav(root, data):
    path = root / UI / "3" / "output.wav"
    path.write_bytes(data)
    m = json.loads((root / "manifest.json").read_text())
    import hashlib
    m["samples"][2]["files"]["output.wav"] = hashlib.sha256(data).hexdigest()
    (root / "manifest.json").write_text(json.dumps(m))


@pytest.mark.parametrize("data,problem", [
    (wav_bytes(np.zeros(320000, np.int16), channels=2), "has 2 channels; fdbu needs mono"),
    (wav_bytes(np.zeros(80000, np.int16), sr=8000), "is at 8000 Hz, not the manifest's 16000 Hz"),
    (wav_bytes(np.zeros(159999, np.int16)), "not exactly T = 160000 samples (10.000000 s)"),
    (b"RIFF0000WAVEjunk", "is not a readable audio file"),
])
def test_refuses_bad_wav(tmp_path, data, problem):
    root = good(tmp_path)
    _rewrite_wav(root, data)
    refuse(root, f"{UI}/3", "output.wav", problem)


def _edit_manifest(root, fn):
    m = json.loads((root / "manifest.json").read_text())
    fn(m)
    (root / "manifest.json").write_text(json.dumps(m))


@pytest.mark.parametrize("edit,problem", [
    (lambda m: m["samples"][0].update(sample_id=f"{PH}/.."), "sample id '..' is not a plain name"),
    (lambda m: m["samples"][0].update(sample_id=f"{PH}/a/../../x"), "is not '<subset>/<id>'"),
    (lambda m: m["samples"][0].update(sample_id="../1"), "unknown subset '..'"),
    (lambda m: m["samples"][0]["files"].update({"../../etc/passwd": "0" * 64}), "file name '../../etc/passwd'"),
    (lambda m: m["samples"].append(dict(m["samples"][0])), "is listed twice"),
    (lambda m: m["samples"][0].update(task="turn_taking"), "task 'turn_taking' is not 'pause_handling'"),
    (lambda m: m["samples"][0].update(input_samples=0), "input_samples is 0, not a whole number from 1 to"),
    (lambda m: m["samples"][0].update(eligible=False, reasons=[]), "is ineligible but gives no reason"),
    (lambda m: m["declared"].update({PH: 0}), "selects 1 samples of synthetic_pause_handling, more than the 0"),
    (lambda m: m["samples"][0]["files"].pop("pause.json"), "manifest.json lists no SHA-256 for it"),
])
def test_refuses_bad_manifest_rows(tmp_path, edit, problem):
    root = good(tmp_path)
    _edit_manifest(root, edit)
    refuse(root, problem)


def test_refuses_missing_transcript_receipt(tmp_path):
    root = good(tmp_path)
    asr = json.loads((root / "asr.json").read_text())
    del asr["subsets"][TT]["transcripts"]["2"]
    asr["subsets"][UI]["task"] = "default"
    (root / "asr.json").write_text(json.dumps(asr))
    refuse(root, f"{TT}/2", "output.json", "asr.json lists no SHA-256")


def test_refuses_interruption_transcribed_without_the_cut(tmp_path):
    root = good(tmp_path)
    asr = json.loads((root / "asr.json").read_text())
    asr["subsets"][UI]["task"] = "default"
    (root / "asr.json").write_text(json.dumps(asr))
    refuse(root, f"{UI}/3", "asr.json", "task of synthetic_user_interruption is 'default', not 'user_interruption'")


def test_raw_transcript_without_chunks(tmp_path):
    write_tree(tmp_path, [sample(TT, "2", 10.0, annotation=turn_ann(5.0), raw_transcript=b'{"text": "hi"}')])
    refuse(tmp_path, f"{TT}/2", "output.json", "has no 'chunks' list")


def test_transcript_of_other_shape_is_named(tmp_path):
    bad = json.dumps({"chunks": [{"text": "x", "timestamp": [1.0]}]}).encode()
    write_tree(tmp_path, [sample(TT, "2", 10.0, annotation=turn_ann(5.0), raw_transcript=bad)])
    refuse(tmp_path, f"{TT}/2", "output.json", "word 0 has no two-element 'timestamp' list")
    assert transcript([(1.0, None)])["chunks"][0]["timestamp"] == [1.0, None]


def test_word_end_before_start_is_zero_length(tmp_path):
    write_tree(tmp_path, [sample(TT, "2", 10.0, [(5.0, 4.0)], turn_ann(5.0))])
    s = load_tree(tmp_path).samples[0]
    assert (s.word_start.tolist(), s.word_end.tolist()) == ([5_000_000], [5_000_000])


def test_refuses_a_sample_folder_that_links_out_of_the_tree(tmp_path):
    root = good(tmp_path / "tree")
    outside = tmp_path / "elsewhere"
    (root / TT / "2").rename(outside)
    (root / TT / "2").symlink_to(outside)
    refuse(root, f"{TT}/2", "outside the tree")


def test_links_inside_the_tree_are_followed(tmp_path):
    root = good(tmp_path / "tree")
    (root / TT / "2").rename(root / "store")
    (root / TT / "2").symlink_to(root / "store")
    assert load_tree(root).samples[1].E_us == 5_000_000
