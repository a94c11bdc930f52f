"""Full-Duplex-Bench v1.5's unified metrics (docs: Definitions 52-60): the kernels against their plain-Python
twins, the matched control on hand-built and synthetic samples with known answers, and its marker's error rate
under the null."""
import json
import math
from fractions import Fraction
from math import comb

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import twins
from benchmarks.control_calibration import cell
from builders import fdbu_main
from test_figures import captured, check_layout  # noqa: F401  (captured: a fixture)
from fdbu.common.cells import p_text, record_text
from fdbu.kernels import INF, overlap_run
from fdbu.families.v1_5 import control as v15_control, metrics as overlap
from fdbu.metrics.base import Runs
from fdbu.metrics.flat import column, flatten
from fdbu.metrics.stats import Bootstrap
from fdbu.synth import synthesize

T_MAX = 40
V15 = ("user_interruption", "user_backchannel", "talking_to_other", "background_speech")


@st.composite
def run_sample(draw):
    """A run on a coarse grid, so segments touching o_s, o_e and T happen often; o_s may be 0, o_e may be T."""
    T = draw(st.integers(1, T_MAX))
    o_s = draw(st.integers(0, T))
    o_e = draw(st.integers(o_s, T))
    cuts = sorted(set(draw(st.lists(st.integers(0, T), max_size=8))))
    segs = [(cuts[i], cuts[i + 1]) for i in range(0, len(cuts) - 1, 2)]
    starts = sorted(draw(st.lists(st.integers(0, T), max_size=4)))
    return T, o_s, o_e, segs, starts


def _flat_segments(samples, k):
    ga, goff = flatten([np.array([g[0] for g in s[k]], np.int64) for s in samples])
    gb, _ = flatten([np.array([g[1] for g in s[k]], np.int64) for s in samples])
    return ga, gb, goff


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(st.lists(run_sample(), min_size=1, max_size=8))
def test_the_run_kernel_equals_its_twin(samples):
    ga, gb, goff = _flat_segments(samples, 3)
    ws, woff = flatten([np.array(s[4], np.int64) for s in samples])
    T, o_s, o_e = (column([s[k] for s in samples]) for k in (0, 1, 2))
    r = overlap_run(ga, gb, goff, ws, woff, o_s, o_e, T)
    for i, (t, a, b, segs, starts) in enumerate(samples):
        got = {"exercised": bool(r.exercised[i]), "stop": int(r.stop_us[i]), "speech_in": int(r.speech_in_us[i]),
               "speaking_at_end": bool(r.speaking_at_end[i]), "resume": int(r.resume_us[i]),
               "response": int(r.response_us[i])}
        assert got == twins.overlap_run(segs, starts, a, b, t)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(run_sample(), run_sample()), min_size=1, max_size=6))
def test_run_agreement_equals_its_twin(pairs):
    a = [np.array(p[0][3], np.int64).reshape(-1, 2) for p in pairs]
    b = [np.array(p[1][3], np.int64).reshape(-1, 2) for p in pairs]
    o_s = column([p[0][1] for p in pairs])
    got = overlap.agreement(a, b, o_s)
    for i, (x, y) in enumerate(pairs):
        # exact: both divide the same small integers (< 2^53, so each is a float exactly), and IEEE-754 division is
        # correctly rounded on every machine
        assert got[i] == twins.agreement(x[3], y[3], x[1])
        assert 0.0 <= got[i] <= 1.0


def test_edge_cases_the_definitions_name():
    """Event at 0, event to T, a segment ending exactly at o_s, one starting exactly at o_s, an event at T."""
    cases = [  # (T, o_s, o_e, segments, words) -> (exercised, stop, speaking at o_e, resume)
        ((10, 0, 2, [(0, 3)], []), (True, 3, True, INF)),              # event at 0: a segment from 0 covers it
        ((10, 4, 10, [(3, 10)], []), (True, INF, False, INF)),         # event to T: runs to T, no stop, no resume
        ((10, 4, 6, [(1, 4), (6, 8)], [6]), (False, -1, False, 0)),    # ends exactly at o_s: not exercised
        ((10, 4, 6, [(4, 5)], []), (True, 1, False, INF)),             # starts exactly at o_s: exercised
        ((10, 10, 10, [(2, 10)], []), (False, -1, False, INF)),        # event at T: nothing covers T
    ]
    for (T, a, b, segs, words), want in cases:
        ga, gb, goff = _flat_segments([(None, None, None, segs)], 3)
        ws, woff = flatten([np.array(words, np.int64)])
        r = overlap_run(ga, gb, goff, ws, woff, column([a]), column([b]), column([T]))
        assert (bool(r.exercised[0]), int(r.stop_us[0]), bool(r.speaking_at_end[0]), int(r.resume_us[0])) == want
        assert twins.overlap_run(segs, words, a, b, T)["stop"] == want[1]


class _Sample:
    """What `overlap.components` reads of a tree sample."""

    def __init__(self, T, o_s, o_e, clean_T=None, words=(), clean_words=()):
        self.T_us, self.clean_T_us, self.event_us = T, T if clean_T is None else clean_T, (o_s, o_e)
        self.word_start = np.array(words, np.int64)
        self.other_words = {"clean_output.json": (np.array(clean_words, np.int64),) * 2}


def _components(spec, subset="user_interruption", min_agreement=0.0):
    """spec: [(sample, event segments, clean segments)] in seconds."""
    us = [(np.array(e, float).reshape(-1, 2) * 1e6).astype(np.int64) for _, e, _ in spec]
    cl = [(np.array(c, float).reshape(-1, 2) * 1e6).astype(np.int64) for _, _, c in spec]
    runs = Runs(subset, {"output.wav": us, "clean_output.wav": cl})
    return overlap.components([s for s, _, _ in spec], runs, overlap.ControlSettings(min_agreement=min_agreement))


S = 1_000_000


def test_the_control_pairs_only_exercised_matched_agreeing_samples():
    spec = [(_Sample(10 * S, 4 * S, 5 * S), [(2, 4.3)], [(2, 8)]),              # yields to the event
            (_Sample(10 * S, 4 * S, 5 * S), [(2, 4.3)], [(2, 4.3)]),            # ends on its own
            (_Sample(10 * S, 4 * S, 5 * S), [(1, 3)], [(2, 8)]),                # not exercised in the event run
            (_Sample(10 * S, 4 * S, 5 * S, clean_T=9 * S), [(2, 4.3)], [(2, 8)]),  # the inputs differ in length
            (_Sample(10 * S, 4 * S, 5 * S), [(3.5, 4.3)], [(0.5, 8)]),          # the runs disagree before o_s
            (_Sample(10 * S, 4 * S, 5 * S, clean_T=10 * S - 80_000), [(2, 4.3)], [(2, 4.3)])]  # 80 ms: matched
    c = _components(spec)
    assert c.both.tolist() == [True, True, False, False, True, True]
    assert c.matched.tolist() == [True, True, True, False, True, True]
    assert c.agreement[4] == 1 / 7  # 0.5 s of 3.5 s: the correctly rounded 1/7, exactly
    boot = Bootstrap(200, 0)
    control = overlap.control(c, boot)
    assert (control["pairs"], control["exercised_both"], control["unmatched"]) == (4, 4, 1)
    console = v15_control.console
    assert "; left out: 1 exercised in both runs but unmatched (the inputs differ by more than 80 ms" in console(control)[0]
    line = control["stops"]["event_attributable_stop_rate_1s"]
    assert (line["event_rate"], line["clean_rate"]) == (1.0, 0.5)
    assert line["discordant"] == {"a_only": 0, "b_only": 2} and line["difference"]["value"] == 0.5
    assert line["reason"].startswith("too few pairs") and not line["marker"]  # 2 discordant pairs decide nothing
    restricted = overlap.control(_components(spec, min_agreement=0.5), boot)
    assert restricted["pairs"] == 3 and restricted["min_agreement"] == 0.5
    # the agreement's median by the one quantile rule (the ceil(qN)-th smallest, issue 53): of [1/7, 1] the first,
    # not their mean 0.571
    assert overlap.control(_components([spec[1], spec[4]]), boot)["agreement"]["median"] == 1 / 7


def test_what_is_better_depends_on_the_subset():
    wanted, kept = ({m.name: m.better for m in overlap.table(s)} for s in ("user_interruption", "talking_to_other"))
    assert wanted["stop_rate_1s"] == "higher" and kept["stop_rate_1s"] == "lower"
    assert wanted["speaking_at_event_end_rate"] == "lower" and kept["speaking_at_event_end_rate"] == "higher"
    assert "response_latency_s" in wanted and "response_latency_s" not in kept
    assert all(wanted[k] == "context" for k in wanted if k.startswith(("resumed", "exercised")))


def test_rows_give_the_components_back():
    spec = [(_Sample(10 * S, 4 * S, 5 * S, words=[5.6 * S]), [(2, 4.3), (5.5, 7)], [(2, 8)]),
            (_Sample(10 * S, 0, 10 * S), [(0, 10)], [(0, 3)]),
            (_Sample(10 * S, 4 * S, 5 * S), [(1, 3)], [])]
    c = _components(spec)
    rows = [{**r, "subset": "user_interruption"} for r in overlap.rows([s for s, _, _ in spec], c)]
    back = overlap.from_rows(json.loads(json.dumps(rows)))
    for run in ("event", "clean"):
        for name in c.event._fields:
            assert np.array_equal(getattr(getattr(back, run), name), getattr(getattr(c, run), name)), (run, name)
    assert np.array_equal(back.agreement, c.agreement) and back.subset == "user_interruption"
    assert rows[0]["response_s"] == 0.6 and rows[1]["stop_observed"] is False


@pytest.mark.parametrize("n,never", [(8, 0.2), (20, 0.2), (40, 0.0), (40, 0.5), (40, 0.9)])
def test_the_control_marker_holds_its_error_rate_under_the_null(n, never):
    """The reduced calibration (benchmarks/control_calibration, fixed seed): 300 null datasets per cell, the marker
    fires in at most alpha + 3 Monte Carlo standard errors of a rate alpha (0.05 + 3 sqrt(0.05 * 0.95 / 300)); the
    degenerate cells too: 8 pairs (too few for the bootstrap line, few discordant pairs), and nine runs in ten never
    stopping (the medians not reached). Deterministic on every machine: numpy's generators, exact McNemar."""
    r = cell(n, never, datasets=300, seed=7, resamples=500)
    assert r["marker"] <= r["bound"] == 0.05 + 3 * math.sqrt(0.05 * 0.95 / 300)


def test_the_control_marker_finds_a_system_that_yields():
    """Power, so the null test above cannot pass by never firing: half the samples yield, 200 pairs."""
    assert cell(200, 0.2, datasets=50, seed=7, delta=0.5, resamples=500)["marker"] >= 0.9


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    root = tmp_path_factory.mktemp("v15known")
    out = {}
    for system in ("yields", "same_stop", "talks_through"):
        tree = synthesize(root / system, n=8, seed=3, system=system, family="v1.5", ineligible=0.0)
        res = fdbu_main("score", f"tree={tree}", "progress=false", "vad.threads=1", "bootstrap.resamples=500")
        assert res.returncode == 0, res.stderr
        rows = [json.loads(line) for line in (tree / "unified-samples.jsonl").read_text().splitlines()]
        out[system] = (json.loads((tree / "unified.json").read_text()), res.stdout, rows)
        out.setdefault("trees", {})[system] = tree
    return out


@pytest.mark.slow
@pytest.mark.parametrize("system,truth", [("yields", 1.0), ("same_stop", 0.0), ("talks_through", 0.0)])
def test_synthetic_systems_give_the_known_event_attributable_stop_rate(synthetic, system, truth):
    unified, stdout, rows = synthetic[system]
    assert unified["definitions"].endswith("+fdb-v1.5-overlap-2") and unified["overlap"]["min_agreement"] == 0.0
    for subset in V15:
        control = unified["subsets"][subset]["control"]
        line = control["stops"]["event_attributable_stop_rate_1s"]
        lo, hi = line["difference"]["interval"]
        assert control["pairs"] >= 6 and lo <= truth <= hi, (subset, line)
        assert abs(line["difference"]["value"] - truth) <= 0.25, (subset, line)
        assert line["marker"] == (truth == 1.0)  # 8 concordant-yes pairs: p = 2^-7 < 0.05 (Holm over two: 0.016)
    assert "matched control (event run - clean run)" in stdout and "event_attributable_stop_rate_1s" in stdout
    # the drill-down's rule, per sample: what the control makes of each pair
    want = {"yields": "event_attributable_stop", "same_stop": "stopped_in_both_runs", "talks_through": "kept_the_floor"}
    paired = [r for r in rows if r["eligible"] and r["exercised"] and r["clean_exercised"]]
    outcomes = [overlap.explain(r, [])[0] for r in paired]
    assert len(paired) >= 24 and sum(o == want[system] for o in outcomes) >= 0.9 * len(paired), outcomes


def test_compare_finds_the_system_that_stops_because_of_the_overlap(synthetic, tmp_path):
    """fdbu compare on v1.5 (docs: Definitions 87-90): yields stops at the event and goes on in its clean run;
    same_stop stops at the same moment in both runs (its answer ended there anyway); talks_through never stops. The
    event runs of yields and same_stop are alike, so compare's per-run stop rate sees no difference; the compared
    controls mark both others against yields in every subset (8 pairs, every one discordant: p = 2^-7), in the
    subset's Holm family. compare.json, compare.csv (typed), the API and the report carry the lines; the report
    reads the compare.json back."""
    import pandas as pd

    import fdbu

    trees = synthetic["trees"]
    out = tmp_path / "cmp"
    paths = f"trees=[{trees['yields']},{trees['talks_through']},{trees['same_stop']}]"
    names = "names=[yields,talks_through,same_stop]"
    res = fdbu_main("compare", paths, names, f"out={out}", "plot=false", "progress=false")
    assert res.returncode == 0, res.stderr
    doc = json.loads((out / "compare.json").read_text())
    for pair in doc["pairs"]:
        for subset in V15:
            per_run = pair["subsets"][subset]["metrics"]["stop_rate_1s"]
            section = pair["entries"]["control"][subset]
            line = section["metrics"]["event_attributable_stop_rate_1s"]
            assert section["samples"]["in_both_controls"] == 8 and line["n"] == 8
            assert line["difference"]["value"] == -1.0 and line["p"] == 2 ** -7 and line["marker"], line
            assert line["family"] == f"{subset}, {pair['b']} vs yields"
            assert per_run["difference"]["value"] == (0.0 if pair["b"] == "same_stop" else -1.0)
            assert per_run["marker"] == (pair["b"] != "same_stop")
            assert section["metrics"]["stop_latency_shift_s"]["reason"].startswith("too few pairs: 8")
    assert "control on user_interruption: same_stop vs yields" in res.stdout
    assert "attributable_stop_1s" in res.stdout  # the hook's console name (Compared.console)
    assert "compare decides); control on SUBSET: each system's matched control" in res.stdout  # and its legend, once
    assert res.stdout.count("control on SUBSET:") == 1
    assert all(len(line) <= 80 for line in res.stdout.splitlines() if line.startswith("  attributable_stop_1s")
               and "*" in line)  # the decision table's line fits 80 columns
    frame = pd.read_csv(out / "compare.csv")
    control = frame[frame["entry"] == "control"]
    assert len(control) == 2 * 4 * 4 and control["diff"].dtype == float and control["marker"].dtype == bool
    api = fdbu.compare([trees["yields"], trees["talks_through"], trees["same_stop"]],
                       names=["yields", "talks_through", "same_stop"]).to_pandas()
    assert list(api.loc[api["entry"] == "control", "marker"]) == list(control["marker"])
    report = tmp_path / "report"
    res = fdbu_main("report", paths, names, f"out={report}", f"report.compare={out}", "report.format=[csv]",
                    "plot=false", "progress=false")
    assert res.returncode == 0, res.stderr
    board = pd.read_csv(report / "leaderboard.csv")
    marked = board[(board["metric"] == "event_attributable_stop_rate_1s") & (board["system"] != "yields")]
    assert len(marked) == 8 and marked["significant"].all() and (marked["diff"] == -1.0).all()
    # compare.json's compared controls read back as strictly as the rest: a line gone, an entry fdbu does not compare
    section = doc["pairs"][0]["entries"]["control"]
    del section["user_backchannel"]["metrics"]["stop_latency_shift_s"]
    doc["pairs"][0]["entries"]["hold"] = doc["pairs"][0]["entries"].pop("control")
    for broken, key in (({**doc, "pairs": [{**doc["pairs"][0], "entries": {"control": section}}, *doc["pairs"][1:]]},
                         "pairs[0].entries.control.user_backchannel.metrics names"),
                        (doc, "pairs[0].entries.hold.user_interruption is not a family entry fdbu compare compares")):
        given = tmp_path / "given"
        given.mkdir(exist_ok=True)
        (given / "compare.json").write_text(json.dumps(broken))
        res = fdbu_main("report", paths, names, f"out={tmp_path / 'refused'}", f"report.compare={given}",
                        "report.format=[csv]", "plot=false", "progress=false")
        assert res.returncode == 2 and f"{given}: compare.json: {key}" in res.stderr, res.stderr
        assert len(res.stderr.strip().splitlines()) == 1 and not (tmp_path / "refused").exists()


def test_the_api_and_the_sweep_over_v15(synthetic, tmp_path):
    """fdbu.score's DataFrames (rows of both runs, metrics, the control with +-inf as inf), and fdbu sweep over a
    v1.5 subset: both runs segmented at every grid point, the spec's point equal to score's numbers and control."""
    import math

    import fdbu
    from fdbu.errors import FdbuError

    unified, _, _ = synthetic["yields"]
    tree = synthetic["trees"]["yields"]
    r = fdbu.score(tree, vad={"threads": 1}, bootstrap={"resamples": 500})
    frames = r.to_pandas()
    assert set(frames) == {"overlap"} and {"clean_stop_s", "agreement", "matched"} <= set(frames["overlap"].columns)
    control = r.control()
    assert "control" in dir(r) and control.equals(r.entries("control"))  # each family's entry, a method by its key
    with pytest.raises(KeyError, match="'nothing': no family's entry"):
        r.entries("nothing")
    assert len(control) == 4 * 4 and set(control["subset"]) == set(V15)
    head = control[control["line"] == "event_attributable_stop_rate_1s"]
    assert (head["diff"] == 1.0).all() and head["marker"].all()
    shift = control[control["line"] == "stop_latency_shift_s"]
    assert all(math.isfinite(x) and x < 0 for x in shift["diff"])
    swept = fdbu.sweep(tree, sweep={"threshold": [0.4, 0.5], "min_silence_duration_ms": [100], "subset":
                                    "talking_to_other"}, vad={"threads": 1}, bootstrap={"resamples": 500})
    t = swept.sweep["trees"][0]
    assert t["subset"] == "talking_to_other"
    spec = next(p for p in t["points"] if p["spec_settings"])
    entry = unified["subsets"]["talking_to_other"]
    assert spec["metrics"] == entry["metrics"] and spec["counts"]["pairs"] == entry["control"]["pairs"]
    assert spec["control"]["event_attributable_stop_rate_1s"]["difference"] == \
        entry["control"]["stops"]["event_attributable_stop_rate_1s"]["difference"]
    df = swept.to_pandas()
    assert len(df) == 2 and df["event_attributable_stop_rate_1s_marker"].all()
    with pytest.raises(FdbuError, match="sweep.subset='icc_backchannel': one of synthetic_user_interruption, user_interruption"):
        fdbu.sweep(tree, sweep={"subset": "icc_backchannel"})


@pytest.mark.slow
def test_a_sharded_vad_stage_covers_both_runs(synthetic, tmp_path):
    """`fdbu vad` shards every file a v1.5 score segments (output.wav and clean_output.wav): a score that refuses to
    compute (vad.require_shards) then assembles both runs from the cache, with the same numbers."""
    tree = synthetic["trees"]["yields"]  # (same_stop's two runs are one file: cached once)
    cache = tmp_path / "cache"
    for k in range(2):
        out = fdbu_main("vad", f"tree={tree}", f"shard={k}", "shards=2", f"cache_dir={cache}", "progress=false",
                        "vad.threads=1")
        assert out.returncode == 0, out.stderr
    out = fdbu_main("score", f"tree={tree}", f"out={tmp_path / 'scored'}", f"cache_dir={cache}", "progress=false",
                    "vad.require_shards=true", "bootstrap.resamples=500", "vad.threads=1")
    assert out.returncode == 0, out.stderr
    assert "0 computed" in out.stdout
    again = json.loads((tmp_path / "scored" / "unified.json").read_text())
    assert again["subsets"] == synthetic["yields"][0]["subsets"]


@pytest.mark.slow
def test_the_v15_report_in_a_browser(synthetic, tmp_path):
    """The report of two v1.5 systems opened in headless Chromium: the leaderboard shows each system's control line
    as its unified.json has it, with compare's decision on the compared controls, and a drill-down draws both runs on one timeline (both runs' segments and words,
    the event's window shaded, o_s and o_e marked) under the rule in words. FDBU_SCREENSHOTS=DIR copies the
    screenshot (docs/report-drilldown-v15.png, on the v1.5 page)."""
    import os
    import shutil

    from browser import Chromium, executable

    exe = executable()
    if exe is None:
        pytest.skip("Chromium is not installed (make system-tools installs Debian's chromium)")
    a, b = synthetic["trees"]["yields"], synthetic["trees"]["same_stop"]
    out = tmp_path / "site"
    res = fdbu_main("compare", f"trees=[{a},{b}]", "names=[yields,same_stop]", f"out={tmp_path / 'cmp'}",
                    "plot=false", "progress=false")
    assert res.returncode == 0, res.stderr
    res = fdbu_main("report", f"trees=[{a},{b}]", "names=[yields,same_stop]", f"out={out}", "report.format=html",
                    "plot=false", "progress=false", f"report.compare={tmp_path / 'cmp'}")
    assert res.returncode == 0, res.stderr
    rows = synthetic["yields"][2]
    row = next(r for r in rows if r["subset"] == "user_interruption" and r["eligible"] and r["exercised"]
               and r["clean_exercised"])
    chrome = Chromium(exe, tmp_path / "profile")
    try:
        chrome.open((out / "index.html").resolve().as_uri())
        line = chrome.eval("Array.from(document.querySelectorAll('table.board[data-subset=\"user_interruption\"] "
                           "tr[data-metric=\"event_attributable_stop_rate_1s\"] td[data-system] .v'))"
                           ".map(td => td.textContent)")
        diffs = [synthetic[s][0]["subsets"]["user_interruption"]["control"]["stops"]
                 ["event_attributable_stop_rate_1s"]["difference"] for s in ("yields", "same_stop")]
        assert line == [record_text(d["value"], d["interval"]) for d in diffs]
        # the compared controls' decision (Definition 90): same_stop's stops are not the event's, marked against yields
        mark = chrome.eval("Array.from(document.querySelectorAll('table.board[data-subset=\"user_interruption\"] "
                           "tr[data-metric=\"event_attributable_stop_rate_1s\"] td[data-system] button.pd'))"
                           ".map(b => b.textContent)")
        compared = json.loads((tmp_path / "cmp" / "compare.json").read_text())["pairs"][0]["entries"]["control"]
        decided = compared["user_interruption"]["metrics"]["event_attributable_stop_rate_1s"]
        assert decided["marker"] and mark == [f"* \u25bc worse \u00b7 Holm p {p_text(decided['p_holm'])}"], mark
        chrome.eval(f"location.hash = 'sample=0/{row['sample_id']}'")
        rule = chrome.wait("document.getElementById('rule') && document.getElementById('rule').textContent")
        assert rule == overlap.explain(row, [])[1]
        segments = chrome.eval("document.querySelectorAll('#timeline .segment').length")
        assert segments == len(row["segments"]) + len(row["clean_segments"])
        lanes = chrome.eval("Array.from(document.querySelectorAll('#timeline text')).map(t => t.textContent)")
        assert {"output", "speech", "words", "clean output", "clean output speech", "clean output words"} <= set(lanes)
        assert chrome.eval("document.querySelectorAll('#timeline .event').length") == 1
        assert chrome.eval("document.querySelectorAll('#timeline .mark').length") == 2  # o_s and o_e
        boxes = chrome.eval("Array.from(document.querySelectorAll('#timeline .mark-label')).map(t => { "
                            "const b = t.getBBox(); return [b.x, b.x + b.width]; })")
        assert len(boxes) == 2 and boxes[0][1] < boxes[1][0]  # the two labels side by side, not over each other
        assert chrome.eval("document.querySelectorAll('#drilldown audio').length") == 3  # input, output, clean output
        shot = chrome.screenshot(tmp_path / "report-drilldown-v15.png", "#samples")
        assert chrome.errors() == []
    finally:
        chrome.close()
    assert shot.read_bytes()[:4] == b"\x89PNG" and shot.stat().st_size > 10_000
    if os.environ.get("FDBU_SCREENSHOTS"):
        shutil.copy(shot, os.environ["FDBU_SCREENSHOTS"])


@pytest.mark.slow
def test_the_v15_leaderboard_tables_render_compile_and_load(synthetic, tmp_path):
    """What leaves fdbu for a paper, for v1.5: leaderboard.tex with the control's lines compiles in a two-column
    article with no overfull box, leaderboard.md renders every control cell as written, leaderboard.csv loads with
    the control lines numeric."""
    import shutil

    import pandas as pd
    from markdown_it import MarkdownIt

    from test_paper_tables import _Cells, _compile

    a, b = synthetic["trees"]["yields"], synthetic["trees"]["same_stop"]
    out = tmp_path / "site"
    res = fdbu_main("report", f"trees=[{a},{b}]", "names=[yields,same_stop]", f"out={out}",
                    "report.format=[md,tex,csv]", "plot=false", "progress=false")
    assert res.returncode == 0, res.stderr
    parsed = _Cells()
    parsed.feed(MarkdownIt("commonmark").enable("table").render((out / "leaderboard.md").read_text()))
    assert len(parsed.tables) == 5 and parsed.tables[0][0][0] == ("place", False)  # the summary, then the subsets
    shift = [row for row in parsed.tables[1] if row[0][0] == "stop latency shift (s) (event - clean)"]
    want = synthetic["yields"][0]["subsets"]["user_interruption"]["control"]["stop_latency_shift_s"]["difference"]
    assert len(shift) == 1 and shift[0][2][0] == record_text(want["value"], want["interval"])
    frame = pd.read_csv(out / "leaderboard.csv")
    lines = frame[frame["kind"] == "paired_difference"]
    assert len(lines) == 4 * 4 * 2 and lines["value"].dtype.kind == "f" and lines["lo"].dtype.kind == "f"
    if shutil.which("pdflatex") is not None:
        log = _compile((out / "leaderboard.tex").read_text(), tmp_path, "twocolumn")
        assert "Overfull \\hbox" not in log, [line for line in log.splitlines() if "Overfull" in line]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.one_of(st.just(-1), st.integers(0, 3 * S), st.just(INF)),
                          st.one_of(st.just(-1), st.integers(0, 3 * S), st.just(INF)),
                          st.floats(0, 1), st.booleans()), min_size=0, max_size=30))
def test_the_control_equals_a_plain_python_twin(samples):
    """Random pairs of runs (not exercised: -1; a stop; never: INF), agreements and matched flags: the control's
    pairs, rates, discordant counts and exact McNemar p equal a twin written from Definition 58."""
    n = len(samples)
    ev, cl = (column([s[k] for s in samples]) for k in (0, 1))

    def run(stop):
        return overlap.OverlapRun(stop >= 0, stop, np.zeros(n, np.int64), np.zeros(n, bool), np.full(n, INF),
                                  np.full(n, INF))

    T = column([10 * S] * n)
    clean_T = column([10 * S if s[3] else 10 * S + 200_000 for s in samples])
    c = overlap.Components("talking_to_other", run(ev), run(cl), column([0] * n), column([0] * n), T, clean_T,
                           np.array([s[2] for s in samples], float), [], [], overlap.ControlSettings(min_agreement=0.5))
    out = overlap.control(c, Bootstrap(50, 0))
    pairs = [s for s in samples if s[0] >= 0 and s[1] >= 0 and s[3] and s[2] >= 0.5]
    assert out["pairs"] == len(pairs)
    for k in v15_control.WITHIN_US:
        line = out["stops"][f"event_attributable_stop_rate_{overlap.label(k)}"]
        e, c_ = [0 <= p[0] <= k for p in pairs], [0 <= p[1] <= k for p in pairs]
        b_only, a_only = sum(x and not y for x, y in zip(e, c_)), sum(y and not x for x, y in zip(e, c_))
        assert line["discordant"] == {"a_only": a_only, "b_only": b_only}
        if pairs:
            assert line["event_rate"] == sum(e) / len(pairs) and line["clean_rate"] == sum(c_) / len(pairs)
            # the code subtracts two quotients (x/n - y/n), the twin divides the difference: each quotient in [0, 1] is
            # within half an ulp, 2^-54, of its value, and the subtraction adds at most 2^-54 more (IEEE-754, any
            # machine)
            assert line["difference"]["value"] == pytest.approx((sum(e) - sum(c_)) / len(pairs), abs=3 * 2 ** -54)
        if not pairs:
            assert line["p"] is None and line["reason"] == "no paired samples" and not line["marker"]
            continue
        # exact two-sided binomial test, written as "every outcome no more likely than the one observed" (scipy's
        # binomtest's definition) in rational arithmetic: the code's p is this rational correctly rounded
        d = a_only + b_only
        pmf = [Fraction(comb(d, i), 2 ** d) for i in range(d + 1)]
        want_p = float(min(Fraction(1), sum(q for q in pmf if q <= pmf[b_only])))
        assert line["p"] == want_p
        assert not line["marker"] or (line["p_holm"] < 0.05 and line["reason"] is None)
    json.dumps(out, allow_nan=False)  # nothing a JSON file cannot hold


def test_a_line_that_cannot_decide_is_left_out_of_the_holm_family():
    """As compare (Definition 36): with 3 discordant pairs the 1 s line cannot reach alpha, so it has no Holm p and
    the stop latency shift is adjusted alone (its Holm p is its p)."""
    n = 40
    rng = np.random.default_rng(1)
    clean = (rng.uniform(1.5, 3.0, n) * S).astype(np.int64)
    event = clean - (rng.uniform(0.2, 0.4, n) * S).astype(np.int64)  # every event stop earlier...
    event[:3] = (0.5 * S)  # ...three of them within 1 s: 3 discordant pairs
    from benchmarks.control_calibration import components as made

    out = overlap.control(made(event, clean), Bootstrap(500, 0))
    head, shift = out["stops"][overlap.HEADLINE], out[overlap.SHIFT]
    assert head["reason"].startswith("too few pairs") and head["p_holm"] is None and not head["marker"]
    assert shift["reason"] is None and shift["p_holm"] == shift["p"] and shift["marker"]


def test_an_empty_subset_keeps_its_own_table_and_the_rule_knows_the_restriction():
    c = overlap.from_rows([], subset="user_interruption")
    metrics, extra = overlap.aggregate(c, selected=3, ineligible=3, boot=Bootstrap(10, 0))
    assert metrics["stop_rate_1s"]["better"] == "higher" and "response_latency_s" in metrics
    assert extra["control"]["pairs"] == 0
    spec = [(_Sample(10 * S, 4 * S, 5 * S), [(3.5, 4.3)], [(0.5, 8)])]  # exercised in both, agreement 0.8 / 7.5
    row = {**overlap.rows([spec[0][0]], _components(spec, min_agreement=0.5))[0], "subset": "user_interruption"}
    assert row["paired"] is False
    outcome, text = overlap.explain(row, [])
    assert outcome == "stopped_unpaired" and "less than overlap.min_agreement" in text


def test_a_scored_v15_tree_with_a_broken_control_is_refused_in_one_line(synthetic, tmp_path):
    """compare and report read the control: a unified.json whose control lacks a line, or has a marker that is not
    a flag, is refused naming the key, not a KeyError half way."""
    import shutil

    from fdbu.errors import FdbuError
    from fdbu.scoring.scored import read

    tree = tmp_path / "t"
    shutil.copytree(synthetic["trees"]["same_stop"], tree)
    read(tree)  # as written: accepted
    unified = json.loads((tree / "unified.json").read_text())
    for edit, where in ((lambda u: u["subsets"]["talking_to_other"]["control"]["stops"].pop(
                            "event_attributable_stop_rate_2s"),
                         "subsets.talking_to_other.control.stops.event_attributable_stop_rate_2s is missing"),
                        (lambda u: u["subsets"]["user_backchannel"]["control"]["stop_latency_shift_s"].update(
                            marker="yes"), "subsets.user_backchannel.control.stop_latency_shift_s.marker is 'yes'")):
        broken = json.loads(json.dumps(unified))
        edit(broken)
        (tree / "unified.json").write_text(json.dumps(broken))
        with pytest.raises(FdbuError, match=where.replace(".", r"\.")):
            read(tree)


@pytest.mark.slow
def test_the_k_values_are_a_setting_recorded_and_read_back(synthetic, tmp_path):
    """overlap.within_s: the metric and control names follow it, the signature records it, every reader (the report,
    via compare's check of the rows) rebuilds the same table from unified.json; without 1 s it is refused."""
    import shutil

    tree = tmp_path / "t"
    shutil.copytree(synthetic["trees"]["same_stop"], tree)
    out = fdbu_main("score", f"tree={tree}", "overlap.within_s=[0.25,1,3]", "progress=false", "vad.threads=1",
                    "bootstrap.resamples=200")
    assert out.returncode == 0, out.stderr
    unified = json.loads((tree / "unified.json").read_text())
    assert unified["overlap"]["within_s"] == [0.25, 1.0, 3.0] and unified["settings"] == "non-default"
    assert unified["non_default"] == ["bootstrap.resamples=200", "overlap.within_s=[0.25, 1.0, 3.0]"]
    entry = unified["subsets"]["background_speech"]
    assert [m for m in entry["metrics"] if m.startswith("stop_rate")] == ["stop_rate_250ms", "stop_rate_1s",
                                                                          "stop_rate_3s"]
    assert list(entry["control"]["stops"]) == [f"event_attributable_stop_rate_{k}" for k in ("250ms", "1s", "3s")]
    site = fdbu_main("report", f"trees=[{tree}]", f"out={tmp_path / 'site'}", "report.format=md", "plot=false",
                     "progress=false")
    assert site.returncode == 0, site.stderr
    assert "stop rate &lt;= 250 ms" in (tmp_path / "site" / "leaderboard.md").read_text()
    for bad, why in (("[0.5,2]", "1 s (the headline lines') among them"), ("[0.0005,1]", "a whole number of milliseconds")):
        res = fdbu_main("score", f"tree={tree}", f"overlap.within_s={bad}")
        assert res.returncode == 2 and why in res.stderr, res.stderr


@pytest.mark.slow
@pytest.mark.parametrize("width", ["column", "page"])
def test_the_stop_curves_print_at_width(synthetic, captured, width):
    """The stop curves at a paper's column and page width: every text at least 7 pt, inside the figure, none over
    another, the PDF's page that size (test_figures.check_layout); two bands per panel, the event run's and the
    clean run's; the k marks drawn."""
    from fdbu.figures.plot import compare_latency_curves

    unified, _, rows = synthetic["yields"]
    curves, words = overlap.stop_curves(rows, unified)  # v1.5's figure (fdbu.family.Figure), as score draws it
    data = compare_latency_curves(curves, width, {**words, "subject": "yields"})
    fig = captured[-1]
    check_layout(fig, data, width)
    axes = [ax for page in fig.pages for ax in page.axes if ax.get_visible() and ax.axison]
    assert len(axes) == 4 and len(fig.pages) == (2 if width == "column" else 1)  # four panels are 10.9 in a column
    for ax in axes:
        bands = [c for c in ax.collections if type(c).__name__ in ("FillBetweenPolyCollection", "PolyCollection")]
        assert len(bands) == 2
        assert {round(line.get_xdata()[0], 3) for line in ax.lines if len(set(line.get_xdata())) == 1} >= {0.5, 1, 2}
    assert [t.get_text() for t in fig.legends[0].get_texts()][:2] == ["event run", "clean run"]
