"""The official evaluator's rules (reference column) on hand-built inputs, with the numbers worked
out by hand from the scripts' lines. test_official_scripts.py checks them against the scripts."""
import numpy as np
import pytest

from fdbu.official import rules as official
from fdbu.official.rules import Speaker, Verdict


def words(*spans):
    return [{"text": f"w{i}", "timestamp": [a, b]} for i, (a, b) in enumerate(spans)]


def out(*spans, text="t"):
    return {"text": text, "chunks": words(*spans)}


def test_pause_take_turn_rule():
    assert official.take_turn_pause([]) == 0
    assert official.take_turn_pause(words((2.0, 2.3), (2.4, 2.9))) == 0        # <= 3 words within 1 s
    assert official.take_turn_pause(words((2.0, 2.2), (2.2, 2.4), (2.4, 2.6), (2.6, 2.8))) == 1  # 4 words
    assert official.take_turn_pause(words((2.0, 2.3), (2.5, 3.0))) == 1        # span of exactly 1 s
    assert official.take_turn_pause(words((0.1, 0.4))) == 0                    # even before any pause: not read
    assert official.take_turn_pause(words((2.0, 2.1), (3.5, None))) == 1       # null last end: its start counts
    assert official.pause_handling([("0", out()), ("1", out((1.0, 2.5))), ("2", out((1.0, 1.1)))]) == {
        "take_turn_rate": 1 / 3, "samples": 3}


def test_folders_named_like_md_or_ds_store_are_not_read():
    assert official.pause_handling([("0", out()), ("1.md", out((1.0, 2.5))), ("x.DS_Store", out((1.0, 2.5)))]) == {
        "take_turn_rate": 0.0, "samples": 1}
    r = official.smooth_turn_taking([("a.md", [{"timestamp": [5.0, None]}], out((6.0, 7.5)))])
    assert r["take_turn_rate"] == {"unavailable": "ZeroDivisionError: division by zero"} and r["samples"] == 0


def test_pause_handling_of_nothing_is_the_scripts_zero_division():
    assert official.pause_handling([])["take_turn_rate"] == {"unavailable": "ZeroDivisionError: division by zero"}


def test_turn_taking_keeps_zero_clamps_negative_and_drops_non_takers():
    samples = [(words((4.0, 5.5)), 5.0),            # starts before E: latency -1.0 -> 0
               (words((5.0, 6.5)), 5.0),            # exactly 0: kept
               (words((6.0, 7.5)), 5.0),            # 1.0
               (words((6.0, 6.2)), 5.0),            # one short word: no takeover, not in the latency mean
               ([], 5.0)]                           # silent: no takeover
    r = official.smooth_turn_taking([(str(i), [{"timestamp": [E, None]}], {"chunks": c})
                                     for i, (c, E) in enumerate(samples)])
    assert r == {"take_turn_rate": 3 / 5, "latency_s": 1 / 3, "samples": 5, "takeovers": 3}


def test_turn_taking_null_last_end_raises_typeerror_like_the_script():
    r = official.smooth_turn_taking([("0", [{"timestamp": [5.0, None]}], out((6.0, 6.5), (7.0, None)))])
    assert r["take_turn_rate"] == r["latency_s"] == {
        "unavailable": "TypeError: unsupported operand type(s) for -: 'NoneType' and 'float'"}


def test_turn_taking_with_no_takeover_is_the_scripts_zero_division():
    """eval_smooth_turn_taking.py:92 divides by the number of takeovers, before printing anything."""
    r = official.smooth_turn_taking([("0", [{"timestamp": [5.0, None]}], out())])
    assert r["latency_s"] == r["take_turn_rate"] == {"unavailable": "ZeroDivisionError: division by zero"}
    assert r["takeovers"] == 0


def interruption(*rows):
    return [(str(i), out(*spans), [{"context": "c", "interrupt": "i", "timestamp": [4.0, R]}])
            for i, (spans, R) in enumerate(rows)]


SAMPLES = interruption(
    [((6.0, 7.5),), 6.0],   # latency exactly 0: kept
    [((5.5, 7.0),), 6.0],   # negative: counts as 0
    [((7.0, 8.5),), 6.0],   # 1.0
    [((7.0, 7.1),), 6.0])   # short: no takeover, never judged


def test_interruption_without_a_judge():
    r = official.user_interruption(SAMPLES)
    assert r["take_turn_rate"] == 0.75 and r["latency_s"] == 1 / 3 and r["rating"] == {"pending": "no judge configured"}
    assert r["takeovers"] == 3


def test_interruption_judge_rule():
    asked = []

    def judge(sid, context, interrupt, response):
        asked.append(sid)
        return {"0": Verdict(4), "1": Verdict(5, unparsable=2, attempts=3), "2": Verdict(3)}[sid]

    r = official.user_interruption(SAMPLES, judge)
    assert asked == ["0", "1", "2"]                       # takeovers only, in order
    assert r["rating"] == 4.0                              # each rating twice: the mean is unchanged
    # two replies without a rating re-ran the loop body: TOR = 1 appended twice more (5 of 6)
    assert r["take_turn_rate"] == 5 / 6 and r["latency_s"] == 1 / 3 and r["judge_replies_without_rating"] == 2


def test_interruption_judge_that_never_parses_leaves_the_script_waiting():
    asked = []

    def judge(sid, *_):
        asked.append(sid)
        return Verdict(None, unparsable=3, attempts=3) if sid == "1" else Verdict(2)

    r = official.user_interruption(SAMPLES, judge)
    assert asked == ["0", "1"]                             # the script never gets past sample 1
    for key in ("rating", "take_turn_rate", "latency_s"):
        assert r[key]["waiting"].startswith("the official script would still be asking the judge about 1")


def test_interruption_no_takeover_and_missing_fields_raise_like_the_script():
    none = official.user_interruption(interruption([(), 6.0]))
    assert none["rating"] == none["take_turn_rate"] == none["latency_s"] == {
        "unavailable": "ZeroDivisionError: division by zero"}
    bad = [("0", {"chunks": []}, [{"context": "c", "interrupt": "i", "timestamp": [4.0, 6.0]}])]
    assert official.user_interruption(bad)["latency_s"] == {"unavailable": "KeyError: 'text'"}


def test_backchannel_segment_loop_quirks():
    doc = out((1.0, 1.2), (5.0, 5.3), (5.4, 5.6), (5.7, 5.9), (6.0, 6.2))
    # a short segment with one word: no takeover; a segment with four words: takeover; the long
    # segment stops the loop, so the last one is lost from the list
    tor, pred = official.backchannel_speaker([(0.9, 1.3), (4.9, 6.3), (10.0, 14.0), (20.0, 20.5)], doc, 0)
    assert tor == 1 and pred == [[0.9, 1.3], [4.9, 6.3]]
    tor, pred = official.backchannel_speaker([(4.9, 6.3), (0.9, 1.3)], doc, 0)
    assert tor == 0  # overwritten by the last segment


def test_backchannel_null_times():
    # null start: skipped; null end before the segment's end: skipped; null end at its end: a word
    doc = {"chunks": [{"text": "a", "timestamp": [None, 1.1]}, {"text": "b", "timestamp": [1.1, None]},
                      {"text": "c", "timestamp": [1.3, None]}, {"text": "d", "timestamp": [1.0, 1.1]},
                      {"text": "e", "timestamp": [1.1, 1.2]}]}
    assert official.backchannel_speaker([(1.0, 1.3)], doc, 0) == (1, [[1.0, 1.3]])      # c, d, e: 3 words
    doc["chunks"] = doc["chunks"][:3]
    assert official.backchannel_speaker([(1.0, 1.3)], doc, 0) == (0, [[1.0, 1.3]])      # c only


def test_backchannel_jsd_matches_a_direct_computation():
    from scipy.spatial.distance import jensenshannon

    gt = list(np.random.default_rng(0).dirichlet(np.ones(30)))
    got = official.backchannel_jsd([[1.0, 1.3], [2.05, 2.2]], 4.0, {"9": gt}, "9")
    bins = np.zeros(21)
    bins[5:7] += 1
    bins[10:12] += 1
    hist = (bins + 1e-10) / (bins + 1e-10).sum()
    want = jensenshannon(hist, np.interp(np.linspace(0, 1, 21), np.linspace(0, 1, 30), gt))
    assert got == pytest.approx(want, abs=1e-12) and got <= 0.833
    assert official.backchannel_jsd([], 4.0, {}, "9") == 1     # no backchannel: the ground truth is not read


def speaker(name, segments, doc, seconds=10.0):
    return Speaker(name, doc, lambda: (segments, int(seconds * 16000), 16000))


def test_backchannel_speaker_missing_from_the_ground_truth():
    gt = {"8": [0.5, 0.5]}
    quiet = official.backchannel([speaker("7", [], out()), speaker("8", [], out(), 5.0)], gt)
    assert quiet["samples"] == 2 and quiet["jsd"] == {"mean": 1.0, "std": 0.0}
    loud = official.backchannel([speaker("7", [(1.0, 1.4)], out((1.1, 1.3))), speaker("8", [], out())], gt)
    assert loud["jsd"] == loud["take_turn_rate"] == {"unavailable": "KeyError: '7'"}


def test_backchannel_selection_carry_over_and_empty():
    listened = []

    def never(name):
        return Speaker(name, out(), lambda: listened.append(name))

    first = official.backchannel([speaker("3", [(1.0, 5.0)], out()), speaker("4", [], None)], {})
    assert first["take_turn_rate"] == {"mean": 1.0, "std": 0.0}          # "4" keeps "3"'s TOR
    unbound = official.backchannel([speaker("4", [], None)], {})
    assert unbound["jsd"]["unavailable"].startswith("UnboundLocalError")
    empty = official.backchannel([never("x1"), never("a")], {})
    assert listened == [] and empty["samples"] == 0 and empty["jsd"] == {"mean": "nan", "std": "nan"}
