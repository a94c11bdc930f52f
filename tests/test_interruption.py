"""User interruption on hand-built samples with given speech segments; expected values worked out here."""
import numpy as np
import pytest

from builders import interrupt_ann, sample, write_tree
from conftest import check_share, percentile_interval
from fdbu.scoring.pipeline import score
from fdbu.tree.load import load_tree

SUB = "synthetic_user_interruption"
INF = float("inf")
S, R = 4.0, 6.0
SEGMENTS = {  # seconds; every sample has T = 10
    "a": [(3, 5)],                  # stops 1.0 s after S, replies 0.5 s after R
    "b": [(3, 7)],                  # speech carried over R: speaking_at_end
    "c": [(4, 4.5), (5, 5.5), (6, 8)],  # stop 0.5, one restart at 5, a reply segment starting exactly at R
    "d": [(1, 2)],                  # silent at S: not_exercised
    "e": [(3, 10)],                 # runs to T: no observed stop
    "f": [(3.5, 4.5)],              # stops, never replies: no_response
    "h": [(5, 7)],                  # not_exercised, but speaking at the end
}
WORDS = {"a": [(6.5, 7.0)], "b": [(7.5, 8.0)], "c": [(6.0, 6.3)], "d": [(7.0, 7.5)], "e": [(6.2, 6.4)],
         "f": [], "h": [(6.5, 6.9)]}


@pytest.fixture(scope="module")
def scored(tmp_path_factory, vad, boot):
    samples = [sample(SUB, k, 10.0, WORDS[k], interrupt_ann(S, R)) for k in "abcdef"]
    samples.insert(6, sample(SUB, "g", 10.0, eligible=False, reasons=["no output"]))
    samples.append(sample(SUB, "h", 10.0, WORDS["h"], interrupt_ann(S, R)))
    tree = load_tree(write_tree(tmp_path_factory.mktemp("int"), samples))
    segs = {f"{SUB}/{k}": (np.array(v, dtype=float).reshape(-1, 2) * 1e6).astype(np.int64) for k, v in SEGMENTS.items()}
    return score(tree, vad, boot, segments=segs)


def rows(scored):
    return {r["sample_id"].split("/")[1]: r for r in scored.rows}


def test_per_sample_quantities(scored):
    r = rows(scored)
    assert {k: r[k]["outcome"] for k in "abcdefh"} == {
        "a": "response", "b": "speaking_at_end", "c": "response", "d": "not_exercised", "e": "speaking_at_end",
        "f": "no_response", "h": "not_exercised"}
    assert [r[k]["latency_s"] for k in "abcdefh"] == [0.5, None, 0.0, None, None, None, None]
    assert [r[k]["stop_s"] for k in "abcdefh"] == [1.0, 3.0, 0.5, None, None, 0.5, None]
    assert [r[k]["stop_observed"] for k in "abcdefh"] == [True, True, True, None, False, True, None]
    assert [r[k]["speech_in_interruption_s"] for k in "abcdefh"] == [1.0, 2.0, 1.0, 0.0, 2.0, 0.5, 1.0]
    assert [r[k]["restarts"] for k in "abcdefh"] == [0, 0, 1, 0, 0, 0, 1]
    assert [r[k]["speech_at_end"] for k in "abcdefh"] == [False, True, False, False, True, False, True]
    assert [r[k]["speech_before_onset"] for k in "abcdefh"] == [True, True, False, True, True, True, False]
    assert r["c"]["segments"] == [[4.0, 4.5], [5.0, 5.5], [6.0, 8.0]]
    assert r["g"]["eligible"] is False and r["g"]["reasons"] == ["no output"]


def test_shares_over_exercised_with_not_exercised_as_unknown(scored):
    entry = scored.unified["subsets"][SUB]
    c, m = entry["counts"], entry["metrics"]
    assert (c["selected"], c["eligible"], c["exercised"]) == (8, 7, 5)
    assert c["outcomes"] == {"not_exercised": 2, "speaking_at_end": 2, "response": 2, "no_response": 1}
    check_share(m["exercised_rate"], 5, 7, 8, 1, "context")  # not_exercised is a known no here
    check_share(m["speaking_at_end_rate"], 2, 5, 8, 3, "lower")
    for k in (1, 2, 5):
        check_share(m[f"response_rate_{k}s"], 2, 5, 8, 3, "higher")
    check_share(m["no_response_rate"], 1, 5, 8, 3, "lower")
    check_share(m["restart_rate"], 1, 5, 8, 3, "lower")  # h restarts but is not exercised
    assert entry["min_observable_s"] == 4.0


def test_latencies_and_pooled_speech(scored):
    m = scored.unified["subsets"][SUB]["metrics"]
    # exercised samples in manifest order: a, b, c, e, f
    response = np.array([0.5, INF, 0.0, INF, INF])
    stop = np.array([1.0, 3.0, 0.5, INF, 0.5])
    assert (m["response_latency_s"]["value"], m["response_latency_s"]["p90"]) == ("not reached", "not reached")
    assert (m["stop_latency_s"]["value"], m["stop_latency_s"]["p90"]) == (1.0, "not reached")
    idx = np.random.default_rng(0).integers(0, 5, size=(2000, 5))
    for name, lat in (("response_latency_s", response), ("stop_latency_s", stop)):
        want = percentile_interval([np.sort(lat[r])[2] for r in idx])
        assert m[name]["interval"] == ["not reached" if x == INF else x for x in want]
    speech = m["speech_s_per_interruption_s"]
    assert speech["value"] == 6.5 / 10 and speech["count"] == 5
    inside, span = np.array([1.0, 2.0, 1.0, 2.0, 0.5]) * 1e6, np.full(5, 2e6)
    assert speech["interval"] == percentile_interval([inside[r].sum() / span[r].sum() for r in idx])


def test_resamples_without_interruption_time_are_skipped(tmp_path, vad, boot):
    # S == R in one of two exercised samples: resamples drawing only that one have no interruption time
    samples = [sample(SUB, "x", 10.0, [(7.0, 7.5)], interrupt_ann(4.0, 4.0)),
               sample(SUB, "y", 10.0, [(7.0, 7.5)], interrupt_ann(4.0, 5.0))]
    segs = {f"{SUB}/x": np.array([[3_000_000, 4_500_000]]), f"{SUB}/y": np.array([[3_000_000, 4_600_000]])}
    out = score(load_tree(write_tree(tmp_path, samples)), vad, boot, segments=segs)
    m = out.unified["subsets"][SUB]["metrics"]["speech_s_per_interruption_s"]
    idx = np.random.default_rng(0).integers(0, 2, size=(2000, 2))
    kept = [r for r in idx if (r == 1).any()]
    assert m["resamples_kept"] == len(kept) < 2000
    assert m["value"] == 0.6 and m["interval"] == [0.6, 0.6]
