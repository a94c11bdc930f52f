"""What leaves `fdbu report` for a paper, tested as a reader meets it: leaderboard.md rendered by a CommonMark
renderer with tables (markdown-it-py, GitHub's rules), leaderboard.tex compiled by LaTeX in a two-column and a
one-column article with no overfull box, leaderboard.csv loaded by pandas with numeric columns."""
import copy
import csv
import html.parser
import io
import shutil
import subprocess

import pytest

from builders import fdbu_main
from fdbu.reporting import board as lb, tables as tb
from fdbu.common.cells import num
from fdbu.comparison.pairwise import compare
from fdbu.comparison.systems import load
from report_trees import scored_pair

TRICKY = "a|b*c_d"  # a system name that once broke every Markdown table


@pytest.fixture(scope="module")
def board(vad, boot, tmp_path_factory):
    """The leaderboard of two scored systems (the second named with Markdown's specials), as `fdbu report`
    makes it, and the folder its files were written to."""
    root = tmp_path_factory.mktemp("paper")
    a, b = scored_pair(root, vad, boot, n=20)  # enough pairs for some of compare's marks
    systems = [load(a, "mixed"), load(b, TRICKY)]
    out = root / "report"
    done = fdbu_main("report", f"trees=[{a},{b}]", f"names=[mixed,'{TRICKY}']", f"out={out}",
                     "report.format=[md,tex,csv]")
    assert done.returncode == 0, done.stderr
    return lb.leaderboard(systems, compare(systems)), ["mixed", TRICKY], out


class _Cells(html.parser.HTMLParser):
    """Each table's rows of (cell text, bold) from rendered HTML."""

    def __init__(self):
        super().__init__()
        self.tables, self._cell, self._bold = [], None, False

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell, self._bold = "", False
        elif tag == "strong" and self._cell is not None:
            self._bold = True

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self.tables[-1][-1].append((self._cell, self._bold))
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data


def test_the_markdown_renders_every_cell_as_written(board):
    from markdown_it import MarkdownIt

    rows, names, out = board
    text = (out / "leaderboard.md").read_text()
    assert text == tb.to_markdown(rows, names)
    parsed = _Cells()
    parsed.feed(MarkdownIt("commonmark").enable("table").render(text))
    assert len(parsed.tables) == len(rows) + 1  # the summary first
    top = lb.summary(rows, names)
    summary, *tables = parsed.tables
    assert summary[0] == [("place", False), ("system", False), ("mean rank", False)] + [
        (f"{c['subset']}: {c['label']} ({c['better']})", False) for c in top["columns"]]
    marks = 0
    for got, r in zip(summary[1:], top["rows"]):
        want = [(str(r["place"]), False), (r["system"], False), (f"{r['mean_rank']:.2f}", False)]
        for c, best in zip(r["cells"], r["best"]):
            mark = lb._mark(c)
            marks += bool(mark)
            want.append((num(c["value"]) + (f" {mark}" if mark else ""), best))
        assert got == want
    assert len(summary) == 1 + len(names) and marks > 0
    marks = 0
    for table, sub in zip(tables, rows):
        assert table[0] == [("metric", False), ("better", False), ("mixed", False), (TRICKY, False)]
        assert len(table) == 1 + len(sub["rows"]) + 1
        for got, row in zip(table[1:], sub["rows"]):
            want = [(row["label"], False), (row["better"], False)]
            for i, c in enumerate(row["cells"]):
                mark = lb._mark(c)
                marks += bool(mark)
                want.append((c["text"] + (f" {mark}" if mark else ""), i in row["best"]))
            assert got == want
        assert table[-1] == [("official rules (summary.json)", False), ("reference", False)] + [
            (r["text"], False) for r in sub["reference"]]  # the last row: the official rules' numbers, or why none
    assert marks > 0  # a mark was rendered as written, inside a bold cell or not


def _compile(tex_body: str, folder, options: str) -> str:
    """The pdflatex log of an article with only booktabs, the tables \\input."""
    (folder / "leaderboard.tex").write_text(tex_body)
    (folder / "paper.tex").write_text(f"\\documentclass[{options}]{{article}}\n\\usepackage{{booktabs}}\n"
                                      "\\begin{document}\n\\input{leaderboard}\n\\end{document}\n")
    done = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "paper.tex"], cwd=folder,
                          capture_output=True, text=True, timeout=300)
    log = (folder / "paper.log").read_text(errors="replace")
    assert done.returncode == 0, log[-2000:]
    return log


def _more_systems(rows: list[dict], k: int) -> list[dict]:
    """The board with k systems: the two real ones' cells repeated under new names."""
    out = copy.deepcopy(rows)
    for sub in out:
        for row in sub["rows"]:
            row["cells"] = [row["cells"][i % 2] for i in range(k)]
            row["best"] = [i for i in range(k) if i % 2 in row["best"]]
        sub["reference"] = [sub["reference"][i % 2] for i in range(k)]
    return out


@pytest.mark.skipif(shutil.which("pdflatex") is None,
                    reason="pdflatex is not installed (Debian's texlive-latex-recommended; make system-tools)")
@pytest.mark.parametrize("systems,options", [(2, "twocolumn"), (3, "twocolumn"), (5, "twocolumn"), (2, ""),
                                             (5, "")])
def test_the_latex_compiles_with_no_overfull_box(board, tmp_path, systems, options):
    rows, names, out = board
    if systems == 2:
        body = (out / "leaderboard.tex").read_text()
        assert body == tb.to_latex(rows, names)
    else:
        body = tb.to_latex(_more_systems(rows, systems), [f"system {k}" for k in range(systems)])
    assert body.count("\\caption{") == len(rows) + 1 and body.count("\\label{tab:fdbu-") == len(rows) + 1
    assert ("\\begin{table}" in body) == (systems <= tb.COLUMN_SYSTEMS)  # the summary of 10 metrics: table*
    log = _compile(body, tmp_path, options)
    assert "Overfull \\hbox" not in log, [line for line in log.splitlines() if "Overfull" in line]
    assert "Float too large" not in log  # every table fits the page, too


def test_the_csv_loads_with_numeric_columns(board):
    import pandas as pd

    rows, names, out = board
    frame = pd.read_csv(out / "leaderboard.csv")
    for col in ("value", "lo", "hi", "count", "paired_n", "diff", "diff_lo", "diff_hi", "p", "p_holm"):
        assert frame[col].dtype.kind == "f", (col, frame[col].dtype)
    for col in ("value_not_reached", "lo_not_reached", "hi_not_reached", "best", "diff_undefined", "significant"):
        assert frame[col].dtype == bool, col  # (diff_undefined and significant loaded as object: issue 54)
    assert frame["diff"].abs().max() > 0 or frame["diff"].isna().all()
    assert set(frame["system"]) == set(names) and set(frame["baseline"]) == {"mixed"}
    # one row per subset, metric and system; every value of the board, a not reached one as its flag
    cells = [(sub["subset"], row["metric"], name, c) for sub in rows for row in sub["rows"]
             for name, c in zip(names, row["cells"])]
    extra = frame["kind"].isin(["official", "rank"])  # the official rules' rows and the summary's mean ranks
    assert frame["headline"].dtype == bool and frame["place"].dtype.kind == "f"
    assert sorted(frame[frame["kind"] == "rank"]["place"]) == [1.0, 2.0] or frame[frame["kind"] == "rank"][
        "place"].tolist() == [1.0, 1.0]
    frame = frame[~extra]
    assert len(frame) == len(cells)
    texts = [t for t in csv.DictReader(io.StringIO((out / "leaderboard.csv").read_text()))
             if t["kind"] not in ("official", "rank")]
    for (subset, metric, name, c), (_, r), text in zip(cells, frame.iterrows(), texts):
        assert (r["subset"], r["metric"], r["system"]) == (subset, metric, name)
        if c["value"] == "not reached":
            assert r["value_not_reached"] and pd.isna(r["value"])
        elif c["value"] is not None:  # the float itself (repr's digits read back exactly, on any machine)
            assert float(text["value"]) == c["value"] and not r["value_not_reached"]
    paired = frame[frame["system"] == TRICKY]
    assert paired["paired_n"].notna().any() and paired["p"].notna().any()
    # each mark with the level it was decided at and what holds it (issue 75): where a pair is, and only there
    decided = rows[0]["decided"]
    assert frame["alpha"].dtype.kind == "f" and set(paired["alpha"].dropna()) == {decided["alpha"]}
    assert set(paired["holm_family"].dropna()) == {decided["holm_family"]} and decided["holm_family"] == "subset"
    assert paired["paired_n"].notna().eq(paired["alpha"].notna()).all()
    assert frame[frame["system"] == "mixed"]["alpha"].isna().all() and frame[frame["significant"]]["alpha"].notna().all()
    assert frame[frame["system"] == "mixed"]["paired_n"].isna().all()  # the baseline is not paired with itself


@pytest.mark.skipif(shutil.which("pdflatex") is None,
                    reason="pdflatex is not installed (Debian's texlive-latex-recommended; make system-tools)")
@pytest.mark.parametrize("systems", [2, 5])
def test_a_summary_of_few_metrics_fits_one_column(board, tmp_path, systems):
    """Trees of CANDOR's pause and turn-taking subsets only: 4 headline metrics, a summary one column wide."""
    rows, names, out = board
    some = [sub for sub in _more_systems(rows, systems) if sub["subset"] in (
        "candor_pause_handling", "candor_turn_taking")]
    body = tb.to_latex(some, [f"system {k}" for k in range(systems)])
    summary = body[:body.index("\\end{table", body.index("tab:fdbu-summary"))]
    assert "\\begin{table}[t]" in summary and "\\begin{table*}" not in summary
    log = _compile(body, tmp_path, "twocolumn")
    assert "Overfull \\hbox" not in log, [line for line in log.splitlines() if "Overfull" in line]


LONG = ["freeze_omni_large_v2", "FreezeOmniLargeVersionTwoPlus", "moshi", "a_b", "sys"]
OFFICIAL = {  # what fdbu evaluate writes, at its widest: a judge's model in a label, means and stds, v1.5's counts
    "default": [("take_turn_rate", 0.526), ("latency_s", 1.515), ("rating (gpt-4o-mini-2024-07-18)", 3.25)],
    "icc_backchannel": [("jsd", {"mean": 0.1234, "std": 0.2345}), ("take_turn_rate", {"mean": 0.5, "std": 0.5}),
                        ("frequency_per_s", {"mean": 0.123, "std": "nan"})],
    "v15": [("samples with a stop interval", 150), ("samples with a response interval", 120),
            ("behaviour C_TAKEOVER", 0.25), ("behaviour", "pending: no judge configured")],
}


@pytest.mark.skipif(shutil.which("pdflatex") is None,
                    reason="pdflatex is not installed (Debian's texlive-latex-recommended; make system-tools)")
@pytest.mark.parametrize("systems,options", [(2, "twocolumn"), (3, "twocolumn"), (5, "twocolumn")])
def test_long_names_and_every_official_number_fit(board, tmp_path, systems, options):
    """System names TeX cannot hyphenate, and the official rules' widest cells (a judge's model, means and
    stds, v1.5's counts and a pending state): compiled with no overfull box; the caption names the cells' order."""
    rows, _, _ = board
    some = _more_systems(rows, systems)
    for sub in some:
        numbers = OFFICIAL["icc_backchannel" if sub["subset"] == "icc_backchannel" else "default"]
        if sub["subset"] == "candor_turn_taking":
            numbers = OFFICIAL["v15"]  # (the widest labels, on a subset that has metric rows too)
        sub["reference"] = [lb._reference_cell(({sub["subset"]: numbers}, ""), sub["subset"])] * systems
    body = tb.to_latex(some, LONG[:systems])
    assert "top to bottom: take\\_turn\\_rate, latency\\_s, rating (gpt-4o-mini-2024-07-18)" in body
    assert "behaviour: pending: no judge configured" in body
    log = _compile(body, tmp_path, options)
    assert "Overfull \\hbox" not in log, [line for line in log.splitlines() if "Overfull" in line]


@pytest.mark.skipif(shutil.which("pdflatex") is None,
                    reason="pdflatex is not installed (Debian's texlive-latex-recommended; make system-tools)")
def test_any_printable_name_compiles_as_written(board, tmp_path):
    """Issue 54, item 6: a `|` in a name printed an em dash (OT1), a name beyond what pdflatex sets stopped the
    compile. Every printable ASCII character is escaped to print itself, a Latin-1 letter OT1 has is kept, and any
    other character is its code point in brackets; the tables compile with no overfull box, and the summary has the
    mean-rank column the md, csv and site have."""
    import string

    rows, names, out = board
    weird = [string.punctuation + " a~b^c", "Þór «模型» café"]
    body = tb.to_latex(rows, weird)
    assert "|" not in body.replace(r"\textbar{}", "")  # no bare bar anywhere (booktabs needs none)
    assert r"[U+00DE]" in body and r"[U+6A21][U+578B]" in body and "caf\u00e9" in body
    assert "mean rank" in body
    log = _compile(body, tmp_path, "twocolumn")
    assert "Overfull \\hbox" not in log and "Missing character" not in log


def test_a_subset_name_breaks_at_its_underscores_first():
    """The summary's subset headers broke mid-word with no hyphen ("synthetic_pause_ha / ndling"): a break after an
    underscore adds nothing, one inside a word a hyphen (a discretionary)."""
    text = tb._breakable("synthetic_pause")
    assert text.startswith(r"s\-y\-n") and r"c\_\allowbreak{}p" in text and r"\allowbreak{}" not in text.replace(
        r"\_\allowbreak{}", "")
