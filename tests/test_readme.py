"""The README's flow and the docs' command blocks (guides/commands.md, the v1.5 and v2 family pages) run as written,
in order, in an empty folder (with the release layout and an official checkout beside it), and so does the Commands
guide's Python example. Only the lines a page marks as needing a GPU, a checkpoint or the network judge are skipped."""
import pytest
import shlex
import shutil

from builders import fdbu_main
from fdbu.synth import synthesize

from docs_pages import README, blocks, section

NEEDS = ("needs a GPU", "needs a checkpoint", "needs the network judge", "needs an official checkout")


def commands(block: str | None = None) -> list[tuple[str, list[str]]]:
    """(line, argv) of every command in a shell block (the Commands section's), continuations joined."""
    out = []
    block = blocks(section("Commands"), "sh")[0] if block is None else block
    for line in block.replace("\\\n", " ").splitlines():
        argv = shlex.split(line, comments=True)
        if argv:
            out.append((line, argv))
    return out


def test_the_readme_lists_commands_of_every_kind():
    names = {argv[1] for _, argv in commands()}
    assert {"synth", "score", "sweep", "export", "asr", "evaluate", "calibrate"} <= names


def parts() -> dict[str, list[tuple[str, list[str]]]]:
    """The Commands section's runnable lines in three runs of under a minute each on a slow 2-core machine (issue 78):
    scoring, comparing and reporting; the sweeps; export and evaluate. A later part starts in an empty folder too, and
    first runs the section's own synth lines it needs (the same lines, as written), then its own lines in order."""
    lines = [(line, argv) for line, argv in commands() if not any(n in line for n in NEEDS)]
    first = {word: next(i for i, (_, argv) in enumerate(lines) if argv[1] == word) for word in ("sweep", "export")}

    def synth(*outs: str):
        return [(line, argv) for line, argv in lines if argv[1] == "synth" and any(f"out={o}" in argv for o in outs)]
    return {"score": lines[:first["sweep"]],
            "sweep": synth("runs/modelA", "runs/modelB") + lines[first["sweep"]:first["export"]],
            "export": synth("runs/modelA", "data/official") + lines[first["export"]:]}


def test_the_parts_run_every_line_once_but_the_synth_lines_they_need():
    every = [line for line, _ in commands()]
    skipped = [line for line in every if any(n in line for n in NEEDS)]
    assert len(skipped) == 5 and len(every) - len(skipped) > 30  # a GPU, two checkpoints, the network judge, a clone
    ran = [line for part in parts().values() for line, _ in part]
    again = [line for line in ran if ran.count(line) > 1]
    assert sorted(set(ran)) == sorted(set(every) - set(skipped))
    assert all(line.startswith("fdbu synth") for line in again)


EXPECTED = {"score": ("runs/modelA/unified.json", "reports/modelA/latency-curves.png", "reports/multi/0-modelA/unified.json",
                      "reports/multi/1-modelB/unified.json", "reports/site/index.html", "reports/tables/leaderboard.md"),
            "sweep": ("reports/sweep/sweep.json", "reports/padding/sweep.json", "runs/modelA/sweep.json"),
            "export": ("runs/modelA-export/manifest.json", "runs/modelC/manifest.json", "runs/modelA/summary.json",
                       "runs/official/unified.json")}


@pytest.mark.slow
@pytest.mark.parametrize("part", EXPECTED)
def test_every_command_runs_as_written(tmp_path, calibrated, monkeypatch, part):
    """In an empty folder, seeding nothing: every line of the part the README does not mark as needing something
    runs; after the scoring part, the section's Python example, in the same folder."""
    monkeypatch.chdir(tmp_path)
    for line, argv in parts()[part]:
        assert argv[0] == "fdbu", line
        out = fdbu_main(*argv[1:])
        assert out.returncode == 0, f"{line}\n{out.stderr}"
    for path in EXPECTED[part]:
        assert (tmp_path / path).is_file(), path
    if part == "score":
        for code in blocks(section("Commands"), "python"):
            exec(compile(code, "docs/guides/commands.md", "exec"), {})


@pytest.mark.slow
def test_the_readmes_flow_runs_as_written(tmp_path, calibrated, monkeypatch):
    """The README's flow in an empty folder: synth's official folders, the four commands from them to unified.json
    and a comparison with the baseline, then the site and the reference column. The guide "Scoring your system's
    outputs" shows the same first two blocks, so this runs its commands too."""
    import json

    monkeypatch.chdir(tmp_path)
    trial, steps, after, releases = blocks(section("From the official folders to the leaderboard"), "sh")
    assert blocks(section("Scoring your system's outputs"), "sh") == [trial, steps]
    assert len(commands(steps)) == 4
    # the other releases' short lines: a v1.5 and a v2 run exported and scored as v1.0's
    assert {a for _, argv in commands(releases) for a in argv if a.startswith("family=")} == {"family=v1.5",
                                                                                             "family=v2"}
    for line, argv in commands(trial) + commands(steps) + commands(after) + commands(releases):
        assert argv[0] == "fdbu", line
        out = fdbu_main(*argv[1:])
        assert out.returncode == 0, f"{line}\n{out.stderr}"
    for tree in ("runs/mine", "runs/baseline"):
        assert json.loads((tmp_path / tree / "unified.json").read_text())["transcripts"]["source"] == "adopted"
    result = json.loads((tmp_path / "reports/mine-vs-baseline/compare.json").read_text())
    assert [s["name"] for s in result["systems"]] == ["baseline", "mine"] and not result["mixed_transcripts"]
    assert (tmp_path / "reports/site/index.html").is_file() and (tmp_path / "runs/mine/summary.json").is_file()
    for tree, family in (("runs/mine-v1.5", "+fdb-v1.5"), ("runs/mine-v2", "+fdb-v2")):
        assert family in json.loads((tmp_path / tree / "unified.json").read_text())["definitions"]


@pytest.mark.slow
def test_the_config_file_example_runs_as_written(tmp_path, calibrated, monkeypatch):
    """The Commands section's config-file block, from a folder holding conf/examples as the checkout does: the
    file's settings are used, and the command line's win."""
    import json

    shutil.copytree(README.parent / "conf" / "examples", tmp_path / "conf" / "examples")
    synthesize(tmp_path / "runs" / "modelA", n=2, seed=0)
    monkeypatch.chdir(tmp_path)
    block = blocks(section("Commands"), "sh")[1]
    thresholds = []
    for line, argv in commands(block):
        assert argv[:2] == ["fdbu", "score"] and "--config-name" in argv, line
        out = fdbu_main(*argv[1:])
        assert out.returncode == 0, f"{line}\n{out.stderr}"
        unified = json.loads((tmp_path / "reports/modelA/unified.json").read_text())
        thresholds.append(unified["speech_detection"]["settings"]["threshold"])
        assert (tmp_path / "reports/modelA/latency-curves.png").is_file()  # plot: true, from the file
    assert thresholds == [0.5, 0.6]


@pytest.mark.slow
def test_the_v15_section_runs_as_written(tmp_path, monkeypatch):
    """Full-Duplex-Bench v1.5's block in an empty folder: synth's official v1.5 folders, export with adopt (the
    four transcripts taken unchanged), evaluate; the line with the official checkout runs with shared/official-v1.5
    in its place where CI has it: get_timing.py agrees with fdbu on every exported sample byte for byte, and
    eval_behavior.py with fdbu's stub judge asks and reads as fdbu does (`official_run_said_and_recorded`)."""
    import hashlib
    import json

    from official_scripts import OFFICIAL_V15

    import sys

    from fdbu.cli import terminal

    monkeypatch.chdir(tmp_path)
    (block,) = blocks(section("Full-Duplex-Bench v1.5"), "sh")
    ran, official = [], None
    for line, argv in commands(block):
        assert argv[0] == "fdbu", line
        if any(n in line for n in NEEDS):
            continue
        if any("PATH/TO/Full-Duplex-Bench" in a for a in argv):
            if OFFICIAL_V15 is None:
                continue
            argv = [a.replace("PATH/TO/Full-Duplex-Bench", str(OFFICIAL_V15)) for a in argv]
            # as on a terminal: each official script said as it starts and with its seconds as it ends (issue 56)
            monkeypatch.setattr(terminal, "teller", lambda command, progress: lambda text: print(
                f"fdbu {command}: {text}", file=sys.stderr))
        out = fdbu_main(*argv[1:])
        assert out.returncode == 0, f"{line}\n{out.stderr}"
        ran.append(argv[1])
        if "evaluate.run_official=true" in argv:
            official = out
    assert ran[:6] == ["synth", "export", "evaluate", "score", "score", "report"] and len(commands(block)) == 8
    summary = json.loads((tmp_path / "runs/v15/summary.json").read_text())
    # the unified metrics: every subset with its control, the restricted run recorded as such, the stop curves
    unified = json.loads((tmp_path / "runs/v15/unified.json").read_text())
    assert all("control" in unified["subsets"][s] for s in summary["subsets"])
    agreeing = json.loads((tmp_path / "runs/v15-agreeing/unified.json").read_text())
    assert agreeing["non_default"] == ["overlap.min_agreement=0.5"] and agreeing["overlap"]["min_agreement"] == 0.5
    assert (tmp_path / "runs/v15/stop-curves.png").stat().st_size > 10_000
    assert (tmp_path / "runs/v15-report/index.html").is_file()
    # the worked sample is the row the block's commands wrote
    (worked,) = blocks(section("Full-Duplex-Bench v1.5"), "json")
    want = json.loads(worked)
    row = next(json.loads(line) for line in (tmp_path / "runs/v15/unified-samples.jsonl").read_text().splitlines()
               if json.loads(line)["sample_id"] == want["sample_id"])
    assert {k: row[k] for k in want} == want
    text = section("Full-Duplex-Bench v1.5")
    assert f"o_s = {row['event_start_s']} s to o_e = {row['event_end_s']} s" in text
    assert f"the same answer went on {row['clean_stop_s'] - row['stop_s']:.3f} s longer" in text
    assert set(summary["subsets"]) == {"user_interruption", "user_backchannel", "talking_to_other",
                                       "background_speech"}
    # export with adopt took both runs' four transcripts unchanged (asr.json's receipts)
    asr = json.loads((tmp_path / "runs/v15/asr.json").read_text())
    for subset in summary["subsets"]:
        entry = asr["subsets"][subset]
        assert set(entry["other_transcripts"]) == {"clean_output.json", "input.json", "clean_input.json"}
        for name, digest in entry["other_transcripts"]["clean_output.json"].items():
            data = (tmp_path / "runs/v15" / subset / name / "clean_output.json").read_bytes()
            assert data == (tmp_path / "v15/folders" / subset / name / "clean_output.json").read_bytes()
            assert hashlib.sha256(data).hexdigest() == digest
    if OFFICIAL_V15 is not None:  # get_timing.py itself on the exported tree: every sample's file byte for byte
        runs = summary["official_run"]["subsets"]
        eligible = {s: sum(r["eligible"] for r in json.loads((tmp_path / "runs/v15/manifest.json").read_text())[
            "samples"] if r["subset"] == s) for s in summary["subsets"]}
        assert all(runs[s]["status"] == "agreed" and runs[s]["equal"] == runs[s]["files"] == eligible[s] > 0
                   for s in summary["subsets"]), runs
        assert all(r["rules_agree"] for k, r in runs.items() if k.endswith("/behaviour")) and len(runs) == 8
        assert official is not None, "the v1.5 block no longer runs evaluate.run_official=true"
        official_run_said_and_recorded(official, tmp_path / "runs/v15")



def official_run_said_and_recorded(out, tree):
    """`fdbu evaluate ... evaluate.run_official=true` on a v1.5 tree (get_timing.py unchanged and offline, every file
    fdbu's; eval_behavior.py with fdbu's stub judge): each script said as it starts and ends, every eligible sample
    in summary.json, each subset agreed, the behaviour script's requests and reading the same as fdbu's."""
    import json
    import re

    from test_v15 import V15

    steps = ["get_timing.py: torch and its offline hub loading"] + [f"get_timing.py on {s}" for s in V15] + \
        [f"eval_behavior.py on {s} (the stub judge)" for s in V15]
    said = [line.removeprefix("fdbu evaluate: official ") for line in out.stderr.splitlines()
            if line.startswith("fdbu evaluate: ")]
    assert len(said) == 2 * len(steps) and said[0::2] == [f"{step} ..." for step in steps], out.stderr
    assert all(re.fullmatch(rf"{re.escape(step)}: \d+\.\d s", end) for step, end in zip(steps, said[1::2])), said
    summary = json.loads((tree / "summary.json").read_text())
    manifest = json.loads((tree / "manifest.json").read_text())
    eligible = {s: [r["sample_id"].split("/")[1] for r in manifest["samples"] if r["subset"] == s and r["eligible"]]
                for s in V15}
    assert not all(r["eligible"] for r in manifest["samples"])  # one left out: the scripts and fdbu skip it alike
    for subset in V15:
        numbers, run = summary["subsets"][subset], summary["official_run"]["subsets"][subset]
        assert sorted(numbers["latency_intervals"]) == sorted(eligible[subset])
        assert run["status"] == "agreed" and run["equal"] == run["files"] == len(eligible[subset]) and not run["differ"]
        assert f"official get_timing.py on {subset}: agreed ({run['files']} of {run['files']} " in out.stdout
    assert summary["official_run"]["files"]["get_timing.py"]["pinned"] is True
    for subset in V15:  # the behaviour script with fdbu's stub judge: fdbu's requests and reading are the script's
        record = summary["official_run"]["subsets"][f"{subset}/behaviour"]
        assert record["rules_agree"] is True and record["status"] == "not comparable", record
        assert record["reference_column"] == {"pending": summary["subsets"][subset]["behaviour"]["pending"]}
        assert record["judge"]["official_requests"] >= len(eligible[subset])
    assert sum(summary["official_run"]["subsets"][f"{s}/behaviour"]["judge"]["official_requests"] for s in V15) > \
        sum(map(len, eligible.values()))  # some asked again with seed 2, by the script and by fdbu alike
    assert summary["rules"].startswith("Full-Duplex-Bench v1.5 official evaluation scripts")
    lists = [v for s in V15 for v in summary["subsets"][s]["latency_intervals"].values()]
    assert sum(bool(v["latency_stop_list"]) for v in lists) >= 6 and sum(bool(v["latency_resp_list"]) for v in lists) >= 6


@pytest.mark.slow
def test_the_v2_section_runs_as_written(tmp_path, monkeypatch):
    """Full-Duplex-Bench v2's block in an empty folder: two systems' runs as upstream leaves them, export with the
    judge and adopt, evaluate, score, compare, report; then the unchanged score.py and score_time.py on run-a's judge
    outputs give the reference column's rows."""
    import csv
    import json
    import subprocess
    import sys

    from official_scripts import OFFICIAL_V2

    monkeypatch.chdir(tmp_path)
    (block,) = blocks(section("Full-Duplex-Bench v2"), "sh")
    ran = []
    for line, argv in commands(block):
        assert argv[0] == "fdbu", line
        if any("PATH/TO/Full-Duplex-Bench" in a for a in argv):
            if OFFICIAL_V2 is None:
                continue
            argv = [a.replace("PATH/TO/Full-Duplex-Bench", str(OFFICIAL_V2)) for a in argv]
        out = fdbu_main(*argv[1:])
        assert out.returncode == 0, f"{line}\n{out.stderr}"
        ran.append(argv[1])
    assert ran == ["synth", "synth", "export", "export", "evaluate", "evaluate",
                   *(["evaluate"] if OFFICIAL_V2 is not None else []), "score", "score", "compare", "report"]
    assert len(commands(block)) == 11
    if OFFICIAL_V2 is not None:
        runs = json.loads((tmp_path / "v2/a/summary.json").read_text())["official_run"]["subsets"]
        assert {r["status"] for r in runs.values()} == {"agreed"} and len(runs) == 4
    unified = json.loads((tmp_path / "v2/a/unified.json").read_text())
    assert set(unified["subsets"]) == {"v2_daily", "v2_correction", "v2_entity_tracking", "v2_safety"}
    assert all({"judge", "offset"} <= set(e) for e in unified["subsets"].values()) and "clock" in unified["session"]
    assert (tmp_path / "v2/report/index.html").is_file() and (tmp_path / "v2/compare/compare.json").is_file()
    if OFFICIAL_V2 is None:
        return
    summary = json.loads((tmp_path / "v2/a/summary.json").read_text())
    for script, files in (("score.py", ("judge_summary.csv",)),
                          ("score_time.py", ("judge_summary.csv", "judge_summary_binned.csv"))):
        cwd = tmp_path / script
        cwd.mkdir()
        run = subprocess.run([sys.executable, str(OFFICIAL_V2 / "scoring" / script), "--root_dir",
                              str(tmp_path / "v2/run-a/eval_results")], cwd=cwd, capture_output=True, text=True,
                             timeout=120)
        assert run.returncode == 0, run.stderr
        for name in files:
            with open(cwd / name, newline="") as f:
                theirs = sorted(list(csv.reader(f))[1:])
            ours = sorted(["" if x is None else str(x) for x in row] for entry in summary["subsets"].values()
                          for row in entry[script][name]["rows"])
            assert theirs == ours and len(ours) == 12, (script, name)
