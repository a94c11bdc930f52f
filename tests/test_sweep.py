"""The sensitivity sweep: each grid point equals a separate scoring run with those settings."""
import csv
import io
import json
import shutil

import re

import pytest

from builders import fdbu_main, recording_bar
from fdbu.errors import FdbuError
from fdbu.scoring.unified import write as write_unified
from fdbu.scoring.pipeline import score_path
from fdbu.scoring.sweep import grid, order_text, rankings, sweep, to_csv, weak_order, write
from fdbu.vad import SileroSettings, SpeechDetector

SUB = "synthetic_user_interruption"


BARS: list = []  # the bars the module's sweep drew (test_each_setting_moves_the_sweeps_bar): (kwargs, steps)


@pytest.fixture(scope="module")
def swept(synth_tree, boot):
    points = grid([0.3, 0.5, 0.7], [50, 100, 500])
    det = SpeechDetector(backend="batched", device="cpu", cache=False, progress=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("fdbu.scoring.sweep.Bar", recording_bar(BARS))
        return points, sweep([synth_tree], det, boot, points)


@pytest.mark.slow
def test_every_grid_point_equals_scoring_with_its_settings(synth_tree, boot, swept):
    points, result = swept
    for k in (0, 4, 8):  # (0.3, 50), (0.5, 100), (0.7, 500)
        p = points[k]
        det = SpeechDetector(SileroSettings(threshold=p.threshold, min_silence_duration_ms=int(p.min_silence_duration_ms)),
                             backend="reference", cache=False)
        entry = score_path(synth_tree, det, boot).unified["subsets"][SUB]
        rec = result["trees"][0]["points"][k]
        assert rec["metrics"] == entry["metrics"]
        assert rec["counts"] == {"exercised": entry["counts"]["exercised"], **entry["counts"]["outcomes"]}


@pytest.mark.slow
def test_a_padding_axis_equals_scoring_with_that_padding(synth_tree, boot):
    points = grid([0.45], [100], speech_pad_ms=[0, 30, 100])
    result = sweep([synth_tree], SpeechDetector(backend="batched", device="cpu", cache=False), boot, points)
    metrics = [r["metrics"] for r in result["trees"][0]["points"]]
    for k, pad in ((1, 30), (2, 100)):
        det = SpeechDetector(SileroSettings(threshold=0.45, speech_pad_ms=pad), backend="reference", cache=False)
        assert metrics[k] == score_path(synth_tree, det, boot).unified["subsets"][SUB]["metrics"]
    assert metrics[0] != metrics[2]  # 100 ms of padding moves stops and speech seconds
    assert result["grid"]["speech_pad_ms"] == [0.0, 30.0, 100.0]


def test_spec_point_reproduces_unified_json(synth_tree, boot, swept, tmp_path):
    tree = tmp_path / "t"
    shutil.copytree(synth_tree, tree)
    write_unified(score_path(tree, SpeechDetector(backend="batched", device="cpu", cache=False), boot), tree)
    unified = json.loads((tree / "unified.json").read_text())["subsets"][SUB]
    spec = [r for r in swept[1]["trees"][0]["points"] if r["spec_settings"]]
    assert len(spec) == 1
    assert json.loads(json.dumps(spec[0]["metrics"])) == unified["metrics"]
    assert spec[0]["min_observable_s"] == unified["min_observable_s"]


def test_ranges_cover_the_grid(swept):
    t = swept[1]["trees"][0]
    values = [r["metrics"]["restart_rate"]["value"] for r in t["points"]]
    assert t["ranges"]["restart_rate"]["value"] == [min(values), max(values)]
    assert swept[1]["kind"] == "sweep" and swept[1]["grid"]["points"] == 9


@pytest.mark.slow
def test_several_trees_side_by_side(synth_tree, boot, tmp_path):
    other = tmp_path / "other"
    from fdbu.synth import synthesize

    synthesize(other, n={SUB: 6}, seed=8, system="prompt")
    points = grid([0.4, 0.6], [100])
    result = sweep([synth_tree, other], SpeechDetector(backend="batched", device="cpu", cache=False), boot, points,
                   names=["mixed", "prompt"])
    assert [t["name"] for t in result["trees"]] == ["mixed", "prompt"]
    assert str(synth_tree) not in json.dumps(result) and str(tmp_path) not in json.dumps(result)  # names, no paths
    from fdbu.families.v1_0.interruption import METRICS

    assert list(result["rankings"]) == [m.name for m in METRICS]  # every metric, not only the table's
    orders = {o["order"] for r in result["rankings"].values() for o in r["orders"]}
    assert orders <= {"mixed < prompt", "prompt < mixed", "mixed = prompt"} and orders
    rows = list(csv.DictReader(io.StringIO(to_csv(result))))
    assert len(rows) == 4 and {r["system"] for r in rows} == {"mixed", "prompt"} and "tree" not in rows[0]
    written = write(result, tmp_path, plot=True)
    assert [p.name for p in written] == ["sweep.json", "sweep.csv", "sweep-heatmaps.png", "sweep-heatmaps.pdf"]
    assert written[2].read_bytes()[:4] == b"\x89PNG" and written[3].read_bytes()[:4] == b"%PDF"
    assert write(result, tmp_path / "again", plot=True) and all(
        (tmp_path / "again" / p.name).read_bytes() == p.read_bytes() for p in written)


def _point(values: dict) -> dict:
    return {"metrics": {n: {"value": v, "better": "lower"} for n, v in values.items()}}


def test_rankings_show_ties_as_ties_and_hold_only_when_the_same_everywhere():
    trees = [{"name": "A", "ranges": {"m": None, "t": None, "u": None, "n": None},
              "points": [_point({"m": 0.1, "t": 0.5, "u": 0.2, "n": None}), _point({"m": 0.2, "t": 0.5, "u": 0.2,
                                                                                  "n": 0.3})]},
             {"name": "B", "ranges": {}, "points": [_point({"m": 0.3, "t": 0.5, "u": 0.2, "n": 0.1}),
                                                    _point({"m": "not reached", "t": 0.5, "u": 0.3, "n": 0.1})]}]
    r = rankings(trees)
    assert r["m"] == {"better": "lower", "holds": True, "orders": [{"order": "A < B", "points": 2}],
                      "undefined_points": 0}  # "not reached" is the highest value
    assert r["t"]["holds"] and r["t"]["orders"] == [{"order": "A = B", "points": 2}]  # a tie everywhere holds
    assert not r["u"]["holds"] and r["u"]["orders"] == [{"order": "A < B", "points": 1},
                                                        {"order": "A = B", "points": 1}]  # a tie is no order
    assert not r["n"]["holds"] and r["n"]["undefined_points"] == 1
    assert weak_order(["A", "B", "C"], [0.5, 0.25, 0.5]) == [["B"], ["A", "C"]]
    assert order_text([["B"], ["A", "C"]]) == "B < A = C"


@pytest.mark.parametrize("kw,problem", [
    (dict(threshold=[], min_silence_duration_ms=[100]), "sweep.threshold is empty"),
    (dict(threshold=[0.5], min_silence_duration_ms=[]), "sweep.min_silence_duration_ms is empty"),
    (dict(threshold=[0.0, 0.5], min_silence_duration_ms=[100]), "sweep.threshold=[... 0.0 ...]: a number in (0, 1)"),
    (dict(threshold=[1.0], min_silence_duration_ms=[100]), "sweep.threshold=[... 1.0 ...]: a number in (0, 1)"),
    (dict(threshold=[0.5], min_silence_duration_ms=[-50]), "sweep.min_silence_duration_ms=[... -50 ...]: milliseconds from 0"),
    (dict(threshold=[0.5], min_silence_duration_ms=[100], speech_pad_ms=[-30]), "sweep.speech_pad_ms=[... -30 ...]: millis"),
    (dict(threshold=[0.5], min_silence_duration_ms=[100], neg_threshold_offset=[1.5]),
     "sweep.neg_threshold_offset=[... 1.5 ...]: a number from 0 to 1"),
    (dict(threshold=["0.5"], min_silence_duration_ms=[100]), "sweep.threshold=[... '0.5' ...]: a number in (0, 1)"),
    (dict(threshold=[0.5, 0.5], min_silence_duration_ms=[100]), "lists a point twice"),
])
def test_refusals(kw, problem):
    """The grid's one check (settings.grid, the ranges of settings.AXES), as the config and the API reach it."""
    from fdbu.config.base import GridConfig

    with pytest.raises(FdbuError, match=re.escape(problem)):
        grid(**kw)
    with pytest.raises(FdbuError, match=re.escape(problem)):
        GridConfig(**kw)


def test_one_spelling_per_segment_setting():
    """vad.<key> and sweep.<key> are one setting under one name (silero-vad's keyword), so a sweep's grid point and
    a score's settings are the same words, and the grid's fields are its axes in order."""
    import dataclasses

    from fdbu.config.base import GridConfig, VadConfig
    from fdbu.config.settings import AXES, SEGMENT, GridPoint, SileroSettings

    assert tuple(AXES) == tuple(f.name for f in dataclasses.fields(GridPoint))
    assert set(SEGMENT) <= set(AXES) and set(SEGMENT) <= {f.name for f in dataclasses.fields(VadConfig)}
    assert set(AXES) <= {f.name for f in dataclasses.fields(GridConfig)}
    assert set(SEGMENT) <= {f.name for f in dataclasses.fields(SileroSettings)}


def test_cli_refuses_a_bad_grid_and_multi_tree_without_out(synth_tree, tmp_path):
    out = fdbu_main("sweep", f"tree={synth_tree}", "sweep.threshold=[1.5]")
    assert out.returncode == 2 and out.stderr.strip().count("\n") == 0 and "(0, 1)" in out.stderr
    out = fdbu_main("sweep", f"tree=[{synth_tree},{synth_tree}]")
    assert out.returncode == 2 and "needs out=DIR" in out.stderr


def test_cli_sweep_refuses_zero_resamples_like_score(synth_tree):
    for cmd in ("sweep", "score"):
        out = fdbu_main(cmd, f"tree={synth_tree}", "bootstrap.resamples=0")
        assert out.returncode == 2 and "bootstrap.resamples=0: a whole number from 1 to 100000" in out.stderr


@pytest.mark.slow
def test_the_same_trees_elsewhere_give_the_same_bytes_and_the_console_shows_the_paths(synth_tree, tmp_path):
    """sweep.json and sweep.csv name the systems, never the trees' paths (Definition 22); the console table
    shows each path beside its name, and has the response latency and no-response columns and ranges."""
    from fdbu.synth import synthesize

    grid_args = ["sweep.threshold=[0.4,0.6]", "sweep.min_silence_duration_ms=[100]", "plot=false", "progress=false"]
    printed = {}
    for place in ("here", "there/deeper"):
        a, b = tmp_path / place / "runs" / "mixed", tmp_path / place / "runs" / "prompt"
        shutil.copytree(synth_tree, a)
        synthesize(b, n={SUB: 4}, seed=8, system="prompt")
        out = fdbu_main("sweep", f"tree=[{a},{b}]", f"out={tmp_path / place / 'out'}", *grid_args)
        assert out.returncode == 0, out.stderr
        printed[place] = out.stdout
        assert f"mixed ({a})" in out.stdout and f"prompt ({b})" in out.stdout
        headers = [line for line in out.stdout.splitlines() if line.lstrip().startswith("thr") and " | " in line]
        assert any("resp_med_s" in h for h in headers) and any("no_resp" in h for h in headers)
        assert "swept: threshold (" in out.stdout and "; held: " in out.stdout  # what varied, what did not
        ranges = [line for line in out.stdout.splitlines() if "range over the grid" in line]
        assert len(ranges) == 2 and all("response_latency_s [" in r and "no_response_rate [" in r for r in ranges)
    for f in ("sweep.json", "sweep.csv"):
        here, there = ((tmp_path / p / "out" / f).read_bytes() for p in ("here", "there/deeper"))
        assert here == there and str(tmp_path).encode() not in here


@pytest.mark.parametrize("old,new", [("sweep.thresholds", "sweep.threshold"),
                                     ("sweep.min_silence_ms", "sweep.min_silence_duration_ms"),
                                     ("sweep.min_speech_ms", "sweep.min_speech_duration_ms")])
def test_the_old_spellings_name_the_new_ones(old, new, tmp_path):
    """The sweep's axes were spelled differently from vad.* before one spelling: a command line from then is
    refused in one line that names the setting's name now (nothing is translated behind the user's back)."""
    out = fdbu_main("sweep", f"tree={tmp_path}", f"{old}=[100]")
    assert out.returncode == 2 and out.stderr.strip() == f"fdbu: error: config: {old} is not a setting; did you mean {new}?"


def test_each_setting_moves_the_sweeps_bar(swept):
    """The grid's settings have a bar of their own, one step per setting (a 25-point sweep ran 18 s with nothing on
    screen between its first line and the heatmaps' bar), drawn on a terminal only (tqdm's disable=None)."""
    points, _ = swept
    [(kw, steps)] = BARS
    assert kw["total"] == len(points) == 9 and kw["disable"] is None and steps == [1] * 9
