"""`fdbu report`: the leaderboard reads unified.json and compare's decisions, the rule texts, the exports,
the command's outputs and refusals."""
import csv
import io
import json
import math
import re

import numpy as np
import pytest

from builders import fdbu_main, wav_bytes
from fdbu.reporting import board as lb, drilldown, site, tables
from fdbu import tasks
from fdbu.common.audio import pcm16_frames
from fdbu.common.cells import md_text
from fdbu.comparison.pairwise import compare
from fdbu.comparison.systems import load
from fdbu.metrics.stats import NOT_REACHED
from report_trees import scored_pair


@pytest.fixture(scope="module")
def trees(vad, boot, tmp_path_factory):
    # 20 a subset: enough discordant pairs (6 or more) for a calibrated marker (`fdbu compare`'s decisions)
    return scored_pair(tmp_path_factory.mktemp("report"), vad, boot, n=20)


@pytest.fixture(scope="module")
def systems(trees):
    return [load(trees[0], "mixed"), load(trees[1], "prompt")]


@pytest.fixture(scope="module")
def result(systems):
    return compare(systems)


def _rank(v, better):
    return lb._key(v, better)


def test_leaderboard_is_unified_json_with_compares_decisions(systems, result):
    board = lb.leaderboard(systems, result)
    scored = [s for s in tasks.scored() if s in systems[0].unified["subsets"]]
    assert [b["subset"] for b in board] == scored[:4] + ["icc_backchannel"] + scored[4:]  # in the release's order
    icc = board[4]
    assert icc["rows"] == [] and icc["note"] == lb.UNSCORED  # no unified metric: its official numbers alone
    assert [r["note"] for r in icc["reference"]] == ["no summary.json (fdbu evaluate has not run on this tree)"] * 2
    pair = result["pairs"][0]
    seen_mark = False
    for sub in board[:4]:
        assert sub["rows"][0]["metric"] == "coverage"
        assert [c["value"] for c in sub["rows"][0]["cells"]] == [s.unified["subsets"][sub["subset"]]["coverage"]
                                                                  for s in systems]
        for row in sub["rows"][1:]:
            for s, cell in zip(systems, row["cells"]):
                rec = s.unified["subsets"][sub["subset"]]["metrics"][row["metric"]]
                assert (cell["value"], cell["interval"]) == (rec["value"], rec["interval"])
            base, other = row["cells"]
            assert "decision" not in base  # the baseline has no mark against itself
            m = pair["subsets"][sub["subset"]]["metrics"][row["metric"]]
            assert (other["decision"]["mark"] == "*") == m["marker"]  # compare's decision, not the interval's
            seen_mark |= bool(other["decision"]["mark"])
            if other["decision"]["side"]:  # better or worse: the sign of b - a read by the metric's direction
                d = m["difference"]
                up = d["value_flag"] == "+inf" or (d["value"] is not None and d["value"] > 0)
                assert (other["decision"]["side"] == "better") == (up == (row["better"] == "higher"))
            keys = [_rank(c["value"], row["better"]) for c in row["cells"]]
            if row["better"] == "context":
                assert row["best"] == []
            elif row["best"]:
                assert all(keys[i] >= k for i in row["best"] for k in keys if not math.isnan(k))
    assert seen_mark  # the fixture's two systems differ somewhere


def test_not_reached_ranks_last_for_a_latency():
    assert lb._key(NOT_REACHED, "lower") < lb._key(9.0, "lower")
    assert lb._key(0.2, "lower") > lb._key(0.3, "lower") and lb._key(0.3, "higher") > lb._key(0.2, "higher")


INTERRUPTION = {"sample_id": "synthetic_user_interruption/3", "subset": "synthetic_user_interruption",
                "task": "user_interruption", "eligible": True, "T_s": 14.0, "S_s": 10.531, "R_s": 12.0,
                "segments": [[1.0, 10.432], [10.592, 11.0]], "outcome": "not_exercised", "latency_s": None}


def test_rule_texts_say_why_each_outcome_was_decided():
    assert drilldown.rule(INTERRUPTION, []) == ("not_exercised", "not exercised: no speech segment covers S = 10.531 s; "
                                           "nearest segments end 10.432 and start 10.592")
    spoke = {**INTERRUPTION, "segments": [[10.0, 12.5]], "outcome": "speaking_at_end"}
    assert drilldown.rule(spoke, [])[1] == ("speaking at end: speech at S = 10.531 s (segment 10.000-12.500 s covers it), "
                                       "and segment 10.000-12.500 s is still going at R = 12.000 s")
    answered = {**INTERRUPTION, "segments": [[10.0, 11.5]], "outcome": "response", "latency_s": 0.7}
    text = drilldown.rule(answered, [[11.0, 11.2, "no"], [12.7, 13.0, "yes"]])[1]
    assert "first word from R on starts at 12.700 s, latency 0.700 s" in text
    silent = {**INTERRUPTION, "segments": [], "outcome": "not_exercised"}
    assert drilldown.rule(silent, [])[1].endswith("no speech segment at all")
    turn = {"task": "turn_taking", "eligible": True, "E_s": 5.0, "T_s": 9.0, "outcome": "early_start"}
    assert drilldown.rule(turn, [[4.2, 4.5, "uh"], [6.0, 6.2, "ok"]])[1] == \
        "early start: a word starts at 4.200 s, before the turn end E = 5.000 s"
    pause = {"task": "pause_handling", "eligible": True, "first_pause_s": 3.0, "pause_intrusion": True,
             "intrusion_words": 2, "intruded_pauses": 1, "pauses": 3}
    assert drilldown.rule(pause, [])[0] == "intrusion"
    assert drilldown.rule({"eligible": False, "reasons": ["output.wav is silent"]}, []) == \
        ("ineligible", "ineligible: output.wav is silent")


def test_peaks_are_the_largest_amplitude_per_bin(tmp_path):
    t = np.arange(16000) / 16000
    audio = np.where(t < 0.5, 0.6, 0.3) * np.sin(2 * np.pi * 200 * t)  # samples land on the sine's peaks
    (tmp_path / "a.wav").write_bytes(wav_bytes(np.round(audio * 32767).astype(np.int16)))
    # 0.6 and 0.3 of full scale, to 1/32768: 59.4 and 29.7 of 99, far from a rounding boundary
    assert drilldown.peaks(tmp_path / "a.wav", bins=4) == [59, 59, 30, 30]


def _decoded_peaks(data: bytes, bins: int) -> list[int]:
    """The waveform peaks as fdbu first computed them (every file decoded to floats by soundfile): the reference the
    integer path of 16-bit PCM must equal."""
    import soundfile as sf

    x, _ = sf.read(io.BytesIO(data), dtype="float32", always_2d=True)
    x = np.abs(x).max(axis=1)
    if len(x) == 0:
        return []
    top = np.maximum.reduceat(x, np.minimum(np.linspace(0, len(x), bins + 1).astype(np.int64)[:-1], len(x) - 1))
    return [int(v) for v in np.minimum(99, np.round(top * 99))]


@pytest.mark.parametrize("subtype", ["PCM_16", "FLOAT", "PCM_24"])
def test_peaks_equal_the_decoded_floats_for_every_length_channel_count_and_format(subtype):
    """16-bit PCM is binned as integers (issue 58, item 3), other formats decoded by soundfile; both give what
    decoding every file to floats gave, on random audio with full-scale negatives, mono and stereo, files shorter
    than the bins, one frame and none."""
    import soundfile as sf

    rng = np.random.default_rng(58)
    for n in (0, 1, 3, 399, 400, 401, 1000, 16001):
        for channels in (1, 2):
            x = rng.integers(-32768, 32768, (n, channels)).astype(np.int16)
            if n:
                x[rng.integers(0, n), 0] = -32768  # |x| = 32768: 99 of 99, and no int16 overflow
            b = io.BytesIO()
            sf.write(b, x if subtype == "PCM_16" else x / 32768, 16000, subtype=subtype, format="WAV")
            assert (pcm16_frames(b.getvalue()) is not None) == (subtype == "PCM_16")  # which path it took
            for bins in (4, 400):
                assert drilldown.peaks(b.getvalue(), bins=bins) == _decoded_peaks(b.getvalue(), bins), (n, channels)


def test_exports_hold_the_leaderboard(systems, result):
    board = lb.leaderboard(systems, result)
    names = ["mixed", "prompt"]
    md = tables.to_markdown(board, names)
    tex = tables.to_latex(board, names)
    every = list(csv.DictReader(io.StringIO(tables.to_csv(board, names))))
    rows = [r for r in every if r["kind"] not in ("official", "rank")]
    n_rows = sum(len(b["rows"]) for b in board)
    assert len(rows) == 2 * n_rows
    # each subset's official rules (none here: no summary.json, said in `note`) and the summary's mean ranks
    official = [r for r in every if r["kind"] == "official"]
    assert [(r["subset"], r["system"]) for r in official] == [(b["subset"], n) for b in board for n in names]
    assert all(r["value"] == "" and r["note"].startswith("no summary.json") for r in official)
    top = lb.summary(board, names)
    ranks = [r for r in every if r["kind"] == "rank"]
    assert [(r["system"], float(r["value"]), int(r["place"])) for r in ranks] == \
        [(r["system"], r["mean_rank"], r["place"]) for r in top["rows"]]
    for b in board:
        for row in b["rows"]:
            for k, cell in enumerate(row["cells"]):
                got = next(r for r in rows if (r["subset"], r["metric"], r["system"]) ==
                           (b["subset"], row["metric"], names[k]))
                value = cell["value"]
                assert got["value"] == ("" if value in (None, "not reached") else str(value))
                assert got["value_not_reached"] == str(value == "not reached")
                assert (got["best"] == "True") == (k in row["best"])
                text = cell["text"]
                assert (f"**{md_text(text)}" in md) or (k not in row["best"])
    # booktabs: one table and tabular per subset (a value's interval under it in a nested one), every rule once; a
    # row's only bare & are its column separators, and no bare underscore or percent sign is left (they are escaped)
    blocks = tex.count(r"\begin{tabular}{@{}rp{")  # the summary's tabulars, the headline metrics in blocks
    assert blocks == 2  # 10 headline metrics, up to 7 a page-wide block, whole subsets: 1 + 1 + 3, then 5
    assert tex.count(r"\begin{tabular}{@{}p{") == len(board)
    assert tex.count(r"\bottomrule") == tex.count(r"\toprule") == len(board) + blocks
    assert tex.count(r"\begin{table}") == len(board) and tex.count(r"\begin{table*}") == 1  # the summary
    assert tex.count(r"\caption{") == len(board) + 1
    body = tex[tex.index(r"\end{table*}"):]
    lines = [line for line in body.splitlines() if line.endswith(r"\\")]
    assert len(lines) == sum(len(b["rows"]) + 2 for b in board)  # the head, the rows, the official rules
    assert all(len(re.findall(r"(?<!\\)&", line)) == len(names) for line in lines)
    assert not any(re.search(r"(?<!\\)[_%#]", line) for line in lines)
    assert r"\textbf{" in tex and "$^{*" in tex
    header = [line for line in md.splitlines() if line.startswith("| metric")]
    assert header and all(line == "| metric | better | mixed | prompt |" for line in header)


@pytest.mark.slow
def test_the_command_writes_the_site_and_refuses_bad_input(trees, tmp_path):
    a, b = trees
    out = tmp_path / "site"
    res = fdbu_main("report", f"trees=[{a},{b}]", "names=[mixed,prompt]", f"out={out}")
    assert res.returncode == 0, res.stderr
    assert f"open {(out / 'index.html').resolve()}" in res.stdout
    made = sorted(p.name for p in out.iterdir())
    assert made == sorted(["report.json", "compare.json", "index.html", "samples-0-0.js", "samples-1-0.js",
                           "leaderboard.md", "leaderboard.tex", "leaderboard.csv",
                           *site.figure_names(2, True)])
    page = (out / "index.html").read_text()
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)  # nothing from the network
    assert "<script src" not in page
    data = json.loads(re.search(r"window\.FDBU = (.*?);\n", page).group(1))
    assert data["systems"] == ["mixed", "prompt"]
    assert [sig["transcripts"] for sig in data["signatures"]] == [  # the transcripts' provenance in the signature
        json.loads((t / "unified.json").read_text())["transcripts"] for t in (a, b)]
    assert all(sig["transcripts"]["source"] for sig in data["signatures"])
    assert len(data["index"][0]) == sum(len(r) for r in load(a, "x").rows.values())  # every sample, ineligible too
    samples = (out / "samples-0-0.js").read_text()
    details = json.loads(samples[samples.index("] = ") + 4:].rstrip().rstrip(";"))
    for d in details:
        if "output" in d:  # the audio link resolves from the site
            assert (out / d["output"]["src"]).resolve().is_file()
    cmp = json.loads((out / "compare.json").read_text())
    assert cmp["kind"] == "compare"
    # given compare.json of these trees, it is used; of other trees, refused in one line, nothing written
    again = tmp_path / "again"
    assert fdbu_main("report", f"trees=[{a},{b}]", "names=[mixed,prompt]", f"out={again}",
                     f"report.compare={out}", "report.format=md").returncode == 0
    assert sorted(p.name for p in again.iterdir()) == ["leaderboard.md", "report.json"]
    assert (again / "leaderboard.md").read_bytes() == (out / "leaderboard.md").read_bytes()
    wrong = fdbu_main("report", f"trees=[{b},{a}]", "names=[mixed,prompt]", f"out={tmp_path / 'no'}",
                      f"report.compare={out}")
    assert wrong.returncode == 2 and wrong.stderr.startswith("fdbu: error:") and "compare.json" in wrong.stderr
    assert len(wrong.stderr.strip().splitlines()) == 1 and not (tmp_path / "no").exists()
    bad = fdbu_main("report", f"trees=[{a}]", f"out={tmp_path / 'no'}", "report.format=pdf")
    assert bad.returncode == 2 and "report.format" in bad.stderr and not (tmp_path / "no").exists()


def test_same_inputs_same_bytes(systems, result, tmp_path):
    one = site.build(systems, result, tmp_path / "x", formats=("html", "csv"), plot=False)
    two = site.build(systems, result, tmp_path / "x", formats=("html", "csv"), plot=False)
    assert one == two and "index.html" in one


def test_a_transcript_changed_after_scoring_is_refused_in_one_line(trees, tmp_path):
    import shutil

    tree = shutil.copytree(trees[0], tmp_path / "mixed")
    sid = next(json.loads(line)["sample_id"] for line in (tree / "unified-samples.jsonl").read_text().splitlines()
               if json.loads(line)["eligible"])
    (tree / sid / "output.json").write_text(json.dumps({"text": "x", "chunks": [{"text": "x"}]}))
    res = fdbu_main("report", f"trees=[{tree}]", f"out={tmp_path / 'site'}")
    assert res.returncode == 2 and res.stderr.count("\n") == 1
    assert sid in res.stderr and "output.json" in res.stderr and not (tmp_path / "site").exists()


def test_the_latex_compiles_in_a_bare_article_and_prints_its_relations(systems, result, tmp_path):
    """leaderboard.tex in a document with only booktabs, as the docs say: it compiles, and `<=` is the relation
    (a bare `<` prints as an inverted exclamation mark in LaTeX's default font encoding); a name with LaTeX's
    specials and angle brackets stays text. (Widths and captions: issue 35.)"""
    import shutil
    import subprocess

    if shutil.which("pdflatex") is None:
        pytest.skip("pdflatex is not installed (Debian: texlive-latex-recommended)")
    board = lb.leaderboard(systems, result)
    tex = tables.to_latex(board, ["mixed", "<b>_&%#"])
    assert "<" not in tex.replace(r"\textless{}", "") and r"$\le$ 1 s" in tex
    (tmp_path / "doc.tex").write_text("\\documentclass{article}\n\\usepackage{booktabs}\n\\begin{document}\n"
                                      + tex + "\n\\end{document}\n")
    out = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "doc.tex"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout[-2000:]
    assert "! " not in (tmp_path / "doc.log").read_text()


def _cellv(v):
    return {"value": v, "interval": None, "text": str(v)}


def test_the_summary_ranks_systems_by_mean_rank_over_the_headline_metrics():
    """By hand: three systems, a share (lower better) with a tie, a latency (lower better) with one median not
    reached and one system without a value, and a context metric and a non-headline one that do not count."""
    rows = [{"metric": "a_rate", "label": "a", "better": "lower", "kind": "share", "headline": True,
             "cells": [_cellv(0.2), _cellv(0.2), _cellv(0.5)], "best": [0, 1]},
            {"metric": "lat_s", "label": "lat", "better": "lower", "kind": "latency", "headline": True,
             "cells": [_cellv(NOT_REACHED), _cellv(None), _cellv(0.4)], "best": [2]},
            {"metric": "ctx", "label": "ctx", "better": "context", "kind": "share", "headline": False,
             "cells": [_cellv(0.9), _cellv(0.1), _cellv(0.5)], "best": []},
            {"metric": "other_rate", "label": "o", "better": "higher", "kind": "share", "headline": False,
             "cells": [_cellv(0.0), _cellv(1.0), _cellv(0.5)], "best": [1]}]
    board = [{"subset": "s", "label": "s", "rows": rows, "baseline": "x"},
             {"subset": "v", "view": "fdbench", "label": "v", "baseline": "x", "rows": [  # a view's: not summarised
                 {**rows[0], "cells": [_cellv(0.9), _cellv(0.9), _cellv(0.0)]}]}]
    top = lb.summary(board, ["x", "y", "z"])
    assert [c["metric"] for c in top["columns"]] == ["a_rate", "lat_s"]
    # a_rate: x and y tie for places 1-2 (1.5 each), z 3; lat_s: z 1, x (not reached) 2, y (none) 3
    assert [(r["system"], r["ranks"], r["mean_rank"]) for r in top["rows"]] == [
        ("x", [1.5, 2.0], 1.75), ("z", [3.0, 1.0], 2.0), ("y", [1.5, 3.0], 2.25)]
    assert [r["place"] for r in top["rows"]] == [1, 2, 3]
    assert [r["best"] for r in top["rows"]] == [[True, False], [False, True], [True, False]]
    tied = lb.summary([{**board[0], "rows": rows[:1]}], ["x", "y", "z"])
    assert [(r["system"], r["place"]) for r in tied["rows"]] == [("x", 1), ("y", 1), ("z", 3)]  # equal: one place


def test_the_official_numbers_stand_beside_the_unified_ones(trees, tmp_path):
    """fdbu evaluate's summary.json on one tree: its numbers in the board, md, tex and csv for that system, a
    'no summary.json' for the other; a summary.json of other inputs is said to be stale, not shown."""
    import shutil

    from fdbu.official import evaluate, summary as shown

    a = shutil.copytree(trees[0], tmp_path / "mixed")
    evaluate.write(evaluate.evaluate(a), a)
    summary = json.loads((a / "summary.json").read_text())
    systems = [load(a, "mixed"), load(trees[1], "prompt")]
    board = lb.leaderboard(systems, None)
    names = ["mixed", "prompt"]
    for sub in board:
        mine, other = sub["reference"]
        numbers = summary["subsets"][sub["subset"]]
        if sub["subset"] == "icc_backchannel":  # no ground-truth distribution given: pending, said as such
            assert mine["numbers"] == [["state", "pending: " + numbers["pending"]]]
        else:
            assert [k for k, _ in mine["numbers"]] == [k for k in shown.NUMBERS if k in numbers]
            for key, value in mine["numbers"]:
                assert value == (numbers[key] if isinstance(numbers[key], float) else shown.number_text(numbers[key]))
        assert other["note"] == "no summary.json (fdbu evaluate has not run on this tree)"
    md = tables.to_markdown(board, names)
    turn = next(s for s in board if s["subset"] == "candor_turn_taking")
    assert f"| official rules (summary.json) | reference | {md_text(turn['reference'][0]['text'])} |" in md
    assert turn["reference"][0]["text"] == (f"take_turn_rate {summary['subsets']['candor_turn_taking']['take_turn_rate']:.3f}, "
                                            f"latency_s {summary['subsets']['candor_turn_taking']['latency_s']:.3f}")
    rows = list(csv.DictReader(io.StringIO(tables.to_csv(board, names))))
    got = {r["metric"]: float(r["value"]) for r in rows if r["subset"] == "candor_turn_taking"
           and r["kind"] == "official" and r["system"] == "mixed"}
    assert got == {"official take_turn_rate": summary["subsets"]["candor_turn_taking"]["take_turn_rate"],
                   "official latency_s": summary["subsets"]["candor_turn_taking"]["latency_s"]}
    tex = tables.to_latex(board, names)
    tt = summary["subsets"]["candor_turn_taking"]
    assert (r"\begin{tabular}[t]{@{}r@{}}{\scriptsize " + f"{tt['take_turn_rate']:.3f}" + r"}\\ {\scriptsize "
            + f"{tt['latency_s']:.3f}" + r"}\end{tabular} & --") in tex  # the caption names them: top to bottom
    assert "top to bottom: take\\_turn\\_rate, latency\\_s" in tex
    # a number that is none of a number, a mean and std, or a state: unreadable, nothing of it shown
    good = json.loads(json.dumps(summary))
    summary["subsets"]["candor_turn_taking"]["latency_s"] = {"mean": 0.5}
    (a / "summary.json").write_text(json.dumps(summary))
    odd = lb.leaderboard([load(a, "mixed")], None)
    assert {r["note"] for sub in odd for r in sub["reference"]} == {
        f"{a / 'summary.json'} is not a summary.json fdbu can read"}
    summary = good
    # stale: computed from another asr.json
    summary["inputs"]["asr.json"] = "0" * 64
    (a / "summary.json").write_text(json.dumps(summary))
    stale = lb.leaderboard([load(a, "mixed")], None)
    assert {r["note"] for sub in stale for r in sub["reference"]} == {
        "summary.json was computed from a different asr.json (run fdbu evaluate again)"}
    (a / "summary.json").write_text("{not json")
    broken = lb.leaderboard([load(a, "mixed")], None)
    assert {r["note"] for sub in broken for r in sub["reference"]} == {
        f"{a / 'summary.json'} is not a summary.json fdbu can read"}
