"""Smooth turn-taking on hand-built samples; expected values worked out here."""
import numpy as np
import pytest

from builders import sample, turn_ann, write_tree
from conftest import check_share, percentile_interval
from fdbu.scoring.pipeline import score
from fdbu.tree.load import load_tree

SUB = "candor_turn_taking"
INF = float("inf")


@pytest.fixture(scope="module")
def scored(tmp_path_factory, vad, boot):
    root = write_tree(tmp_path_factory.mktemp("tt"), [
        sample(SUB, "a", 10.0, [(4.9, 5.2), (5.5, 6.0)], turn_ann(5.0)),  # early start, then a "good" answer
        sample(SUB, "b", 9.0, [(5.0, None)], turn_ann(5.0)),             # response at exactly E: latency 0
        sample(SUB, "c", 10.0, [(7.0, 7.2), (6.0, 6.4)], turn_ann(5.0)),  # latency exactly 1 s (word order ignored)
        sample(SUB, "d", 10.0, [(7.5, 8.0)], turn_ann(5.0)),             # latency 2.5 s
        sample(SUB, "e", 10.0, [], turn_ann(5.0)),                       # no_response
        sample(SUB, "f", 10.0, eligible=False, reasons=["late input", "hash mismatch"]),
        sample(SUB, "g", 8.5, [(6.32, 6.5)], turn_ann(6.32000000000005)),  # float noise: a response at E
    ])
    return score(load_tree(root), vad, boot)


def test_outcomes_and_latencies(scored):
    r = {x["sample_id"].split("/")[1]: x for x in scored.rows}
    assert [r[k]["outcome"] for k in "abcdeg"] == ["early_start", "response", "response", "response",
                                                   "no_response", "response"]
    assert [r[k]["latency_s"] for k in "abcdeg"] == [None, 0.0, 1.0, 2.5, None, 0.0]
    assert r["c"]["first_word_s"] == 6.0 and r["e"]["first_word_s"] is None
    assert r["f"]["reasons"] == ["late input", "hash mismatch"]


def test_shares(scored):
    entry = scored.unified["subsets"][SUB]
    m = entry["metrics"]
    check_share(m["early_start_rate"], 1, 6, 7, 1, "lower")
    check_share(m["response_rate_1s"], 3, 6, 7, 1, "higher")  # 0, 1.0 (exactly 1 s counts) and 0
    check_share(m["response_rate_2s"], 3, 6, 7, 1, "higher")
    check_share(m["response_rate_5s"], 4, 6, 7, 1, "higher")
    check_share(m["no_response_rate"], 1, 6, 7, 1, "lower")
    assert entry["counts"]["outcomes"] == {"early_start": 1, "response": 4, "no_response": 1}
    assert entry["counts"]["ineligible_reasons"] == {"hash mismatch": 1, "late input": 1}
    assert entry["min_observable_s"] == pytest.approx(2.18)  # sample g: 8.5 - 6.32


def test_latency_quantiles_with_non_responders_at_infinity(scored):
    m = scored.unified["subsets"][SUB]["metrics"]["response_latency_s"]
    lat = np.array([INF, 0.0, 1.0, 2.5, INF, 0.0])  # eligible samples in manifest order
    assert m["better"] == "lower" and m["count"] == 6 and m["observed"] == 4
    assert m["value"] == 1.0 and m["statistic"] == "median"   # ceil(0.5 * 6) = 3rd smallest of 0, 0, 1, 2.5, inf, inf
    assert m["p90"] == "not reached"  # ceil(0.9 * 6) = 6th smallest is inf
    idx = np.random.default_rng(0).integers(0, 6, size=(2000, 6))
    medians = [np.sort(lat[r])[2] for r in idx]
    want = ["not reached" if x == INF else x for x in percentile_interval(medians)]
    assert m["interval"] == want
