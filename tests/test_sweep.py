"""The sensitivity sweep: each grid point equals a separate scoring run with those settings."""
import csv
import io
import json
import shutil

import pytest

from builders import fdbu_main
from fdbu.errors import FdbuError
from fdbu.report import write as write_unified
from fdbu.pipeline import score_path
from fdbu.sensitivity import grid, sweep, to_csv, write
from fdbu.vad import SileroSettings, SpeechDetector

SUB = "synthetic_user_interruption"


@pytest.fixture(scope="module")
def swept(synth_tree, boot):
    points = grid([0.3, 0.5, 0.7], [50, 100, 500])
    det = SpeechDetector(backend="batched", device="cpu", cache=False)
    return points, sweep([synth_tree], det, boot, points)


def test_every_grid_point_equals_scoring_with_its_settings(synth_tree, boot, swept):
    points, result = swept
    for k in (0, 4, 8):  # (0.3, 50), (0.5, 100), (0.7, 500)
        p = points[k]
        det = SpeechDetector(SileroSettings(threshold=p.threshold, min_silence_duration_ms=int(p.min_silence_ms)),
                             backend="reference", cache=False)
        entry = score_path(synth_tree, det, boot).unified["subsets"][SUB]
        rec = result["trees"][0]["points"][k]
        assert rec["metrics"] == entry["metrics"]
        assert rec["counts"] == {"exercised": entry["counts"]["exercised"], **entry["counts"]["outcomes"]}


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


def test_several_trees_side_by_side(synth_tree, boot, tmp_path):
    other = tmp_path / "other"
    from fdbu.synth import synthesize

    synthesize(other, n={SUB: 6}, seed=8, system="prompt")
    points = grid([0.4, 0.6], [100])
    result = sweep([synth_tree, other], SpeechDetector(backend="batched", device="cpu", cache=False), boot, points)
    assert [t["tree"] for t in result["trees"]] == [str(synth_tree), str(other)]
    assert set(result["rankings"]) >= {"exercised_rate", "restart_rate"}
    rows = list(csv.DictReader(io.StringIO(to_csv(result))))
    assert len(rows) == 4 and {r["tree"] for r in rows} == {str(synth_tree), str(other)}
    written = write(result, tmp_path, plot=True)
    assert [p.name for p in written] == ["sweep.json", "sweep.csv", "sweep-heatmaps-0.png", "sweep-heatmaps-1.png"]
    assert all(p.stat().st_size > 0 for p in written)


@pytest.mark.parametrize("kw,problem", [
    (dict(thresholds=[], min_silence_ms=[100]), "sweep.thresholds is empty"),
    (dict(thresholds=[0.5], min_silence_ms=[]), "sweep.min_silence_ms is empty"),
    (dict(thresholds=[0.0, 0.5], min_silence_ms=[100]), "must lie in (0, 1)"),
    (dict(thresholds=[1.0], min_silence_ms=[100]), "must lie in (0, 1)"),
    (dict(thresholds=[0.5], min_silence_ms=[-50]), "sweep.min_silence_ms [-50]: values must not be negative"),
    (dict(thresholds=[0.5], min_silence_ms=[100], speech_pad_ms=[-30]), "sweep.speech_pad_ms [-30]: values must not"),
    (dict(thresholds=[0.5, 0.5], min_silence_ms=[100]), "lists a point twice"),
])
def test_refusals(kw, problem):
    with pytest.raises(FdbuError, match=problem.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        grid(**kw)


def test_cli_refuses_a_bad_grid_and_multi_tree_without_out(synth_tree, tmp_path):
    out = fdbu_main("sweep", f"tree={synth_tree}", "sweep.thresholds=[1.5]")
    assert out.returncode == 2 and out.stderr.strip().count("\n") == 0 and "(0, 1)" in out.stderr
    out = fdbu_main("sweep", f"tree=[{synth_tree},{synth_tree}]")
    assert out.returncode == 2 and "needs out=DIR" in out.stderr


def test_cli_sweep_refuses_zero_resamples_like_score(synth_tree):
    for cmd in ("sweep", "score"):
        out = fdbu_main(cmd, f"tree={synth_tree}", "bootstrap.resamples=0")
        assert out.returncode == 2 and "bootstrap.resamples=0: a whole number from 1 to 100000" in out.stderr
