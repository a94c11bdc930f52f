"""Other benchmarks' timing numbers (fdbu.views, docs: Numbers in other benchmarks' terms): FD-Bench's and
VideoFDB's columns on hand-built samples whose values are worked out here, a plain-Python twin on random trees,
the settings, and every surface that carries them (unified.json, the rows, compare, the API, the scored reader)."""
import json
import os

import numpy as np
import pytest

import twins
from builders import fdbu_main, interrupt_ann, pause_ann, sample, turn_ann, write_tree
from fdbu.views.fdbench import Config as FdbenchConfig
from fdbu.views.videofdb import Config as VideofdbConfig
from fdbu.errors import FdbuError
from fdbu.kernels import cue_timing
from fdbu.metrics.flat import flatten
from fdbu.scoring.pipeline import NO_VIEWS, Views, score
from fdbu.views.base import Part
from fdbu.tree.load import load_tree
from fdbu.scoring.unified import write
from fdbu.version import DEFINITIONS_VERSION, VIEWS_DEFINITIONS
from docs_pages import all_text

TURN, INT = "candor_turn_taking", "synthetic_user_interruption"
US = 1_000_000
E = 5.0
TURN_WORDS = {  # E = 5, T = 10 (seconds)
    "p": [],                          # no word: no_reply; no latency, fails the hand-off
    "q": [(2.0, 2.5)],                # 3 s before E: early_interrupt; nothing at or after E: fails
    "r": [(4.5, 5.5)],                # 0.5 s before E: early_reply; spans E: latency 0 by the clamp, passes
    "s": [(5.0, 5.4)],                # at E: reply (d = 0); an onset at E, not across it: latency 0, passes
    "t": [(7.0, 7.5)],                # 2 s after E: reply (late with reply_within_s = 1); latency 2 > 1.5: fails
    "u": [(3.8, 4.2), (6.0, 6.5)],    # 1.2 s before E: early_interrupt; next onset 1 s after E: passes
    "v": [(4.0, 4.9)],                # exactly 1 s before E: early_reply (the split is strict); nothing after: fails
}
S, R = 4.0, 6.0
SEGMENTS = {  # S = 4, R = 6, T = 10 (the interruption tests' samples)
    "a": [(3, 5)],                      # stops 1 s after S (by R), replies 0.5 s after R
    "b": [(3, 7)],                      # talks past R
    "c": [(4, 4.5), (5, 5.5), (6, 8)],  # stops 0.5 s after S, a reply at R
    "d": [(1, 2)],                      # silent at S (not exercised); its last segment ended 2 s before S
    "e": [(3, 10)],                     # runs to T
    "f": [(3.5, 4.5)],                  # stops, never replies
    "h": [(5, 7)],                      # silent at and before S: VideoFDB's silent agent
}
WORDS = {"a": [(6.5, 7.0)], "b": [(7.5, 8.0)], "c": [(6.0, 6.3)], "d": [(7.0, 7.5)], "e": [(6.2, 6.4)],
         "f": [], "h": [(6.5, 6.9)]}
PAUSE = "synthetic_pause_handling"
PAUSE_SAMPLES = {  # one pause [3, 5] s, T = 10: (speech segments, words)
    "x": ([], []),                                           # silent: passes
    "y": ([(3.5, 4.0)], [(3.5, 3.8)]),                       # 0.5 s in the pause: passes
    "z": ([(2.0, 6.0)], [(2.0, 2.4), (3.0, 3.4), (4.0, 4.4), (5.0, 5.4)]),  # 2 s in the pause: fails
    "w": ([(3.0, 3.6), (4.0, 4.6)], [(3.1, 3.4), (4.1, 4.4)]),  # 1.2 s, two one-word backchannels: passes
    "k": ([(3.0, 3.6), (4.0, 4.6)], [(3.1, 3.2), (3.3, 3.5), (4.1, 4.4)]),  # 1.2 s, the first has 2 words: fails
}
BOTH = Views(("fdbench", "videofdb"), {"fdbench": FdbenchConfig().settings(), "videofdb": VideofdbConfig().settings()})


def segs_us(table):
    """Speech segments in microseconds for the interruption samples (`table`) and the pause samples."""
    out = {f"{INT}/{k}": (np.array(v, dtype=float).reshape(-1, 2) * US).astype(np.int64) for k, v in table.items()}
    out.update({f"{PAUSE}/{k}": (np.array(v[0], dtype=float).reshape(-1, 2) * US).astype(np.int64)
                for k, v in PAUSE_SAMPLES.items()})
    return out


def hand_tree(root, pause: bool = True):
    samples = [sample(PAUSE, k, 10.0, v[1], pause_ann([(3.0, 5.0)])) for k, v in PAUSE_SAMPLES.items() if pause]
    samples += [sample(TURN, k, 10.0, w, turn_ann(E)) for k, w in TURN_WORDS.items()]
    samples += [sample(INT, k, 10.0, WORDS[k], interrupt_ann(S, R)) for k in "abcdefh"]
    samples.append(sample(INT, "g", 10.0, eligible=False, reasons=["no output"]))
    return load_tree(write_tree(root, samples))


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    return hand_tree(tmp_path_factory.mktemp("views"))


@pytest.fixture(scope="module")
def scored(tree, vad, boot):
    return score(tree, vad, boot, segments=segs_us(SEGMENTS), views=BOTH)


def records(scored, view):
    return {r["sample_id"].split("/")[1]: r["views"][view] for r in scored.rows
            if r["eligible"] and view in r.get("views", {})}


def test_fdbench_classes_and_numbers_by_hand(scored):
    rec = records(scored, "fdbench")
    assert {k: rec[k]["outcome"] for k in TURN_WORDS} == {
        "p": "no_reply", "q": "early_interrupt", "r": "early_reply", "s": "reply", "t": "reply",
        "u": "early_interrupt", "v": "early_reply"}
    assert [rec[k]["onset_s"] for k in TURN_WORDS] == [None, -3.0, -0.5, 0.0, 2.0, -1.2, -1.0]
    assert {k: rec[k]["outcome"] for k in "abcdefh"} == {  # b stops 1 s after R: interrupted (stop_by=T)
        "a": "replied", "b": "interrupted", "c": "replied", "d": "not_exercised", "e": "kept_talking",
        "f": "interrupted", "h": "not_exercised"}
    assert {k: rec[k]["stopped"] for k in "abcdefh"} == {
        "a": "by_R", "b": "after_R", "c": "by_R", "d": "not_exercised", "e": "never", "f": "by_R",
        "h": "not_exercised"}
    turn = scored.unified["views"]["fdbench"]["subsets"][TURN]["metrics"]
    assert (turn["SRR"]["count"], turn["SRR"]["n"]) == (4, 7)  # r, s, t, v
    assert (turn["EIR"]["count"], turn["EIR"]["n"]) == (2, 7)  # q, u
    assert (turn["ERT_s"]["value"], turn["ERT_s"]["count"]) == (0.5, 2)  # [0.5, 1.0]: the 1st of 2
    assert (turn["EIT_s"]["value"], turn["EIT_s"]["count"]) == (1.2, 2)  # [1.2, 3.0]
    inter = scored.unified["views"]["fdbench"]["subsets"][INT]
    m = inter["metrics"]
    assert inter["counts"] == {"selected": 8, "eligible": 7, "exercised": 5, "interrupted": 4, "responded": 2,
                               "stopped_by_R": 3, "stopped_after_R": 1, "never_stopped": 1}
    assert (m["SIR"]["count"], m["SIR"]["n"]) == (4, 5)  # a, b, c, f of a, b, c, e, f
    assert m["SIR"]["selected_bounds"] == [4 / 8, (4 + 3) / 8]  # unknown: g (ineligible), d and h (not exercised)
    assert (m["SRIR"]["count"], m["SRIR"]["n"]) == (2, 4)
    assert (m["IRD_s"]["value"], m["IRD_s"]["count"]) == (0.5, 4)  # [0.5, 0.5, 1.0, 3.0]: the 2nd of 4
    assert (m["IRD_all_exercised_s"]["value"], m["IRD_all_exercised_s"]["p90"]) == (1.0, "not reached")
    assert m["IRD_all_exercised_s"]["value"] == scored.unified["subsets"][INT]["metrics"]["stop_latency_s"]["value"]
    assert (m["FSED_s"]["value"], m["FSED_s"]["count"]) == (0.0, 2)  # c at R, a 0.5 s after


def test_videofdb_classes_and_tor_alignment_by_hand(scored):
    rec = records(scored, "videofdb")
    assert [rec[k]["latency_s"] for k in TURN_WORDS] == [None, None, 0.0, 0.0, 2.0, 1.0, None]
    assert [rec[k]["passes"] for k in TURN_WORDS] == [False, False, True, True, False, True, False]
    assert [rec[k]["speaking_at_cue"] for k in TURN_WORDS] == [False, False, True, False, False, False, False]
    assert [rec[k]["latency_s"] for k in "abcdefh"] == [1.0, 3.0, 0.5, -2.0, None, 0.5, None]  # e runs to T
    assert [rec[k]["silent"] for k in "abcdefh"] == [False] * 6 + [True]
    assert [rec[k]["passes"] for k in "abcdefh"] == [True, False, True, True, False, True, True]
    v = scored.unified["views"]["videofdb"]
    turn, inter = v["subsets"][TURN]["metrics"], v["subsets"][INT]["metrics"]
    assert (turn["smooth_handoff_rate"]["count"], turn["smooth_handoff_rate"]["n"]) == (3, 7)
    assert (turn["smooth_handoff_latency_s"]["value"], turn["smooth_handoff_latency_s"]["count"]) == (0.0, 4)
    assert turn["speaking_at_cue_rate"]["count"] == 1
    assert (inter["yield_rate"]["count"], inter["yield_rate"]["n"]) == (5, 7)
    assert (inter["yield_rate_exercised"]["count"], inter["yield_rate_exercised"]["n"]) == (3, 5)
    assert (inter["yield_latency_s"]["value"], inter["yield_latency_s"]["count"]) == (0.5, 6)  # [-2, .5, .5, 1, 3, inf]
    assert (inter["yield_latency_s"]["observed"], inter["yield_latency_s"]["p90"]) == (5, "not reached")
    silent = records(scored, "videofdb")
    assert [(silent[k]["in_window_s"], silent[k]["segments_in_window"], silent[k]["backchannels"], silent[k]["passes"])
            for k in PAUSE_SAMPLES] == [(0.0, 0, 0, True), (0.5, 1, 1, True), (2.0, 1, 0, False), (1.2, 2, 2, True),
                                        (1.2, 2, 1, False)]
    pause = v["subsets"][PAUSE]["metrics"]
    assert (pause["stay_silent_rate"]["count"], pause["stay_silent_rate"]["n"]) == (3, 5)  # x, y, w
    assert pause["backchannel_pass_rate"]["count"] == 1  # w
    tor = v["pooled"]["TOR_alignment"]
    assert (tor["count"], tor["n"], tor["over"]) == (3 + 3 + 5, 19, [PAUSE, TURN, INT])
    assert tor["selected_bounds"] == [11 / 20, 12 / 20]  # 20 selected, one ineligible
    # the other reading (issue 53): each class's rate, and their mean with every class weighing the same
    assert {k: (c["count"], c["n"]) for k, c in tor["classes"].items()} == {
        "stay-silent": (3, 5), "smooth-handoff": (3, 7), "yield-required": (5, 7)}
    assert tor["class_mean"] == pytest.approx((3 / 5 + 3 / 7 + 5 / 7) / 3)
    lo, hi = tor["class_mean_interval"]
    assert 0 <= lo <= tor["class_mean"] <= hi <= 1


def test_the_class_mean_resamples_each_class_on_its_own():
    """Two classes of one size resampled with the same indices (a fresh generator per class) moved together and gave
    the mean of [1,0,1,0,...] and [0,1,0,1,...] an interval of zero width; each class draws on from one generator."""
    from fdbu.metrics.stats import Bootstrap
    from fdbu.views import pooled_share

    rows = lambda flags: [{"views": {"videofdb": {"passes": f}}} for f in flags]  # noqa: E731
    parts = [(s, rows(flags), Part(t, None, None, {"passes": "flag"}, None, passes="passes", label=label), len(flags))
             for s, t, label, flags in ((TURN, "turn_taking", "smooth-handoff", [True, False] * 10),
                                        (INT, "user_interruption", "yield-required", [False, True] * 10))]
    record = pooled_share(None, "videofdb", parts, Bootstrap(1000, 0))
    lo, hi = record["class_mean_interval"]
    assert record["class_mean"] == 0.5 and lo < 0.45 and hi > 0.55, (lo, hi)


def test_settings_move_the_numbers_and_are_recorded(tree, vad, boot):
    views = Views(BOTH.names, {"fdbench": FdbenchConfig(reply_within_s=1.0, early_reply_s=0.5).settings(),
                               "videofdb": VideofdbConfig(yield_within_s=0.75, handoff_within_s=2.0).settings()})
    out = score(tree, vad, boot, segments=segs_us(SEGMENTS), views=views)
    fd, vf = out.unified["views"]["fdbench"], out.unified["views"]["videofdb"]
    assert fd["settings"] == {"reply_within_s": 1.0, "early_reply_s": 0.5, "stop_by": "T"}
    assert vf["settings"] == {"yield_within_s": 0.75, "handoff_within_s": 2.0, "backchannel_words": "overlap"}
    assert out.unified["settings"] == "non-default"
    assert {"fdbench.reply_within_s=1.0", "fdbench.early_reply_s=0.5", "videofdb.yield_within_s=0.75",
            "videofdb.handoff_within_s=2.0"} <= set(out.unified["non_default"])
    rec = records(out, "fdbench")
    assert [rec[k]["outcome"] for k in "rtv"] == ["early_reply", "late_reply", "early_interrupt"]
    assert fd["subsets"][TURN]["metrics"]["SRR"]["count"] == 2  # r and s; t is late, v now early
    assert fd["subsets"][INT]["metrics"]["SRIR"]["count"] == 2  # a's 0.5 s and c's 0 s are within 1 s
    vrec = records(out, "videofdb")
    assert [vrec[k]["passes"] for k in "abcdefh"] == [False, False, True, True, False, True, True]
    assert vrec["t"]["passes"] is True  # 2 s, within the 2 s window
    # the deadline by R (today's rule before issue 53): b, which stops 1 s after R, kept talking; the numbers move
    # back to the R-population's, the split of the stops stays
    views = Views(("fdbench",), {"fdbench": FdbenchConfig(stop_by="R").settings()})
    out = score(tree, vad, boot, segments=segs_us(SEGMENTS), views=views)
    fd = out.unified["views"]["fdbench"]
    assert fd["settings"]["stop_by"] == "R" and "fdbench.stop_by=R" in out.unified["non_default"]
    assert records(out, "fdbench")["b"]["outcome"] == "kept_talking"
    m = fd["subsets"][INT]["metrics"]
    assert (m["SIR"]["count"], m["SIR"]["n"], m["SRIR"]["n"]) == (3, 5, 3)  # a, c, f
    assert (m["IRD_s"]["value"], m["IRD_s"]["count"]) == (0.5, 3)  # [0.5, 0.5, 1.0]
    assert fd["subsets"][INT]["counts"]["stopped_after_R"] == 1


LATE = {  # S = 4, R = 6, T = 20: agents that stop 1-6 s after R, and one by R
    "l1": [(3, 7)], "l2": [(3, 9)], "l3": [(3, 12)], "l4": [(3, 5)], "l5": [(3, 20)]}


def test_an_agent_that_stops_after_r_has_its_delay_counted_by_default(tmp_path, vad, boot):
    """Issue 53: IRD_s was capped at R - S (a successful interrupt had to stop by R); FD-Bench's own IRD medians
    (3.6-13.1 s) need the stops after R. By default they count: IRD over [1, 3, 5, 8] s is 3 s (the 2nd of 4),
    above R - S = 2 s; stop_by=R gives the old 1 s over the one stop by R; the console says the split."""
    from fdbu.scoring.unified import view_lines

    samples = [sample(INT, k, 20.0, [(max(v[0][1], R) + 0.5, max(v[0][1], R) + 0.8)] if v[0][1] < 19 else [],
                      interrupt_ann(S, R)) for k, v in LATE.items()]
    tree = load_tree(write_tree(tmp_path / "late", samples))
    segments = {f"{INT}/{k}": (np.array(v, float) * US).astype(np.int64) for k, v in LATE.items()}
    numbers = {}
    for stop_by in ("T", "R"):
        views = Views(("fdbench",), {"fdbench": FdbenchConfig(stop_by=stop_by).settings()})
        out = score(tree, vad, boot, segments=segments, views=views)
        entry = out.unified["views"]["fdbench"]["subsets"][INT]
        m = entry["metrics"]
        numbers[stop_by] = (m["SIR"]["count"], m["SIR"]["n"], m["IRD_s"]["value"], m["IRD_s"]["count"])
        assert {k: entry["counts"][k] for k in ("stopped_by_R", "stopped_after_R", "never_stopped")} == {
            "stopped_by_R": 1, "stopped_after_R": 3, "never_stopped": 1}
        shown = "\n".join(view_lines(out.unified["views"]["fdbench"]))
        assert "stopped_by_R 1, stopped_after_R 3, never_stopped 1" in shown
    assert numbers == {"T": (4, 5, 3.0, 4), "R": (1, 5, 1.0, 1)}
    assert numbers["T"][2] > R - S


def test_without_views_nothing_changes(tree, vad, boot):
    plain = score(tree, vad, boot, segments=segs_us(SEGMENTS))
    assert plain.unified["definitions"] == DEFINITIONS_VERSION and "views" not in plain.unified
    assert all("views" not in r for r in plain.rows)
    both = score(tree, vad, boot, segments=segs_us(SEGMENTS), views=BOTH)
    assert both.unified["definitions"] == f"{DEFINITIONS_VERSION}+{VIEWS_DEFINITIONS}"
    assert both.unified["subsets"] == plain.unified["subsets"]  # the unified metrics are untouched
    assert [{k: v for k, v in r.items() if k != "views"} for r in both.rows] == plain.rows
    assert NO_VIEWS.names == ()


def test_cue_timing_kernel_matches_its_twin_on_random_spans():
    rng = np.random.default_rng(34)
    spans, cues = [], []
    for _ in range(400):
        k = int(rng.integers(0, 6))
        a = rng.integers(0, 20, k) * 250_000  # a coarse grid: ties with the cue and between spans happen
        spans.append([(int(x), int(x + rng.integers(0, 8) * 250_000)) for x in a])
        cues.append(int(rng.integers(0, 20)) * 250_000)
    a, off = flatten([np.array([s for s, _ in sp], np.int64) for sp in spans])
    b, _ = flatten([np.array([e for _, e in sp], np.int64) for sp in spans])
    got = cue_timing(a, b, off, np.array(cues, np.int64))
    for i, (sp, cue) in enumerate(zip(spans, cues)):
        want = twins.cue_timing(sp, cue)
        assert (bool(got.speaking_at_cue[i]), int(got.onset_after[i]), int(got.last_end[i])) == \
            (want["speaking_at_cue"], want["onset_after"], want["last_end"]), (sp, cue)


def test_window_speech_kernel_matches_its_twin_on_random_samples():
    from fdbu.kernels import window_speech

    rng = np.random.default_rng(341)
    q = 250_000
    samples = []
    for _ in range(300):
        cuts = sorted(set(int(x) for x in rng.integers(0, 41, 2 * rng.integers(0, 5))))
        segs = [(cuts[j] * q, cuts[j + 1] * q) for j in range(0, len(cuts) - 1, 2)]
        marks = sorted(set(int(x) for x in rng.integers(0, 41, 2 * rng.integers(1, 4))))
        wins = [(marks[j] * q, marks[j + 1] * q) for j in range(0, len(marks) - 1, 2)] or [(0, q)]
        starts = sorted(int(x) * q for x in rng.integers(0, 40, rng.integers(0, 6)))
        words = [(st, st + int(rng.integers(0, 4)) * q) for st in starts]  # some of no duration
        samples.append((segs, wins, words))
    flat = [flatten([np.array([p[k] for p in part], np.int64) for part in parts])
            for parts in ([s for s, _, _ in samples], [w for _, w, _ in samples]) for k in (0, 1)]
    ws, woff = flatten([np.array([w[0] for w in st], np.int64) for _, _, st in samples])
    we, _ = flatten([np.array([w[1] for w in st], np.int64) for _, _, st in samples])
    for by_overlap in (True, False):
        got = window_speech(flat[0][0], flat[1][0], flat[0][1], flat[2][0], flat[3][0], flat[2][1], ws, we, woff,
                            1_000_000, 2, by_overlap)
        for i, (segs, wins, words) in enumerate(samples):
            want = twins.window_speech(segs, wins, words, by_overlap=by_overlap)
            assert (int(got.in_window_us[i]), int(got.overlapping[i]), int(got.short[i])) == \
                (want["in_window"], want["overlapping"], want["short"]), (segs, wins, words, by_overlap)


def random_tree(root, rng, n=40):
    """Random turn-taking and interruption samples on a 0.25 s grid (ties at E, S and R happen), with their
    words and segments."""
    samples, segments, truth = [], {}, {}
    for i in range(n):
        words = sorted((float(s), float(s + d)) for s, d in zip(rng.integers(0, 36, rng.integers(0, 4)) * 0.25,
                                                                rng.integers(1, 6, 4) * 0.25))
        samples.append(sample(TURN, f"t{i}", 10.0, words, turn_ann(5.0)))
        truth[f"{TURN}/t{i}"] = words
        cuts = sorted(set(int(x) for x in rng.integers(0, 41, 2 * rng.integers(0, 4))))
        segs = [(cuts[j] * 0.25, cuts[j + 1] * 0.25) for j in range(0, len(cuts) - 1, 2)]
        ws = [(float(s), float(s) + 0.2) for s in rng.integers(24, 38, rng.integers(0, 3)) * 0.25]  # from R
        samples.append(sample(INT, f"i{i}", 10.0, ws, interrupt_ann(4.0, 6.0)))
        segments[f"{INT}/i{i}"] = segs
        truth[f"{INT}/i{i}"] = (segs, ws)
        starts = sorted(int(x) for x in rng.choice(np.arange(0, 40, 5), rng.integers(0, 8), replace=False))
        segs = [(a * 0.25, (a + int(rng.choice([1, 2, 3, 3, 5]))) * 0.25) for a in starts]  # mostly backchannels
        if rng.random() < 0.5:  # one long pause, or a few random ones
            pauses = [(int(rng.integers(1, 12)) * 0.25, int(rng.integers(28, 40)) * 0.25)]
        else:
            marks = sorted(set(int(x) for x in rng.integers(1, 40, 2 * rng.integers(1, 3))))
            pauses = [(marks[j] * 0.25, marks[j + 1] * 0.25) for j in range(0, len(marks) - 1, 2)] or [(2.0, 3.0)]
        ws = sorted((float(x), float(x) + 0.1) for x in rng.integers(0, 39, rng.integers(0, 6)) * 0.25)
        samples.append(sample(PAUSE, f"p{i}", 10.0, ws, pause_ann(pauses)))
        segments[f"{PAUSE}/p{i}"] = segs
        truth[f"{PAUSE}/p{i}"] = (segs, ws, pauses)
    return load_tree(write_tree(root, samples)), segments, truth


@pytest.mark.parametrize("seed", [1, 2])
def test_views_match_the_plain_python_twin_on_random_trees(tmp_path, vad, boot, seed):
    rng = np.random.default_rng(seed)
    tree, segments, truth = random_tree(tmp_path, rng)
    stop_by = "R" if seed == 1 else "T"
    views = Views(BOTH.names, {"fdbench": FdbenchConfig(reply_within_s=1.5 if seed == 2 else None,
                                                        stop_by=stop_by).settings(),
                               "videofdb": VideofdbConfig().settings()})
    within = 1_500_000 if seed == 2 else None
    out = score(tree, vad, boot, segments={k: (np.array(v, float).reshape(-1, 2) * US).astype(np.int64)
                                           for k, v in segments.items()}, views=views)
    us = lambda x: round(x * US)  # noqa: E731
    checked = 0
    for row in out.rows:
        sid = row["sample_id"]
        got = row["views"]["videofdb"]
        if row["subset"] == PAUSE:
            segs, words = [(us(a), us(b)) for a, b in truth[sid][0]], [(us(s), us(e)) for s, e in truth[sid][1]]
            pauses = [(us(a), us(b)) for a, b in truth[sid][2]]
            w = twins.window_speech(segs, pauses, words)
            assert (got["in_window_s"], got["segments_in_window"], got["backchannels"], got["passes"]) == \
                (w["in_window"] / US, w["overlapping"], w["short"], twins.videofdb_silent(segs, pauses, words)), sid
            assert "fdbench" not in row["views"]  # FD-Bench has no pause column
            checked += 1
            continue
        if row["subset"] == TURN:
            words = [(us(s), us(e)) for s, e in truth[sid]]
            assert row["views"]["fdbench"]["outcome"] == twins.fdbench_turn([s for s, _ in words], us(5.0), within)
            want = twins.videofdb_handoff(words, us(5.0))
        else:
            segs = [(us(a), us(b)) for a, b in truth[sid][0]]
            starts = [us(s) for s, _ in truth[sid][1]]
            assert row["views"]["fdbench"]["outcome"] == twins.fdbench_interruption(
                segs, starts, us(4.0), us(6.0), us(10.0), within, stop_by), sid
            assert row["views"]["fdbench"]["stopped"] == (
                twins.fdbench_stopped(segs, us(4.0), us(6.0), us(10.0)) or "not_exercised"
                if row["views"]["fdbench"]["outcome"] != "not_exercised" else "not_exercised"), sid
            want = twins.videofdb_yield(segs, us(4.0), us(10.0))
            assert got["silent"] == want["silent"], sid
        assert (got["latency_s"], got["passes"]) == (None if want["latency"] is None else want["latency"] / US,
                                                     want["passes"]), sid
        checked += 1
    assert checked == 120
    classes = {r["views"]["fdbench"]["outcome"] for r in out.rows if "fdbench" in r["views"]}
    assert len(classes) >= 6  # the random trees reach most classes
    silent = [r["views"]["videofdb"] for r in out.rows if r["subset"] == PAUSE]
    assert {(r["passes"], r["in_window_s"] > 1) for r in silent} == {(True, False), (False, True), (True, True)}


@pytest.mark.slow
def test_compare_and_the_api_carry_the_views(tmp_path, vad, boot):
    from fdbu import api
    from fdbu.metrics.paired import too_few
    from fdbu.comparison.pairwise import compare, decide
    from fdbu.comparison.systems import load
    from fdbu.comparison.files import to_csv

    trees = []
    for name, table in (("A", SEGMENTS), ("B", {**SEGMENTS, "a": [(3, 10)]})):  # B's a talks to T
        root = tmp_path / name
        tree = hand_tree(root)
        write(score(tree, vad, boot, segments=segs_us(table), views=BOTH), root)
        trees.append(load(root, name))
    result = compare(trees)
    from fdbu.figures.forest import _title, forest_panels

    panels = forest_panels(result)  # the forest (compare's and the report's figure): the views in panels of their own
    assert ((None, INT), "outcomes") == panels[0][:2] or any(p[0] == (None, INT) for p in panels)
    assert (("videofdb", "pooled"), "outcomes", ["TOR_alignment"]) in panels
    assert (("fdbench", INT), "outcomes", ["SIR", "SRIR"]) in panels
    assert _title(("fdbench", INT)) == f"FD-Bench's terms, {INT}" and _title((None, INT)) == INT
    _forest_labels_do_not_overlap(result)
    views = result["pairs"][0]["views"]
    assert list(views) == ["fdbench", "videofdb"] and list(views["fdbench"]) == [TURN, INT]
    assert list(views["videofdb"]) == [PAUSE, TURN, INT, "pooled"]
    tor = views["videofdb"]["pooled"]  # TOR-Alignment paired over the three classes' subsets
    line = tor["metrics"]["TOR_alignment"]
    assert tor["over"] == [PAUSE, TURN, INT] and tor["samples"]["eligible_in_both"] == line["n"] == 19
    assert (line["a"]["count"], line["b"]["count"], line["discordant"]) == (11, 10, {"a_only": 1, "b_only": 0})
    assert line["headline"] and line["family"] is None and too_few(line)  # one discordant pair: no decision
    assert line["selected_bounds"]["a"] == [11 / 20, 12 / 20]
    sir = views["fdbench"][INT]["metrics"]["SIR"]
    assert (sir["a"]["count"], sir["b"]["count"]) == (4, 3)  # B's a never stops
    assert sir["headline"] is True and too_few(sir) and sir["family"] is None  # 1 discordant pair: no decision
    line = {"p": 0.001, "reason": None, "headline": True}  # a line whose test decides: its own Holm family
    pair = {"a": "A", "b": "B", "subsets": {INT: {"metrics": {"x": dict(line)}}},
            "views": {"fdbench": {INT: {"metrics": {"SIR": dict(line), "SRIR": dict(line, p=0.04)}}}}}
    decide([pair], "baseline", 0.05)
    view_lines = pair["views"]["fdbench"][INT]["metrics"]
    assert view_lines["SIR"]["family"] == f"fdbench on {INT}, B vs A"
    assert [view_lines[k]["p_holm"] for k in ("SIR", "SRIR")] == [0.002, 0.04]  # Holm over the view's two lines
    assert pair["subsets"][INT]["metrics"]["x"]["p_holm"] == 0.001  # the unified family is another family
    assert views["videofdb"][TURN]["metrics"]["speaking_at_cue_rate"]["reason"].startswith("context")
    head = to_csv(result).splitlines()[0].split(",")
    assert head[0] == "view" and sum(line.startswith("fdbench,") for line in to_csv(result).splitlines()) == 9
    assert sum(line.startswith("videofdb,") for line in to_csv(result).splitlines()) == 2 + 4 + 3 + 1
    frame = api.Result(json.loads((tmp_path / "A" / "unified.json").read_text()), [], "A").metrics()
    assert set(frame["view"]) == {"unified", "fdbench", "videofdb"}
    tor = frame[(frame["view"] == "videofdb") & (frame["metric"] == "TOR_alignment")]
    assert list(tor["subset"]) == ["pooled"] and float(tor["value"].iloc[0]) == 11 / 19


def test_tor_alignment_is_paired_over_the_subsets_both_trees_hold(tmp_path, vad, boot):
    """compare.allow_different_samples=true and B without the pause subset: TOR-Alignment is paired over the two
    subsets both hold, with a warning naming the one left out; the report's pooled row says what it is over."""
    from fdbu.reporting import board as lb
    from fdbu.comparison.pairwise import compare
    from fdbu.comparison.systems import load

    for name, pause in (("A", True), ("B", False)):
        tree = hand_tree(tmp_path / name, pause)
        segs = {k: v for k, v in segs_us(SEGMENTS).items() if pause or not k.startswith(PAUSE)}
        write(score(tree, vad, boot, segments=segs, views=BOTH), tmp_path / name)
    systems = [load(tmp_path / n, n) for n in ("A", "B")]
    result = compare(systems, allow_different_samples=True)
    tor = result["pairs"][0]["views"]["videofdb"]["pooled"]
    assert tor["over"] == [TURN, INT] and tor["metrics"]["TOR_alignment"]["n"] == 14
    assert any("left out: synthetic_pause_handling" in w for w in tor["warnings"])
    board = lb.leaderboard(systems, result)
    assert board[-1]["subset"] == "pooled" and board[-1]["label"].endswith(f"pooled over {TURN}, {INT}")


def test_trees_with_other_view_settings_are_not_compared(tmp_path, vad, boot):
    from fdbu.comparison.pairwise import compare
    from fdbu.comparison.systems import load

    tree = hand_tree(tmp_path / "A")
    write(score(tree, vad, boot, segments=segs_us(SEGMENTS), views=BOTH), tmp_path / "A")
    other = Views(("fdbench",), {"fdbench": FdbenchConfig().settings()})  # the default settings, one view fewer
    hand_tree(tmp_path / "B")
    write(score(load_tree(tmp_path / "B"), vad, boot, segments=segs_us(SEGMENTS), views=other), tmp_path / "B")
    with pytest.raises(FdbuError, match="other settings than A"):
        compare([load(tmp_path / "A", "A"), load(tmp_path / "B", "B")])


def test_trees_scored_with_another_deadline_are_refused_naming_it_and_both_values(tmp_path, vad, boot):
    """The refusal names the setting and both trees' values, not the header's summary word (issue 75: `settings:
    "spec" vs "non-default"`)."""
    from fdbu.comparison.pairwise import compare
    from fdbu.comparison.systems import load

    for name, stop_by in (("A", "T"), ("B", "R")):
        tree = hand_tree(tmp_path / name)
        views = Views(("fdbench",), {"fdbench": FdbenchConfig(stop_by=stop_by).settings()})
        write(score(tree, vad, boot, segments=segs_us(SEGMENTS), views=views), tmp_path / name)
    with pytest.raises(FdbuError) as e:
        compare([load(tmp_path / "A", "A"), load(tmp_path / "B", "B")])
    said = str(e.value)
    assert 'views.fdbench.settings.stop_by: "T" vs "R"' in said and '"spec" vs "non-default"' not in said, said


def test_a_views_setting_is_named_beside_its_numbers_on_every_surface_of_the_report(tmp_path, vad, boot):
    """Two trees scored with fdbench.stop_by=R: the report's leaderboard.md, .tex and .csv, report.json and the site
    (in headless Chromium: the section's heading above IRD) each name the setting where IRD is shown (issue 75: IRD
    was printed with no trace of the choice)."""
    import pandas as pd

    views = Views(("fdbench",), {"fdbench": FdbenchConfig(stop_by="R").settings()})
    for name in ("A", "B"):
        tree = hand_tree(tmp_path / name)
        write(score(tree, vad, boot, segments=segs_us(SEGMENTS), views=views), tmp_path / name)
    out = tmp_path / "report"
    # every surface that names a setting beside its numbers: the tables, report.json, the site's headings and
    # compare's console (the figures name no view: plot=false, 8 s of drawing less)
    ran = fdbu_main("report", f"trees=[{tmp_path / 'A'},{tmp_path / 'B'}]", f"out={out}", "progress=false",
                    "plot=false")
    assert ran.returncode == 0, ran.stderr
    said = "FD-Bench's terms, with fdbench.stop_by=R"
    for name in ("leaderboard.md", "leaderboard.tex"):  # (both escape the underscore)
        text = (out / name).read_text()
        assert text.count(said.replace("_", "\\_")) >= 2 and "IRD" in text, name  # each section, IRD's among them
    frame = pd.read_csv(out / "leaderboard.csv")
    ird = frame[frame["metric"].str.startswith("IRD")]
    assert len(ird) and (ird["view"] == "fdbench").all() and (ird["view_settings"] == "fdbench.stop_by=R").all()
    assert frame[frame["view"].isna()]["view_settings"].isna().all()
    head = json.loads((out / "report.json").read_text())
    assert all(s["non_default"] == ["fdbench.stop_by=R"] for s in head["systems"])
    ran = fdbu_main("compare", f"trees=[{tmp_path / 'A'},{tmp_path / 'B'}]", f"out={tmp_path / 'compare'}",
                    "progress=false", "plot=false")
    assert ran.returncode == 0 and ran.stdout.count(f"in {said}, not the unified metrics") >= 2, ran.stdout
    from browser import opened

    with opened(out / "index.html", tmp_path / "profile") as chrome:
        heads = chrome.eval("Array.from(document.querySelectorAll('#boards h3')).map(h => h.textContent)"
                            ".filter(t => t.includes(\"FD-Bench\"))")
        ird_in = chrome.eval("Array.from(document.querySelectorAll('table.board.view[data-view=\"fdbench\"]'))"
                             ".filter(t => t.textContent.includes('IRD')).length")
    assert heads and all(said in h for h in heads) and ird_in >= 1, heads


def test_a_broken_view_record_is_refused_in_one_line(tmp_path, vad, boot):
    from fdbu.comparison.systems import load
    from fdbu.scoring.unified import ROWS_SHA256
    from fdbu.common.atomic import sha256_bytes

    root = tmp_path / "A"
    tree = hand_tree(root)
    write(score(tree, vad, boot, segments=segs_us(SEGMENTS), views=BOTH), root)
    lines = (root / "unified-samples.jsonl").read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if json.loads(line)["sample_id"] == f"{TURN}/q")
    row = json.loads(lines[at])
    row["views"]["videofdb"]["passes"] = "yes"
    lines[at] = json.dumps(row)
    raw = ("\n".join(lines) + "\n").encode()
    (root / "unified-samples.jsonl").write_bytes(raw)
    unified = json.loads((root / "unified.json").read_text())
    unified[ROWS_SHA256] = sha256_bytes(raw)
    (root / "unified.json").write_text(json.dumps(unified))
    with pytest.raises(FdbuError, match=r"candor_turn_taking/q views\.videofdb\.passes is 'yes', not true or false"):
        load(root, "A")


def test_the_cli_scores_views_and_refuses_an_unknown_one(tmp_path):
    tree = write_tree(tmp_path / "t", [sample(TURN, k, 10.0, w, turn_ann(E)) for k, w in TURN_WORDS.items()])
    ran = fdbu_main("score", f"tree={tree}", "views=[fdbench]", "progress=false")
    assert ran.returncode == 0, ran.stderr
    out = ran.stdout
    assert "== FD-Bench's terms, not the unified metrics ==" in out and "  SRR " in out
    assert json.loads((tree / "unified.json").read_text())["views"]["fdbench"]["subsets"][TURN]["metrics"]["SRR"][
        "count"] == 4
    ran = fdbu_main("score", f"tree={tree}", "views=[fdbench,nope]", "progress=false")
    assert ran.returncode != 0 and "views=['fdbench', 'nope']: names from fdbench, videofdb" in ran.stderr


@pytest.mark.slow
def test_the_readme_section_runs_and_its_report_shows_the_views(tmp_path, calibrated, monkeypatch):
    """The docs' block (families/views.md) as written in an empty folder (synth, score with both views, compare, report), then what
    leaves the report: every view section in the site (headless Chromium: each table after the unified ones,
    its source above it, every cell unified.json's), in leaderboard.md rendered by CommonMark, in leaderboard.tex
    compiled with no overfull box, in leaderboard.csv with a `view` column; and the worked example's sample."""
    import shutil

    import pandas as pd
    from markdown_it import MarkdownIt

    from browser import Chromium, executable
    from fdbu.common.cells import record_text
    from test_paper_tables import _Cells, _compile
    from docs_pages import blocks, section
    from test_readme import commands

    monkeypatch.chdir(tmp_path)
    block = blocks(section("Numbers in other benchmarks' terms"), "sh")[0]
    for line, argv in commands(block):
        ran = fdbu_main(*argv[1:])
        assert ran.returncode == 0, f"{line}\n{ran.stderr}"
    unified = {n: json.loads((tmp_path / "views" / n / "unified.json").read_text()) for n in ("modelA", "modelB")}
    sections = [(v, s) for v, e in unified["modelA"]["views"].items() for s in e["subsets"]]
    assert sections == [("fdbench", TURN), ("fdbench", INT), ("videofdb", PAUSE), ("videofdb", "candor_pause_handling"),
                        ("videofdb", TURN), ("videofdb", INT)]
    result = json.loads((tmp_path / "views/compare/compare.json").read_text())
    assert set(result["pairs"][0]["views"]) == {"fdbench", "videofdb"}
    out = tmp_path / "views/report"

    parsed = _Cells()
    parsed.feed(MarkdownIt("commonmark").enable("table").render((out / "leaderboard.md").read_text()))
    srr = [t for t in parsed.tables if t[1][0][0] == "SRR"]
    want = [record_text(unified[n]["views"]["fdbench"]["subsets"][TURN]["metrics"]["SRR"]["value"],
                        unified[n]["views"]["fdbench"]["subsets"][TURN]["metrics"]["SRR"]["interval"])
            for n in ("modelA", "modelB")]
    assert len(srr) == 1 and [c[0].split(" *")[0] for c in srr[0][1][2:]] == want
    assert "Source: FD-Bench: A Full-Duplex Benchmarking Pipeline" in (out / "leaderboard.md").read_text()
    frame = pd.read_csv(out / "leaderboard.csv")
    views = frame[frame["view"].notna()]
    assert set(views["view"]) == {"fdbench", "videofdb"} and views["value"].dtype.kind == "f"
    assert not views["headline"].any()  # the summary's metrics are the unified ones
    assert frame[frame["view"].isna()]["metric"].str.contains("SRR").sum() == 0
    if shutil.which("pdflatex") is not None:
        log = _compile((out / "leaderboard.tex").read_text(), tmp_path, "twocolumn")
        assert "Overfull \\hbox" not in log, [line for line in log.splitlines() if "Overfull" in line]
        assert "tab:fdbu-fdbench-candor-turn-taking" in (out / "leaderboard.tex").read_text()

    exe = executable()
    if exe is None:
        pytest.skip("Chromium is not installed (make system-tools installs Debian's chromium)")
    chrome = Chromium(exe, tmp_path / "profile")
    try:
        chrome.open((out / "index.html").resolve().as_uri())
        got = chrome.eval("Array.from(document.querySelectorAll('table.board.view')).map(t => [t.dataset.view, "
                          "t.dataset.subset, t.parentElement.previousElementSibling.textContent])")
        assert [g[:2] for g in got] == [[v, s] for v, s in sections] + [["videofdb", "pooled"]]
        assert all(g[2].startswith("Source: ") for g in got)
        before = chrome.eval("(() => { const all = Array.from(document.querySelectorAll('#boards table.board:not("
                             ".summary)')); return all.slice(0, all.findIndex(t => t.classList.contains('view')))"
                             ".map(t => t.dataset.subset); })()")
        assert [s for s in before if s != "icc_backchannel"] == list(unified["modelA"]["subsets"])  # after them all
        cells = chrome.eval("Array.from(document.querySelectorAll('table.board.view[data-view=\"videofdb\"]"
                            "[data-subset=\"synthetic_user_interruption\"] tr[data-metric=\"yield_rate\"] "
                            "td[data-system] .v')).map(td => td.textContent)")
        recs = [unified[n]["views"]["videofdb"]["subsets"][INT]["metrics"]["yield_rate"] for n in ("modelA", "modelB")]
        assert cells == [record_text(r["value"], r["interval"]) for r in recs]
        shot = chrome.screenshot(tmp_path / "report-views.png", "table.board.view")
        assert chrome.errors() == []
    finally:
        chrome.close()
    assert shot.read_bytes()[:4] == b"\x89PNG"
    if os.environ.get("FDBU_SCREENSHOTS"):
        shutil.copy(shot, os.environ["FDBU_SCREENSHOTS"])


def test_the_readme_worked_example_is_sample_r(scored):
    """The views page's "A worked example": the early word across E is an early start, an early reply and a hand-off."""
    row = next(r for r in scored.rows if r["sample_id"] == f"{TURN}/r")
    assert (row["E_s"], row["first_word_s"], row["outcome"]) == (5.0, 4.5, "early_start")
    assert row["views"]["fdbench"] == {"onset_s": -0.5, "outcome": "early_reply"}
    assert row["views"]["videofdb"] == {"speaking_at_cue": True, "latency_s": 0.0, "passes": True}
    text = all_text()
    assert "E = 5.0 s and the model's only word\nspans 4.5–5.5 s" in text and "d = −0.5 s" in text


@pytest.mark.parametrize("n,rate,datasets,to_t", [(8, 0.5, 300, 0.2), (30, 0.9, 300, 0.2), (200, 0.5, 100, 0.2),
                                                  (30, 0.9, 200, 0.7)])
@pytest.mark.slow
def test_the_views_markers_hold_their_error_rate_under_the_null(n, rate, datasets, to_t):
    """Both systems drawn from one distribution, through the views' records, compare's paired lines and Holm: no
    view family marks more often than alpha + 3 Monte Carlo standard errors (benchmarks/view_calibration.py runs
    the whole table with 1000 datasets a cell; here 500 resamples, which the paired bootstrap test is valid for)."""
    from benchmarks.view_calibration import cell
    from fdbu.metrics.stats import Bootstrap

    r = cell(n, rate, datasets, seed=7, boot=Bootstrap(500), to_t=to_t)  # to_t 0.7: yield medians mostly not reached
    assert len(r["rates"]) == 4
    assert max(r["rates"].values()) <= r["bound"], r


@pytest.mark.slow
def test_the_views_markers_find_a_real_difference():
    """B yields and speaks 0.8 s sooner and 10 points more often: at n = 200 FD-Bench's families mark it in most
    datasets (power; the benchmark gives the numbers)."""
    from benchmarks.view_calibration import cell
    from fdbu.metrics.stats import Bootstrap

    r = cell(200, 0.5, 20, seed=7, effect=True, boot=Bootstrap(500))
    assert r["rates"][f"fdbench on {TURN}"] >= 0.7 and r["rates"][f"fdbench on {INT}"] >= 0.7, r


def _drop(path):
    def f(doc):
        *head, last = path
        for k in head:
            doc = doc[k]
        del doc[last]
    return f


def _put(path, value):
    def f(doc):
        *head, last = path
        for k in head:
            doc = doc[k]
        doc[last] = value
    return f


BROKEN = [  # (mutation of unified.json, the one line that refuses it)
    (_drop(["views", "fdbench", "not_computable"]), "views.fdbench.not_computable is None, not a list of texts"),
    (_put(["views", "videofdb", "pooled"], []), "views.videofdb.pooled is missing or not an object"),
    (_put(["views", "videofdb", "pooled", "TOR_alignment", "over"], [PAUSE, PAUSE, TURN, INT]),
     "not the subsets it pools (synthetic_pause_handling, candor_turn_taking, synthetic_user_interruption)"),
    (_drop(["views", "videofdb", "pooled"]), "views.videofdb.pooled is missing or not an object"),
    (_put(["views", "fdbench", "pooled"], {}), "views.fdbench.pooled is there, but the fdbench view pools nothing"),
    (_put(["views", "videofdb", "pooled", "TOR_alignment", "count"], 12),
     "its rows give the videofdb view's TOR_alignment count 11, unified.json 12"),
    (_put(["views", "fdbench", "settings", "stop_by"], "X"), "views.fdbench.settings holds stop_by 'X', not one of T, R"),
    (_put(["views", "videofdb", "settings", "backchannel_words"], "first"),
     "views.videofdb.settings holds backchannel_words 'first', not one of overlap, start"),
    (_put(["views", "videofdb", "pooled", "TOR_alignment", "class_mean"], 2.0),
     "views.videofdb.pooled.TOR_alignment.class_mean"),
    (_put(["views", "fdbench", "settings", "early_reply_s"], "1.5"),
     "views.fdbench.settings.early_reply_s is '1.5', not a number of seconds"),
    (_drop(["views", "fdbench", "subsets", TURN]), "views.fdbench.subsets are ['synthetic_user_interruption'], not the "
     "scored subsets the fdbench view covers (candor_turn_taking, synthetic_user_interruption)"),
    (_put(["views", "nope"], {}), "views.nope is not one of fdbu's views"),
    (_put(["views", "videofdb", "subsets", INT, "metrics", "yield_latency_s", "value"], 1e300),
     "views.videofdb.subsets.synthetic_user_interruption.metrics.yield_latency_s.value is 1e+300"),
    (_put(["definitions"], DEFINITIONS_VERSION), f"definitions is 'fdb-v1.0-unified-4', without +{VIEWS_DEFINITIONS}"),
]


@pytest.fixture(scope="module")
def written(tmp_path_factory, vad, boot):
    root = tmp_path_factory.mktemp("written") / "A"
    write(score(hand_tree(root), vad, boot, segments=segs_us(SEGMENTS), views=BOTH), root)
    return root


@pytest.mark.parametrize("mutate,message", BROKEN, ids=[m for _, m in BROKEN])
def test_a_broken_views_section_is_refused_in_one_line(written, tmp_path, mutate, message):
    import shutil

    from fdbu.comparison.systems import load

    root = tmp_path / "A"
    shutil.copytree(written, root)
    doc = json.loads((root / "unified.json").read_text())
    mutate(doc)
    (root / "unified.json").write_text(json.dumps(doc))
    with pytest.raises(FdbuError) as e:
        load(root, "A")
    assert message in str(e.value) and "\n" not in str(e.value)


@pytest.mark.slow
def test_fdbu_vad_shards_the_files_a_view_segments(tmp_path, calibrated):
    """VideoFDB's stay-silent segments the pause outputs, which only fdbu vad views=[videofdb] shards: a score with
    vad.require_shards=true assembles from such shards without computing, and says what to run when they lack them."""
    from fdbu.synth import synthesize
    from test_shards import fresh_cache, ok

    tree = synthesize(tmp_path / "t", n={PAUSE: 2, INT: 1}, seed=3, ineligible=0.0)
    plain, viewed = fresh_cache(tmp_path / "plain"), fresh_cache(tmp_path / "viewed")
    for k in (0, 1):
        ok(fdbu_main("vad", f"tree={tree}", f"shard={k}", "shards=2", f"cache_dir={plain}", "progress=false"))
        ok(fdbu_main("vad", f"tree={tree}", f"shard={k}", "shards=2", f"cache_dir={viewed}", "views=[videofdb]",
                     "progress=false"))
    refused = fdbu_main("score", f"tree={tree}", f"out={tmp_path / 'no'}", f"cache_dir={plain}", "views=[videofdb]",
                        "vad.require_shards=true", "progress=false")
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    assert "2 files in no cache" in refused.stderr and "fdbu vad views=[videofdb] shards them" in refused.stderr
    printed = ok(fdbu_main("score", f"tree={tree}", f"out={tmp_path / 'yes'}", f"cache_dir={viewed}",
                           "views=[videofdb]", "vad.require_shards=true", "progress=false")).stdout
    assert "3 files" in printed and " 0 computed" in printed
    assert json.loads((tmp_path / "yes" / "unified.json").read_text())["views"]["videofdb"]["subsets"][PAUSE][
        "counts"]["eligible"] == 2


def test_continue_speaking_by_hand():
    """VideoFDB's continue-speaking (App. C.2) on v1.5's event run: active when speech covers >= 30% of the 3 s
    before o_s (clipped at 0), then passing when it covers >= 50% of [o_s, o_e]; not active passes vacuously."""
    from types import SimpleNamespace

    from fdbu.views.videofdb import _continue_records, activity

    cases = {  # o_s, o_e (s), event-run segments (s) -> (before, during, active, passes)
        "keeps": (5, 7, [(1, 9)], (1.0, 1.0, True, True)),
        "yields": (5, 7, [(1, 5.5)], (1.0, 0.25, True, False)),
        "half": (5, 7, [(4.1, 6)], (0.3, 0.5, True, True)),     # exactly 30% before and 50% during: both count
        "quiet": (5, 7, [(4.2, 6)], (0.8 / 3, 0.5, False, True)),  # under 30% before: vacuously correct
        "early": (1, 3, [(0.5, 1.2)], (0.5, 0.1, True, False)),  # 1 s before the event: its window is [0, 1]
        "at 0": (0, 2, [(0, 2)], (0.0, 1.0, False, True)),       # no time before the event: not active
        "instant": (5, 5, [(4, 6)], (1 / 3, 1.0, True, True)),   # an empty event window: covered at its instant
    }
    us = lambda x: round(x * US)  # noqa: E731
    comps = SimpleNamespace(o_s=[us(v[0]) for v in cases.values()], o_e=[us(v[1]) for v in cases.values()],
                            segments=[np.array([(us(a), us(b)) for a, b in v[2]], np.int64) for v in cases.values()])
    got = _continue_records(list(cases), comps, None)
    for (name, (*_, want)), rec in zip(cases.items(), got):
        assert (rec["activity_before"], rec["activity_during"], rec["active"], rec["passes"]) == pytest.approx(want), name
    assert activity(np.zeros((0, 2), np.int64), 0, 10) == 0.0


def test_a_backchannels_words_are_those_overlapping_it_by_default(tmp_path, vad, boot):
    """Issue 53: a word starting 9 ms before its segment (a real case on a synthetic tree) flipped a sample from fail
    to pass under the starts-inside rule. By default a word counts in every segment it overlaps: the first segment
    holds two words, no backchannel, and the sample (1.2 s in the pause) fails; backchannel_words=start keeps the
    old rule (one word starts in it: a backchannel, and the sample passes)."""
    words = [(2.991, 3.3), (3.31, 3.5), (4.1, 4.4)]
    tree = load_tree(write_tree(tmp_path / "j", [sample(PAUSE, "j", 10.0, words, pause_ann([(3.0, 5.0)]))]))
    segs = {f"{PAUSE}/j": (np.array([(3.0, 3.6), (4.0, 4.6)]) * US).astype(np.int64)}
    got = {}
    for rule in ("overlap", "start"):
        views = Views(("videofdb",), {"videofdb": VideofdbConfig(backchannel_words=rule).settings()})
        out = score(tree, vad, boot, segments=segs, views=views)
        rec = records(out, "videofdb")["j"]
        got[rule] = (rec["backchannels"], rec["passes"])
        assert out.unified["views"]["videofdb"]["settings"]["backchannel_words"] == rule
    assert got == {"overlap": (1, False), "start": (2, True)}
    with pytest.raises(FdbuError, match="videofdb.backchannel_words='first': overlap"):
        VideofdbConfig(backchannel_words="first")


def test_every_view_column_has_a_numbered_definition():
    """Issue 53: each column a view declares (every part's table at its default settings, and the pooled share) is
    named in a numbered Definition of the docs, and each view setting in the settings paragraph with its default."""
    import re

    from fdbu.views import VIEWS

    numbered = {name for item in re.findall(r"^\d+\. \*\*(.*?)\*\*", all_text(), re.M | re.S)
                for name in re.findall(r"`([A-Za-z_]+)`", item)}
    declared = {m.name for v in VIEWS.values() for part in v.parts.values() for m in part.table(v.settings)}
    declared |= {v.pooled for v in VIEWS.values() if v.pooled}
    assert declared and declared <= numbered, sorted(declared - numbered)
    text = all_text()
    for view in VIEWS.values():
        for key in view.settings.header():
            assert f"`{view.name}.{key}`" in text, (view.name, key)


def _forest_labels_do_not_overlap(result):
    """At column width a view's panel title wraps to three lines; the panel's height now counts them, so two rows
    under it keep theirs (their labels overlapped: "yield rate" over "yield rate exercised")."""
    from fdbu.figures import forest as plot_forest

    figs = []
    real = plot_forest._save
    plot_forest._save = lambda f, tight=False, tick=None: figs.extend(f if isinstance(f, list) else [f]) or {}
    try:
        plot_forest.compare_forest(result, width="column")
    finally:
        plot_forest._save = real
    checked = 0
    for fig in figs:
        renderer = fig.canvas.get_renderer()
        fig.draw(renderer)
        for ax in fig.axes:
            boxes = [t.get_window_extent(renderer) for t in ax.get_yticklabels() if t.get_text()]
            for upper, lower in zip(boxes, boxes[1:]):
                assert abs(upper.y0 - lower.y0) >= min(upper.height, lower.height), ax.get_title()
                checked += 1
        __import__("matplotlib.pyplot").pyplot.close(fig)
    assert checked > 5
