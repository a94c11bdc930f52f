"""The official evaluator's rules (reference column), on hand-built transcripts."""
import numpy as np
import pytest

from fdbu import official


def words(*spans):
    return [{"text": f"w{i}", "timestamp": [a, b]} for i, (a, b) in enumerate(spans)]


def test_pause_take_turn_rule():
    assert official.take_turn_pause([]) == 0
    assert official.take_turn_pause(words((2.0, 2.3), (2.4, 2.9))) == 0        # <= 3 words within 1 s
    assert official.take_turn_pause(words((2.0, 2.2), (2.2, 2.4), (2.4, 2.6), (2.6, 2.8))) == 1  # 4 words
    assert official.take_turn_pause(words((2.0, 2.3), (2.5, 3.0))) == 1        # span of exactly 1 s
    assert official.take_turn_pause(words((0.1, 0.4))) == 0                    # even before any pause: not read
    assert official.take_turn_pause(words((2.0, 2.1), (3.5, None))) == 1       # null last end: its start counts
    r = official.pause_handling([[], words((1.0, 2.5)), words((1.0, 1.1))])
    assert r == {"take_turn_rate": 1 / 3, "samples": 3}


def test_pause_handling_of_nothing_is_the_scripts_zero_division():
    assert "ZeroDivisionError" in official.pause_handling([])["take_turn_rate"]["unavailable"]


def test_turn_taking_clamps_negative_latency_and_drops_non_takers():
    samples = [(words((4.0, 5.5)), 5.0),            # starts before E: latency -1.0 -> 0
               (words((6.0, 7.5)), 5.0),            # latency 1.0
               (words((6.0, 6.2)), 5.0),            # one short word: no takeover, not in the latency mean
               ([], 5.0)]                           # silent: no takeover
    r = official.smooth_turn_taking(samples)
    assert r["take_turn_rate"] == 0.5 and r["latency_s"] == 0.5 and r["takeovers"] == 2


def test_turn_taking_null_last_end_makes_the_number_unavailable():
    r = official.smooth_turn_taking([(words((6.0, 6.5), (7.0, None)), 5.0)])
    assert r["take_turn_rate"]["unavailable"].startswith("TypeError") and r["latency_s"] == r["take_turn_rate"]


def test_turn_taking_with_no_takeover_prints_zero_latency():
    assert official.smooth_turn_taking([([], 5.0)]) == {"take_turn_rate": 0.0, "latency_s": 0.0, "samples": 1,
                                                       "takeovers": 0}


def test_interruption_quirks():
    samples = [(words((6.0, 7.5)), 6.0),    # latency exactly 0: a takeover, but `if latency:` drops it
               (words((5.5, 7.0)), 6.0),    # negative: counts as 0
               (words((7.0, 8.5)), 6.0),    # 1.0
               (words((7.0, 7.1)), 6.0)]    # short: no takeover
    r = official.user_interruption(samples, None)
    assert r["take_turn_rate"] == 0.75 and r["latency_s"] == 0.5 and r["rating"] == {"pending": "no judge configured"}
    rated = official.user_interruption(samples, [4, 5, 3, None])
    assert rated["rating"] == 4.0
    assert "unavailable" in official.user_interruption(samples, [4, None, 3, None])["rating"]
    none = official.user_interruption([([], 6.0)], None)
    assert none["take_turn_rate"] == 0.0 and "ZeroDivisionError" in none["latency_s"]["unavailable"]


def test_backchannel_segment_loop_quirks():
    chunks = words((1.0, 1.2), (5.0, 5.3), (5.4, 5.6), (5.7, 5.9), (6.0, 6.2))
    # a short segment with one word: no takeover; a segment with four words: takeover; the long
    # segment stops the loop, so the last one is lost from the list
    tor, pred = official.backchannel_sample([(0.9, 1.3), (4.9, 6.3), (10.0, 14.0), (20.0, 20.5)], chunks)
    assert tor == 1 and pred == [[0.9, 1.3], [4.9, 6.3]]
    tor, pred = official.backchannel_sample([(4.9, 6.3), (0.9, 1.3)], chunks)
    assert tor == 0  # overwritten by the last segment


def test_backchannel_jsd_matches_a_direct_computation():
    from scipy.spatial.distance import jensenshannon

    gt = list(np.random.default_rng(0).dirichlet(np.ones(30)))
    got = official.backchannel_jsd([[1.0, 1.3], [2.05, 2.2]], 4.0, gt)
    bins = np.zeros(21)
    bins[5:7] += 1
    bins[10:12] += 1
    hist = (bins + 1e-10) / (bins + 1e-10).sum()
    want = jensenshannon(hist, np.interp(np.linspace(0, 1, 21), np.linspace(0, 1, 30), gt))
    assert got == pytest.approx(want, abs=1e-12) and got <= 0.833
    assert official.backchannel_jsd([], 4.0, gt) == 1.0


def test_backchannel_speaker_missing_from_ground_truth_keeps_tor_and_frequency():
    r = official.backchannel([("7", [(1.0, 1.4)], words((1.1, 1.3)), 10.0), ("8", [], [], 5.0)], {"8": [0.5, 0.5]})
    assert r["samples"] == 1 and r["jsd"] == {"mean": 1.0, "std": 0.0}
    assert r["frequency_per_s"]["mean"] == pytest.approx((0.1 + 0.0) / 2)
