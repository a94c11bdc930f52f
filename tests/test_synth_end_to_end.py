"""A synthesized tree, scored end to end with real Silero VAD, matches the outcomes it was built to have."""
import json

import pytest

from fdbu.errors import FdbuError
from fdbu.scoring.pipeline import score_path
from fdbu.synth import SYSTEMS, synthesize
from fdbu.tree.load import load_tree


def test_scorer_outcomes_match_intended_outcomes(synth_tree, vad, boot):
    truth = json.loads((synth_tree / "synth.json").read_text())["samples"]
    rows = score_path(synth_tree, vad, boot).rows
    checked = 0
    for row in rows:
        t = truth[row["sample_id"]]
        assert row["eligible"] == t["eligible"]
        for key, want in t.get("intended", {}).items():
            assert row[key] == pytest.approx(want, abs=1e-9), (row["sample_id"], t["system"], key)
            checked += 1
    outcomes = {r["outcome"] for r in rows if r["subset"] == "synthetic_user_interruption" and r["eligible"]}
    assert checked > 100 and outcomes >= {"not_exercised", "speaking_at_end", "response"}


def test_every_system_is_selectable(tmp_path):
    for system in SYSTEMS:
        tree = load_tree(synthesize(tmp_path / system, n=2, seed=1, system=system, ineligible=0.0))
        truth = json.loads((tmp_path / system / "synth.json").read_text())["samples"]
        assert {t["system"] for t in truth.values()} == {system}
        assert all(s.eligible for s in tree.samples) and len(tree.samples) == 10


def test_silent_system_is_never_exercised(tmp_path, vad, boot):
    tree = synthesize(tmp_path / "t", n=3, seed=2, system="silent", ineligible=0.0)
    entry = score_path(tree, vad, boot).unified["subsets"]["synthetic_user_interruption"]
    assert entry["counts"]["exercised"] == 0
    assert entry["metrics"]["speaking_at_end_rate"]["selected_bounds"] == [0.0, 1.0]  # visibly unmeasured


def test_same_seed_same_bytes_and_sample_i_independent_of_n(tmp_path):
    a = synthesize(tmp_path / "a", n=3, seed=5)
    b = synthesize(tmp_path / "b", n=3, seed=5)
    c = synthesize(tmp_path / "c", n=4, seed=5)
    assert (a / "manifest.json").read_bytes() == (b / "manifest.json").read_bytes()
    rel = "synthetic_user_interruption/2/output.wav"
    assert (a / rel).read_bytes() == (c / rel).read_bytes()


def test_refuses_existing_output_and_bad_settings(tmp_path):
    (tmp_path / "x").mkdir()
    with pytest.raises(FdbuError, match="already exists"):
        synthesize(tmp_path / "x", n=1)
    with pytest.raises(FdbuError, match="system='chatty'"):
        synthesize(tmp_path / "y", n=1, system="chatty")
    assert not (tmp_path / "y").exists() and [p.name for p in tmp_path.iterdir()] == ["x"]


def test_one_seed_gives_the_same_dataset_whatever_the_system(tmp_path):
    """Trees of two systems with one seed hold the same samples (T, annotations, eligibility), so they
    can be compared pair by pair; only what the system said differs."""
    a = json.loads((synthesize(tmp_path / "a", n=4, seed=6, system="mixed") / "manifest.json").read_text())
    b = json.loads((synthesize(tmp_path / "b", n=4, seed=6, system="prompt") / "manifest.json").read_text())

    def dataset(manifest):
        return [(r["sample_id"], r["eligible"], r.get("input_samples"),
                 {k: v for k, v in r.get("files", {}).items() if k != "output.wav"}) for r in manifest["samples"]]

    assert dataset(a) == dataset(b)
    assert [r.get("files", {}).get("output.wav") for r in a["samples"]] != \
        [r.get("files", {}).get("output.wav") for r in b["samples"]]
