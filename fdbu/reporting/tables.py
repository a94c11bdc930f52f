"""The leaderboard (fdbu.reporting.board) as the tables a paper or a spreadsheet takes: Markdown, LaTeX (booktabs; a
subset's table fits a column up to COLUMN_SYSTEMS systems) and CSV (numbers as numbers, not-reached flags), every
text made inert where it leaves fdbu (fdbu.common.cells)."""
from __future__ import annotations

import csv
import io
import re
import unicodedata
from typing import Any

from .board import REFERENCE, _mark, summary
from ..metrics.paired import UNDEFINED, signed
from ..common.cells import csv_text, md_text, num, split_reached


def to_markdown(board: list[dict], names: list[str]) -> str:
    """The summary (systems x headline metrics, ranked), then one GitHub-flavoured table per subset with the
    official rules' numbers as its last row. Every text is escaped (names, labels, the intervals' brackets, the
    mark's `*`), so a renderer shows each cell as written; the best cells are bold around escaped text
    (tests/test_paper_tables.py renders it with markdown-it-py, CommonMark with tables)."""
    def cell(c: dict, best: bool, text: str) -> str:
        text = md_text(text + (f" {_mark(c)}" if _mark(c) else ""))
        return f"**{text}**" if best else text

    top = summary(board, names)
    lines = []
    if top["columns"]:
        lines += ["### Summary: headline metrics", "",
                  "| place | system | mean rank | " + " | ".join(
                      md_text(f"{c['subset']}: {c['label']} ({c['better']})") for c in top["columns"]) + " |",
                  "|---:|---|---:|" + "---:|" * len(top["columns"])]
        for r in top["rows"]:
            lines.append(f"| {r['place']} | {md_text(r['system'])} | {r['mean_rank_text']} | " + " | ".join(
                cell(c, b, num(c["value"])) for c, b in zip(r["cells"], r["best"])) + " |")
        lines += ["", md_text(f"Systems {top['rule']}." + (f" Marks: {top['family']}." if top["family"] else "")),
                  ""]
    for sub in board:
        lines += [f"### {md_text(sub['subset'])} ({md_text(sub['label'])})", "",
                  *([f"Source: {md_text(sub['source'])}.", ""] if "source" in sub else []),
                  *([md_text(sub["note"]) + ".", ""] if "note" in sub else []),
                  "| metric | better | " + " | ".join(map(md_text, names)) + " |",
                  "|---|---|" + "---:|" * len(names)]
        for row in sub["rows"]:
            lines.append(f"| {md_text(row['label'])} | {row['better']} | " + " | ".join(
                cell(c, i in row["best"], c["text"]) for i, c in enumerate(row["cells"])) + " |")
        if "reference" in sub:
            lines.append(f"| {md_text(REFERENCE)} | reference | " + " | ".join(
                md_text(r["text"]) for r in sub["reference"]) + " |")
        lines.append("")
    lines.append(md_text(_legend(board)))
    return "\n".join(lines) + "\n"


def _legend(board: list[dict]) -> str:
    base = board[0]["baseline"] if board else ""
    family = f"; {board[0]['family']}" if board and board[0]["family"] else ""
    return (f"Values with 95% intervals from each system's unified.json; bold: best of the row by the metric's "
            f"direction; * fdbu compare marks the paired difference against {base} (its Holm-adjusted p is below "
            f"alpha{family}), + better, - worse; the mark is on the paired samples (those both systems have in the "
            "metric's population), the values on each system's own; n/r: not reached; official rules: the Full-Duplex-Bench scripts' numbers "
            "from each tree's summary.json (fdbu evaluate), for reference.")


TEX_ESCAPE = {"&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}",
              "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "\\": r"\textbackslash{}", "\n": " ", "\r": " ",
              "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}"}  # OT1 prints a bare | as an em dash


RELATIONS = {"<=": r"$\le$", ">=": r"$\ge$"}


def tex(text: str) -> str:
    """Text as LaTeX prints it literally: `<=`/`>=` as the relations (OT1, the default encoding, prints a bare `<`
    as an inverted exclamation mark), any other `<`, `>` as their text symbols, the specials escaped, a control
    character a space (names holding one are refused before: fdbu.config.base.printable_names)."""
    return "".join(RELATIONS.get(part) or "".join(_tex_char(ch) for ch in part) for part in re.split("(<=|>=)", str(text)))


NO_OT1 = set("\u00ab\u00bb\u00d0\u00de\u00f0\u00fe")  # Latin-1 letters pdflatex's default OT1 encoding cannot set


def _tex_char(ch: str) -> str:
    """One character as pdflatex's defaults (OT1, UTF-8 input) print it: a special escaped, a control character a
    space, and one they cannot set at all (beyond Latin-1, or a Latin-1 letter OT1 lacks) as its code point in
    brackets, `[U+6A21]`, so a table with any name compiles and says which character it was."""
    if ch in TEX_ESCAPE:
        return TEX_ESCAPE[ch]
    if unicodedata.category(ch) == "Cc":
        return " "
    if ord(ch) > 0xFF or ch in NO_OT1:
        return f"[U+{ord(ch):04X}]"
    return ch


COLUMN_SYSTEMS = 3  # up to this many systems a subset's table fits one column of a two-column paper; more: table*
LABEL_WIDTH = {1: "0.55", 2: "0.45", 3: "0.3"}  # the metric column's share of the line, by systems (else 0.2)


def _tex_value(c: dict, best: bool) -> str:
    """A cell's value with its mark raised, bold when best."""
    value = tex(num(c["value"])) + (f"$^{{{_mark(c)}}}$" if _mark(c) else "")
    return r"\textbf{" + value + "}" if best else value


def _tex_cell(c: dict, best: bool) -> str:
    """A value over its interval (a nested tabular: a column three systems wide), bold when best, the mark
    raised."""
    value = _tex_value(c, best)
    if c["interval"] is None:
        return value
    lo, hi = (tex(num(x)) for x in c["interval"])
    return r"\begin{tabular}[t]{@{}r@{}}" + value + r"\\ {\scriptsize[" + lo + ", " + hi + r"]}\end{tabular}"


def _official_labels(refs: list[dict]) -> list[str]:
    """The official numbers' labels of a subset, in order, over every system (the rows of its LaTeX cell)."""
    return list(dict.fromkeys(label for r in refs for label, _ in r["numbers"]))


def _tex_reference(r: dict, labels: list[str]) -> str:
    """A system's official numbers in a cell, one under the other in the order of `labels` (the caption names
    them: a label in a cell is wider than a column), `--` for one it lacks; a value the script does not give as
    its state's first word (the caption has the reason: `_tex_missing`)."""
    if not r["numbers"]:
        return "--"
    from ..official.summary import number_text

    values = dict((label, v) for label, v in r["numbers"])
    lines = [r"{\scriptsize " + tex(number_text(values[label]).split(":")[0]).replace(
        " ± ", r"}\\ {\scriptsize $\pm$ ") + "}" if label in values else "--" for label in labels]  # std under mean
    return r"\begin{tabular}[t]{@{}r@{}}" + r"\\ ".join(lines) + r"\end{tabular}"


def _tex_missing(names: list[str], refs: list[dict]) -> str:
    """The caption's account of the official numbers: the order of a cell's values, and what a table does not
    show in full (why a system has none, a state's reason)."""
    why = [f"{tex(n)}: {tex(r['note'])}" for n, r in zip(names, refs) if not r["numbers"]]
    why += [f"{tex(n)}, {tex(label)}: {tex(v)}" for n, r in zip(names, refs) for label, v in r["numbers"]
            if isinstance(v, str) and ":" in v]
    labels = _official_labels(refs)
    return (r" Official rules: the scripts' numbers from summary.json (fdbu evaluate)" +
            (f", top to bottom: {', '.join(tex(label) for label in labels)}" if labels else "") +
            (f"; {'; '.join(why)}." if why else "."))


def _breakable(text: str) -> str:
    """Text LaTeX may break in a narrow column, so a system or subset name never runs into the next: after an
    underscore or a hyphen with nothing added (`synthetic_` / `pause_handling`), and, where a word is still too wide,
    between any two of its letters with a hyphen (TeX would not hyphenate `freeze_omni` by itself)."""
    text, out = str(text), []
    for i, ch in enumerate(text):
        out.append(tex(ch))
        if i < len(text) - 1:
            out.append(r"\allowbreak{}" if ch in SEPARATORS else "" if text[i + 1] in SEPARATORS else r"\-")
    return "".join(out)


SEPARATORS = "_-/ "  # a name breaks after one of these with nothing added


def _width(share: float) -> str:
    """A share of the line less one column gap (the tabular's 2 x 3pt), as a LaTeX dimension (e-TeX's
    \\dimexpr, in every pdflatex)."""
    return rf"\dimexpr{share:.3f}\linewidth-6pt\relax"


METRICS_SHARE = 0.8  # of the line, the summary's metric columns' (the place and the system, its mean rank under it)
SUMMARY_COLUMNS = {"table": 4, "table*": 7}  # metric columns per block of the summary: fits a column, a page


def _tex_summary(top: dict, names: list[str], env: str) -> list[str]:
    """The summary as a float: systems as rows, headline metrics as columns in blocks of whole subsets (each block
    a tabular, one under the other, so any number of subsets fits the width)."""
    blocks: list[list[int]] = [[]]
    for sub in dict.fromkeys(c["subset"] for c in top["columns"]):  # whole subsets, packed in order
        group = [j for j, c in enumerate(top["columns"]) if c["subset"] == sub]
        if blocks[-1] and len(blocks[-1]) + len(group) > SUMMARY_COLUMNS[env]:
            blocks.append([])
        blocks[-1] += group
    out = [rf"\begin{{{env}}}[t]", r"\centering", r"\small" if env == "table" else r"\footnotesize",
           r"\setlength{\tabcolsep}{3pt}",
           rf"\caption{{Summary: headline metrics ($\downarrow$ lower, $\uparrow$ higher is better). Systems "
           rf"{tex(top['rule'])}; under each system its mean rank. Bold: best; $^*$: paired difference against "
           rf"{tex(top['baseline'])} with Holm-adjusted $p$ below $\alpha$ (+ better, - worse)"
           + (f"; {tex(top['family'])}" if top["family"] else "") + r"; n/r: not reached.}", r"\label{tab:fdbu-summary}"]
    for b, block in enumerate(blocks):
        width = _width(METRICS_SHARE / len(block))  # the r columns' headers this wide
        groups: list[tuple[str, int]] = []
        for j in block:
            sub = top["columns"][j]["subset"]
            groups[-1:] = [(sub, groups[-1][1] + 1)] if groups and groups[-1][0] == sub else groups[-1:] + [(sub, 1)]
        out += ([r"\par\medskip"] if b else []) + [
            r"\begin{tabular}{@{}rp{0.12\linewidth}" + "r" * len(block) + "@{}}",
            r"\toprule", " & & " + " & ".join(
                rf"\multicolumn{{{n}}}{{c}}{{\parbox[b]{{{_width(METRICS_SHARE * n / len(block))}}}{{\centering\scriptsize "
                + _breakable(sub) + "}}" for sub, n in groups) + r" \\"]
        at = 3
        rules = []
        for _, n in groups:
            rules.append(rf"\cmidrule(l){{{at}-{at + n - 1}}}")
            at += n
        arrow = {"lower": r"$\downarrow$", "higher": r"$\uparrow$"}
        out += ["".join(rules), r"\# & \raggedright system (mean rank) & " + " & ".join(
            r"\parbox[t]{" + width + r"}{\raggedleft " + tex(top["columns"][j]["label"]) + " "
            + arrow.get(top["columns"][j]["better"], "") + "}"
            for j in block) + r" \\", r"\midrule"]
        for r in top["rows"]:
            cells = [_tex_value(r["cells"][j], r["best"][j]) for j in block]
            out.append(f"{r['place']} & " + r"\raggedright " + _breakable(r["system"])  # its mean rank under it
                       + rf"\newline{{\scriptsize ({r['mean_rank_text']})}} & " + " & ".join(cells) + r" \\")
        out += [r"\bottomrule", r"\end{tabular}"]
    return out + [rf"\end{{{env}}}", ""]


def to_latex(board: list[dict], names: list[str]) -> str:
    """The summary, then one table float per subset, captioned and labelled (tab:fdbu-<subset>), with booktabs
    rules (needs \\usepackage{booktabs} only), the official rules' numbers as each subset's last row: a `table`
    that fits one column of a two-column paper for up to COLUMN_SYSTEMS systems, a page-wide `table*` for more (the
    summary: `table*` beyond SUMMARY_COLUMNS headline metrics, in blocks; tests/test_paper_tables.py compiles all
    with no overfull box)."""
    env = "table" if len(names) <= COLUMN_SYSTEMS else "table*"
    out = [f"% fdbu report: {tex(_legend(board))}"]  # escaped as the body: one comment line, whatever a name holds
    top = summary(board, names)
    if top["columns"]:
        out += _tex_summary(top, names, "table" if len(top["columns"]) <= SUMMARY_COLUMNS["table"] else "table*")
    for sub in board:
        label = "tab:fdbu-" + re.sub(r"[^A-Za-z0-9]+", "-", (f"{sub['view']}-" if "view" in sub else "") + sub["subset"])
        source = f" Source: {tex(sub['source'])}." if "source" in sub else ""
        note = f" {tex(sub['note'])}." if "note" in sub else ""
        official = _tex_missing(names, sub["reference"]) if "reference" in sub else ""
        out += [rf"\begin{{{env}}}[t]", r"\centering", r"\small" if env == "table" else r"\footnotesize",
                r"\setlength{\tabcolsep}{3pt}",
                rf"\caption{{{tex(sub['subset'])} ({tex(sub['label'])}): each value over its 95\% interval; bold: "
                rf"best; $^*$: paired difference against {tex(sub['baseline'])} with Holm-adjusted $p$ below $\alpha$ "
                r"(+ better, - worse)" + (f"; {tex(sub['family'])}" if sub["family"] else "") + "; n/r: not reached."
                + source + note + official + "}", rf"\label{{{label}}}",
                r"\begin{tabular}{@{}p{" + LABEL_WIDTH.get(len(names), "0.2") + r"\linewidth}" + "r" * len(names)
                + "@{}}", r"\toprule",
                "metric & " + " & ".join(  # a name as wide as its column at most, broken where it must
                    r"\parbox[b]{" + _width((1 - float(LABEL_WIDTH.get(len(names), "0.2"))) / len(names)) +
                    r"}{\raggedleft " + _breakable(n) + "}" for n in names) + r" \\", r"\midrule"]
        for row in sub["rows"]:
            arrow = {"lower": r" ($\downarrow$)", "higher": r" ($\uparrow$)"}.get(row["better"], "")
            cells = [_tex_cell(c, i in row["best"]) for i, c in enumerate(row["cells"])]
            out.append(r"\raggedright " + tex(row["label"]) + arrow + " & " + " & ".join(cells) + r" \\")
        if "reference" in sub:
            out += [r"\midrule" if sub["rows"] else "",
                    r"\raggedright official rules (summary.json) & " + " & ".join(
                        _tex_reference(r, _official_labels(sub["reference"])) for r in sub["reference"]) + r" \\"]
        out += [r"\bottomrule", r"\end{tabular}", rf"\end{{{env}}}", ""]
    return "\n".join(out)


CSV_HEAD = ["subset", "metric", "kind", "better", "system", "baseline", "value", "value_not_reached", "lo",
            "lo_not_reached", "hi", "hi_not_reached", "count", "best", "paired_n", "diff", "diff_lo", "diff_hi",
            "diff_undefined", "p", "p_holm", "significant", "alpha", "holm_family", "side", "headline", "place",
            "note"]


FLAGS = ("value_not_reached", "lo_not_reached", "hi_not_reached", "best", "diff_undefined", "significant",
         "headline")  # always a bool (False where there is no comparison: pandas then reads the column as bool)


def _row(**cells) -> list:
    """A CSV row of the given columns, the rest empty (the flags False, so pandas reads them as bool)."""
    return [cells.get(k, False if k in FLAGS else None) for k in CSV_HEAD]


def _official_rows(r: dict) -> list[tuple[str, Any]]:
    """(metric, number or the text saying why there is none) of one system's official numbers of a subset."""
    if not r["numbers"]:
        return [("official", r["note"])]
    out: list[tuple[str, Any]] = []
    for label, value in r["numbers"]:
        out += ([(f"official {label}", value["mean"]), (f"official {label} std", value["std"])]
                if isinstance(value, dict) else [(f"official {label}", value)])
    return out


def to_csv(board: list[dict], names: list[str]) -> str:
    """Tidy: a row per subset, metric and system; every numeric column numeric (empty for none, with a
    `*_not_reached` flag beside the value and the interval's ends), the samples counted, and against the baseline
    the paired n, the difference b - a with its interval (inf or -inf where only one median is reached;
    `diff_undefined` where neither is, or no pair is), the raw and the Holm-adjusted p and the decision, with the
    level it was taken at and the marks that hold it together (`alpha`, `holm_family`: compare.alpha and
    compare.family, on every row of a compared system; empty without a comparison); `headline`
    for the summary's metrics. Then the summary's mean rank per system (subset `summary`, with its `place`) and
    the official rules' numbers (kind `official`: a mean and std as two rows; `note` where there is no number)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    views = any("view" in sub for sub in board)  # a `view` column only where the trees were scored with views
    w.writerow(CSV_HEAD + ["view", "view_settings"] * views)  # view_settings: those not its defaults, "; "-joined

    def write(cells: list, view=None, chosen=None) -> None:
        cells = cells + [None] * (len(CSV_HEAD) - len(cells)) + ([view, "; ".join(chosen or [])] if views else [])
        w.writerow(["" if x is None else x for x in cells])  # csv writes inf and -inf, floats to pandas

    for sub in board:
        base = csv_text(sub["baseline"])
        decided = sub.get("decided") or {}
        for row in sub["rows"]:
            for i, (name, c) in enumerate(zip(names, row["cells"])):
                iv = c["interval"] or [None, None]
                (v, v_nr), (lo, lo_nr), (hi, hi_nr) = (split_reached(x) for x in (c["value"], *iv))
                d, paired = c.get("decision") or {}, c.get("paired") or {}
                diff = paired.get("difference") or {}
                div, flags = diff.get("interval") or [None, None], diff.get("interval_flags") or [None, None]
                write([sub["subset"], row["metric"], row["kind"], row["better"], csv_text(name), base, v, v_nr, lo,
                       lo_nr, hi, hi_nr, c.get("count"), i in row["best"], paired.get("n"),
                       signed(diff.get("value"), diff.get("value_flag")), *(signed(x, f) for x, f in zip(div, flags)),
                       diff.get("value_flag") == UNDEFINED if diff else False, paired.get("p"), d.get("p_holm"),
                       bool(d["mark"]) if d else False, decided.get("alpha") if paired else None,
                       decided.get("holm_family") if paired else None, d.get("side"),
                       bool(row.get("headline")) and "view" not in sub], sub.get("view"), sub.get("view_settings"))
        for name, r in zip(names, sub.get("reference", [])):
            for metric, x in _official_rows(r):
                number = isinstance(x, (int, float)) and not isinstance(x, bool)
                write(_row(subset=sub["subset"], metric=metric, kind="official", better="reference",
                           system=csv_text(name), baseline=base, value=x if number else None,
                           note=None if number else csv_text(x)), sub.get("view"), sub.get("view_settings"))
    top = summary(board, names)
    for r in top["rows"] if top["columns"] else []:
        write(_row(subset="summary", metric="mean_rank", kind="rank", better="lower", system=csv_text(r["system"]),
                   baseline=csv_text(top["baseline"]), value=r["mean_rank"], place=r["place"]))
    return buf.getvalue()
