"""fdbu evaluate -> summary.json, and the reference column fdbu score prints beside the unified metrics."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fdbu.official import rules as official
from fdbu.errors import FdbuError
from fdbu.official.evaluate import evaluate, write
from fdbu.official.summary import reference_column

FDBU = str(Path(sys.executable).parent / "fdbu")


@pytest.fixture()
def tree(synth_tree, tmp_path):
    t = tmp_path / "tree"
    shutil.copytree(synth_tree, t)
    return t


def doc(tree, sid, file="output.json"):
    return json.loads((tree / sid / file).read_text())


@pytest.mark.slow
def test_summary_reproduces_the_rules_on_the_trees_files(tree, silero, tmp_path):
    gt = {str(i): list(map(float, range(1, 11))) for i in range(20)}
    (tmp_path / "gt.json").write_text(json.dumps(gt))
    result = evaluate(tree, gt_distribution=tmp_path / "gt.json", silero=silero)
    manifest = json.loads((tree / "manifest.json").read_text())
    eligible = [r["sample_id"] for r in manifest["samples"] if r["eligible"]]
    tt = [(s.split("/")[1], doc(tree, s, "turn_taking.json"), doc(tree, s)) for s in eligible
          if s.startswith("candor_turn_taking/")]
    assert result["subsets"]["candor_turn_taking"] == official.smooth_turn_taking(tt)
    ph = [(s.split("/")[1], doc(tree, s)) for s in eligible if s.startswith("candor_pause_handling/")]
    assert result["subsets"]["candor_pause_handling"] == official.pause_handling(ph)
    ui = sorted((s for s in eligible if s.startswith("synthetic_user_interruption/")), key=lambda s: s.split("/")[1])
    assert result["subsets"]["synthetic_user_interruption"] == official.user_interruption(
        [(s, doc(tree, s), doc(tree, s, "interrupt.json")) for s in ui])
    bc = result["subsets"]["icc_backchannel"]
    assert set(bc) >= {"jsd", "take_turn_rate", "frequency_per_s"} and bc["samples"] > 0
    assert bc["icc_gt_distribution.json"]["pinned"] is False  # not the official file
    assert result["inputs"]["manifest.json"] and result["judge"] is None


@pytest.mark.slow
def test_score_prints_the_reference_column_while_the_inputs_match(tree):
    write(evaluate(tree), tree)
    out = subprocess.run([FDBU, "score", f"tree={tree}", "progress=false", "vad.cache=false"], capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stderr
    assert "reference column (official rules, from summary.json):" in out.stdout
    assert "rating pending: no judge configured" in out.stdout
    assert "  icc_backchannel: pending: needs the official icc_gt_distribution.json" in out.stdout


def test_a_changed_input_leaves_the_column_out_and_says_which(tree):
    summary = evaluate(tree)
    summary["inputs"]["asr.json"] = "0" * 64
    write(summary, tree)
    line = reference_column(tree, summary["inputs"]["manifest.json"], "f" * 64)
    assert line == ("reference column left out: summary.json was computed from a different asr.json "
                    "(run fdbu evaluate again)")


def test_refuses_to_replace_a_foreign_summary(tree):
    (tree / "summary.json").write_text('{"from": "the official scripts"}')
    with pytest.raises(FdbuError, match="not written by fdbu"):
        write(evaluate(tree), tree)
    assert json.loads((tree / "summary.json").read_text()) == {"from": "the official scripts"}


def test_backchannel_files_are_hash_checked(tree):
    wav = next((tree / "icc_backchannel").glob("*/output.json"))
    wav.write_text(wav.read_text() + " ")
    with pytest.raises(FdbuError, match=r"icc_backchannel/\d+: output.json: SHA-256 \w+ differs from asr.json"):
        evaluate(tree)


def test_a_backchannel_transcript_that_is_not_json_is_refused(tmp_path):
    from builders import sample, write_tree

    root = write_tree(tmp_path / "t", [sample("icc_backchannel", 0, 2.0, raw_transcript=b"{not json")])
    with pytest.raises(FdbuError, match=r"^icc_backchannel/0: output.json: is not valid JSON"):
        evaluate(root)


@pytest.mark.slow
def test_ids_the_official_distribution_lacks_are_named_not_a_raw_key_error(tree, silero, tmp_path):
    """Issue 54, item 5: the official icc_gt_distribution.json on a tree with ids it lacks gave "unavailable:
    KeyError: '55'". The script's failure is kept (its exception first, as the official run compares it), and said
    in fdbu's words: how many of the tree's speaker ids the file lacks, and the first few."""
    (tmp_path / "gt.json").write_text(json.dumps({"no_such_speaker": [0.5, 0.5]}))
    bc = evaluate(tree, gt_distribution=tmp_path / "gt.json", silero=silero)["subsets"]["icc_backchannel"]
    text = bc["jsd"]["unavailable"]
    assert text.startswith("KeyError: '") and "; the official icc_gt_distribution.json lacks " in text, text
    assert text.count("lacks") == 1 and "speaker ids (" in text and text.endswith("the script stops at the first it needs")
