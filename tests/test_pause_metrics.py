"""Pause handling on hand-built samples; every expected value is worked out here."""
import numpy as np
import pytest

from builders import pause_ann, sample, write_tree
from conftest import check_share, percentile_interval
from fdbu.scoring.pipeline import score
from fdbu.tree.load import load_tree

SUB = "synthetic_pause_handling"


@pytest.fixture(scope="module")
def scored(tmp_path_factory, vad, boot):
    root = write_tree(tmp_path_factory.mktemp("pause"), [
        # A: pre-pause word carried into pause 0 (0.2 s covered), onset 6.5 inside pause 1 (0.3 s covered)
        sample(SUB, "a", 10.0, [(1.0, 1.5), (2.8, 3.2), (6.5, 6.8)], pause_ann([(3, 4), (6, 7)])),
        # B: silent
        sample(SUB, "b", 8.0, [], pause_ann([(2, 3)])),
        # C: touching pauses; a null-end word exactly at the second pause start; a word exactly at T
        sample(SUB, "c", 8.0, [(2.5, None), (8.0, 8.0)], pause_ann([(2, 2.5), (2.5, 3)])),
        # D: ineligible
        sample(SUB, "d", 8.0, eligible=False, reasons=["capture failed"]),
        # E: float noise: the pause starts at 6.32000000000005, the word at 6.32 (equal after rounding)
        sample(SUB, "e", 9.0, [(6.32, 6.5)], pause_ann([(6.32000000000005, 7)])),
    ])
    return score(load_tree(root), vad, boot)


def rows(scored):
    return {r["sample_id"].split("/")[1]: r for r in scored.rows}


def test_per_sample_flags(scored):
    r = rows(scored)
    flags = ("pause_intrusion", "inside_pause_onset", "pre_pause_speech", "carry_in", "any_speech")
    assert [r["a"][f] for f in flags] == [True, True, True, True, True]
    assert [r["b"][f] for f in flags] == [False] * 5
    assert [r["c"][f] for f in flags] == [True, True, False, False, True]
    assert [r["e"][f] for f in flags] == [True, True, False, False, True]
    assert (r["a"]["intrusion_words"], r["a"]["intruded_pauses"], r["a"]["pauses"]) == (1, 1, 2)
    assert (r["c"]["intrusion_words"], r["c"]["intruded_pauses"], r["c"]["pauses"]) == (2, 1, 2)
    assert r["a"]["pause_covered_s"] == 0.5 and r["a"]["pause_s"] == 2.0
    assert r["c"]["pause_covered_s"] == 0.0 and r["c"]["pause_s"] == 1.0
    assert r["e"]["pause_covered_s"] == 0.18 and r["e"]["first_pause_s"] == 6.32
    assert r["d"] == {"sample_id": f"{SUB}/d", "subset": SUB, "task": "pause_handling", "eligible": False,
                      "reasons": ["capture failed"]}


def test_shares_and_bounds(scored):
    entry = scored.unified["subsets"][SUB]
    assert entry["counts"] == {"declared": 10, "selected": 5, "eligible": 4, "ineligible": 1,
                               "ineligible_reasons": {"capture failed": 1}}
    assert entry["coverage"] == 0.8
    m = entry["metrics"]
    check_share(m["pause_intrusion_rate"], 3, 4, 5, 1, "lower")
    check_share(m["inside_pause_onset_rate"], 3, 4, 5, 1, "context")
    check_share(m["pre_pause_speech_rate"], 1, 4, 5, 1, "context")
    check_share(m["carry_in_rate"], 1, 4, 5, 1, "context")
    check_share(m["any_speech_rate"], 3, 4, 5, 1, "context")


def test_pooled_ratios_and_their_bootstrap(scored):
    m = scored.unified["subsets"][SUB]["metrics"]
    # per eligible sample in manifest order (a, b, c, e): intruded pauses / pauses, covered / pause microseconds
    intruded, pauses = np.array([1, 0, 1, 1]), np.array([2, 1, 2, 1])
    covered, pause_us = np.array([500000, 0, 0, 180000]), np.array([2000000, 1000000, 1000000, 680000])
    per_pause = m["pause_intrusion_per_pause"]
    assert per_pause["value"] == 3 / 6 and per_pause["count"] == 4 and per_pause["better"] == "lower"
    assert (per_pause["numerator"], per_pause["denominator"]) == (3, 6)
    cover = m["intrusion_s_per_pause_s"]
    assert cover["value"] == 680000 / 4680000
    assert cover["numerator"] == 0.68 and cover["denominator"] == 4.68  # integer microseconds / 1e6
    idx = np.random.default_rng(0).integers(0, 4, size=(2000, 4))
    assert per_pause["interval"] == percentile_interval([intruded[r].sum() / pauses[r].sum() for r in idx])
    assert cover["interval"] == percentile_interval([covered[r].sum() / pause_us[r].sum() for r in idx])
    assert cover["resamples_kept"] == 2000
