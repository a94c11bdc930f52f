"""What a user meets (issue 23): a multirun never writes one job over another, export says where it
looked for outputs, the API's DataFrames compute, a did-you-mean never offers the word typed, --help
lists only what a command accepts, a config file of keys works."""
import json
import tomllib
from pathlib import Path

import pytest

import fdbu
from builders import fdbu_main, release_dataset, sha
from fdbu.errors import FdbuError
from fdbu.synth import synthesize
from test_refusals import refused

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def two(tmp_path_factory):
    root = tmp_path_factory.mktemp("surfaces")
    return synthesize(root / "A", n=3, seed=0), synthesize(root / "B", n=3, seed=0, system="prompt")


# 1. a multirun with one out=: a subfolder per job, a header per job; over one tree's settings without out=: refused
def test_a_multirun_sharing_out_writes_a_folder_per_job(two, tmp_path, calibrated):
    a, b = two
    out = fdbu_main("score", "-m", f"tree={a},{b}", f"out={tmp_path / 'x'}", "progress=false")
    assert out.returncode == 0, out.stderr
    headers = [line for line in out.stdout.splitlines() if line.startswith("== job ")]
    assert len(headers) == 2 and f"tree={a}" in headers[0] and f"tree={b}" in headers[1]
    for k, tree in enumerate((a, b)):
        unified = json.loads((tmp_path / "x" / f"{k}-{tree.name}" / "unified.json").read_text())
        assert unified["inputs"]["manifest.json"] == sha((tree / "manifest.json").read_bytes())  # that job's tree
    assert sorted(p.name for p in (tmp_path / "x").iterdir()) == [f"0-{a.name}", f"1-{b.name}"]
    before = sorted(p.name for p in a.iterdir())
    refused(fdbu_main("score", "-m", f"tree={a}", "vad.threshold=0.4,0.5"),
            f"-m: job 0 (vad.threshold=0.4) and job 1 (vad.threshold=0.5) would both write into {a.resolve()}",
            "one out=DIR for all")
    assert sorted(p.name for p in a.iterdir()) == before


def test_what_is_one_value_and_what_is_several():
    from fdbu.cli.overrides import swept as _swept

    assert _swept("a,b") and _swept("range(1,3)") and _swept("glob(*)") and _swept("[a,b],[c]")
    assert not _swept("[a,b]") and not _swept("{a: 1, b: 2}") and not _swept("'a,b'") and not _swept("runs/A")


# 5. export that finds no output.wav for a whole subset: one line saying where it looked
def test_export_without_outputs_says_where_it_looked(tmp_path):
    dataset = release_dataset(synthesize(tmp_path / "src", n=2, seed=1, ineligible=0.0), tmp_path / "release")
    for wav in dataset.glob("*/*/output.wav"):
        wav.unlink()
    out = fdbu_main("export", f"dataset={dataset}", f"out={tmp_path / 'tree'}")
    line = refused(out, "no sample of", "has an output.wav (looked for", "give the system's outputs as outputs=DIR")
    assert str(dataset) in line and not (tmp_path / "tree").exists()


# 11, 12. DataFrames a notebook computes on; pandas is a dependency of the API
def test_dataframes_are_numeric_with_not_reached_flags(two, calibrated):
    a, _ = two
    sweep = fdbu.sweep(a, sweep={"threshold": [0.3, 0.5], "min_silence_duration_ms": [100]}).to_pandas()
    for column in sweep.columns:
        if column.endswith(("_value", "_lo", "_hi", "_p90")):
            assert sweep[column].dtype == "float64", column
            sweep[column].mean()  # computes
        if column.endswith("_not_reached"):
            assert sweep[column].dtype == "boolean", column
    assert sweep["exercised"].dtype == "int64" and sweep["system"].iloc[0] == a.name
    flagged = [c for c in sweep.columns if c.endswith("_not_reached")]
    for flag in flagged:
        assert sweep[flag[:-len("_not_reached")]][sweep[flag]].isna().all()
    metrics = fdbu.score(a).metrics()
    assert {"system", "p90", "p90_not_reached", "value_not_reached"} <= set(metrics.columns)
    assert metrics["count"].dtype == "int64" and metrics["value"].dtype == "float64"
    assert (metrics["system"] == a.name).all()
    latency = metrics[metrics.metric == "response_latency_s"]
    assert latency["p90"].notna().any() or latency["p90_not_reached"].any()


def test_pandas_is_a_dependency_not_a_test_extra():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert any(d.startswith("pandas") for d in project["dependencies"])
    assert isinstance(fdbu.compare.__doc__, str) and "Returns" in fdbu.compare.__doc__  # 14: a real docstring
    for fn in (fdbu.score, fdbu.sweep, fdbu.compare):
        assert "Parameters" in fn.__doc__ and ">>>" in fn.__doc__


# 13. a string where a list is wanted, a key of another command: named, never "did you mean" the word typed
def test_a_string_for_a_list_and_a_key_of_another_command():
    with pytest.raises(FdbuError, match="trees='runs/modelA,runs/modelB': a list of paths"):
        fdbu.compare("runs/modelA,runs/modelB")
    line = refused(fdbu_main("compare", "tree=[A,B]"), "tree is not a setting of compare", "did you mean trees?")
    assert "did you mean tree?" not in line
    refused(fdbu_main("score", "tree=x", "vad.thrshold=0.4"), "did you mean vad.threshold?")


# 14. a multi-tree sweep computed in memory needs no out=
def test_a_multi_tree_sweep_in_memory_needs_no_out(two, calibrated):
    a, b = two
    frame = fdbu.sweep([a, b], names=["A", "B"], sweep={"threshold": [0.5], "min_silence_duration_ms": [100]}).to_pandas()
    assert sorted(frame["system"]) == ["A", "B"]
    with pytest.raises(FdbuError, match="a sweep over several trees needs out=DIR"):
        fdbu.sweep([a, b], write=True)


# 16. --help lists only what every run of the command may take
@pytest.mark.parametrize("command,refused_keys", [("export", ["device"]), ("sweep", ["vad.threshold",
                         "vad.min_silence_duration_ms"]), ("calibrate", ["vad.threshold"])])
def test_help_leaves_out_keys_every_run_refuses(command, refused_keys):
    text = fdbu_main(command, "--help").stdout
    keys = [line.split()[0] for line in text.splitlines() if line.startswith("  ") and not line.startswith("   ")
            and not line.strip().startswith("(")]
    for key in refused_keys:
        assert key not in keys
        args = ["tree=x", f"{key}=0.4"] if command != "export" else ["dataset=x", "out=y", f"{key}=cpu"]
        assert fdbu_main(command, *args).returncode == 2  # and a run refuses it indeed
    assert "vad.threshold" in [line.split()[0] for line in fdbu_main("score", "--help").stdout.splitlines()
                               if line.startswith("  ") and line.split()]


# 15. a config file of the command's keys; malformed ones in one line
def test_a_config_file_of_keys(two, tmp_path, calibrated):
    a, _ = two
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "mine.yaml").write_text(f"tree: {a}\nout: {tmp_path / 'out'}\nvad:\n  threshold: 0.45\nprogress: false\n")
    out = fdbu_main("score", "--config-dir", str(conf), "--config-name", "mine", "vad.min_silence_duration_ms=120")
    assert out.returncode == 0, out.stderr
    settings = json.loads((tmp_path / "out" / "unified.json").read_text())["speech_detection"]["settings"]
    assert (settings["threshold"], settings["min_silence_duration_ms"]) == (0.45, 120)
    (conf / "bad.yaml").write_text("tree: [a\n")
    refused(fdbu_main("score", "-cd", str(conf), "-cn", "bad"), "is not valid YAML")
    (conf / "list.yaml").write_text("- a\n- b\n")
    refused(fdbu_main("score", "-cd", str(conf), "-cn", "list"), "is not a mapping of settings")
    (conf / "groups.yaml").write_text("defaults:\n  - score_schema\ntree: x\n")
    refused(fdbu_main("score", "-cd", str(conf), "-cn", "groups"), "has a defaults list")
    (conf / "typo.yaml").write_text(f"tree: {a}\nvad:\n  thrshold: 0.4\n")
    refused(fdbu_main("score", "-cd", str(conf), "-cn", "typo"), "vad.thrshold is not a setting",
            "did you mean vad.threshold?")
    refused(fdbu_main("score", "-cd", str(conf), "-cn", "absent"), "absent.yaml cannot be read")
    (conf / "huge.yaml").write_text(f"tree: {a}\nbootstrap:\n  seed: {10**30}\n")  # checked as the command line's
    refused(fdbu_main("score", "-cd", str(conf), "-cn", "huge"), "bootstrap.seed=<an integer of 31 digits>")


# 18. on a terminal, prose and tables fit its width, no cell split; a pipe gets the lines as they are; a legend
def test_output_fits_the_terminal_without_splitting_a_cell(monkeypatch):
    import os
    import sys

    from fdbu.cli import terminal as cli
    from fdbu.scoring.unified import LEGEND

    table = ["  metric                       better      n  mixed                    prompt                   "
             "difference                      p   Holm  decision",
             "  early_start_rate             lower      29  0.448 [0.284, 0.625]     0.000 [0.000, 0.117]     "
             "-0.448 [-0.448, -0.227]    <0.001  0.002  *",
             "  response_latency_s           lower      29  n/r [n/r, n/r]           0.449 [0.334, 0.608]     "
             "-inf [-inf, -inf]          <0.001         too few pairs"]
    text = "\n".join([LEGEND, *table, "wrote " + ", ".join(f"reports/x/file-{k}.png" for k in range(12))])
    monkeypatch.setattr(sys.stdout, "isatty", lambda: False)
    assert cli.fit(text) == text  # into a pipe or a file: untouched
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    for width in (100, 72, 60):
        monkeypatch.setattr("shutil.get_terminal_size", lambda fallback, w=width: os.terminal_size((w, 24)))
        lines = cli.fit(text).split("\n")
        assert all(len(line) <= width for line in lines), width
        assert " ".join(" ".join(lines).split()) == " ".join(text.split())  # nothing lost, only the breaks moved
        for cell in ("0.448 [0.284, 0.625]", "-0.448 [-0.448, -0.227]", "too few pairs", "n/r [n/r, n/r]"):
            assert any(cell in line for line in lines), (width, cell)  # no cell is split
        folded = [line for line in lines if "difference" in line or "-0.448 [" in line or "-inf [-inf" in line]
        columns = {line.index(word) for line, word in zip(folded, ("difference", "-0.448 [", "-inf [-inf"))}
        assert len(columns) == 1, (width, folded)  # the cut-off cells stay under one another


def test_the_score_summary_explains_its_columns(two, calibrated):
    from fdbu.scoring.unified import LEGEND, summary

    text = summary(fdbu.score(two[0]).unified)
    assert text.endswith(LEGEND)
    for word in ("context", "Wilson", "bounds", "not reached"):
        assert word in text.split("\n")[-1]
