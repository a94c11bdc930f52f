"""`fdbu report`: scored trees as one static site a person opens from disk, and the leaderboard as tables.

The site is `index.html` (CSS, script, the leaderboard and a small index of every sample
inlined) and the drill-downs (waveform peaks, words, segments, annotation marks, the outcome
and the rule that decided it) in parts of CHUNK samples, `samples-K-C.js` (system K's part C),
each loaded by a script tag the first time one of its samples is opened, so the page opens at
once for 10,000 samples x several systems, a sample opens after loading a few hundred kB, and
it works over file:// (no server, no network, no CDN).
Audio is played from the trees themselves, by a path relative to the site.

Numbers are read, never recomputed: values and intervals from each tree's unified.json, the
mark against the baseline from the compare result (`decision`), the outcome of each sample
from unified-samples.jsonl (the rule text only restates why, from the row's own fields).
"""
from __future__ import annotations

import csv
import io
import json
import math
import os
import re
from pathlib import Path
from typing import Any

import numpy as np

from . import tasks
from .errors import FdbuError
from .metrics.stats import NOT_REACHED
from .readers import parse_json
from .cells import csv_text, md_text, num, record_text, split_reached
from .metrics.paired import UNDEFINED, signed
from .settings import FORMATS, WIDTH

PEAKS = 400  # waveform bins per drill-down: enough for a 1000 px wide plot, 400 bytes per sample
ASSETS = Path(__file__).with_name("site_assets")


# ---- the leaderboard -------------------------------------------------------------------------------------------

def _key(x, better: str) -> float:
    """A value to rank by, larger is better; not reached is the worst of a latency (lower better)."""
    v = math.inf if x == NOT_REACHED else (math.nan if x is None else float(x))
    return -v if better == "lower" else v


def decision(m: dict) -> dict:
    """The compare result's decision for one metric of a pair (b - a), as the console shows it: `*` where the result
    marks it (Holm-adjusted p < alpha); better or worse by the metric's direction. Read from the result, not
    recomputed."""
    d = m["difference"]
    mark = "*" if m.get("marker") else ""
    flag, value = d.get("value_flag"), d.get("value")
    sign = {"+inf": 1, "-inf": -1}.get(flag, 0 if value is None else (value > 0) - (value < 0))
    side = None
    if mark and m["better"] in ("lower", "higher") and sign:
        side = "better" if (sign > 0) == (m["better"] == "higher") else "worse"
    return {"mark": mark, "side": side, "p_holm": m.get("p_holm")}


def _pair_metrics(result: dict | None, baseline: str, name: str, subset: str, view: str | None = None) -> dict:
    if result is None:
        return {}
    for p in result["pairs"]:
        if p["a"] == baseline and p["b"] == name:
            entry = p["subsets"] if view is None else p.get("views", {}).get(view, {})
            return entry.get(subset, {}).get("metrics", {})
    return {}


def _metric_rows(table, systems, records: list[dict], paired: list[dict]) -> list[dict]:
    """A row per declared metric, a cell per system: `records[i]` system i's metric records, `paired[i]` the compare
    result's lines of its pair with the baseline."""
    rows = []
    for m in table:
        cells = []
        for own, pair in zip(records, paired):
            rec = own.get(m.name)
            cell = _cell(rec["value"], rec["interval"]) if rec else _cell(None, None)
            cell["count"] = rec.get("count") if rec else None
            pm = pair.get(m.name)
            if pm is not None:
                cell["decision"] = decision(pm)
                d = pm["difference"]  # only the keys compared.read_result checks (a given compare.json)
                cell["paired"] = {"n": pm.get("n"), "p": pm.get("p"), "difference": {
                    k: d.get(k) for k in ("value", "value_flag", "interval", "interval_flags")}}
            cells.append(cell)
        rows.append({"metric": m.name, "label": m.label, "better": m.better, "kind": m.kind, "cells": cells,
                     "headline": m.headline})
    return rows


def _best(rows: list[dict], systems) -> None:
    for row in rows:
        keys = [_key(c["value"], row["better"]) for c in row["cells"]]
        finite = [k for k in keys if not math.isnan(k)]
        if row["better"] in ("lower", "higher") and len(systems) > 1 and finite:
            top = max(finite)
            row["best"] = [i for i, k in enumerate(keys) if k == top]
        else:
            row["best"] = []


def leaderboard(systems, result: dict | None = None) -> list[dict]:
    """Per subset: a row per metric (coverage first), a cell per system with its value and interval from its
    unified.json, the best cells by the metric's direction, each system's decision against the baseline, and the
    official rules' numbers from its summary.json (`reference`); a subset without unified metrics
    (icc_backchannel) with its official numbers alone; then each view's section (another benchmark's terms, fdbu
    score views=), marked with its source."""
    baseline = result["comparison"]["baseline"] if result else systems[0].name
    refs = [_reference(s) for s in systems]
    present = set().union(*(_subsets(s) for s in systems))
    out = []
    for subset in tasks.SUBSETS:
        counts = [s.unified["subsets"].get(subset, {}).get("counts", {}) for s in systems]
        if subset not in tasks.scored():
            if subset in present:
                out.append({"subset": subset, "label": tasks.subset(subset).task.label, "rows": [], "counts": counts,
                            "baseline": baseline, "reference": [_reference_cell(r, subset) for r in refs],
                            "note": UNSCORED})
            continue
        if not any(subset in s.unified["subsets"] for s in systems):
            continue
        table = tasks.metric_table(subset, systems[0].unified)  # compared trees share their settings
        rows: list[dict[str, Any]]
        rows = [{"metric": "coverage", "label": "coverage", "better": "context", "kind": "share", "headline": False,
                 "cells": [_cell(s.unified["subsets"].get(subset, {}).get("coverage"), None) for s in systems]}]
        rows += _metric_rows(table, systems, [s.unified["subsets"].get(subset, {}).get("metrics", {}) for s in systems],
                             [_pair_metrics(result, baseline, s.name, subset) for s in systems])
        rows += _entry_rows(subset, systems)
        _best(rows, systems)
        out.append({"subset": subset, "label": tasks.subset(subset).task.label, "rows": rows, "counts": counts,
                    "baseline": baseline, "reference": [_reference_cell(r, subset) for r in refs]})
    return out + _view_sections(systems, result, baseline)


UNSCORED = ("No unified metric (the spec: icc_backchannel's official frequency and JSD are the reference); "
            "its official numbers only")
REFERENCE = "official rules (summary.json)"


def _subsets(system) -> set[str]:
    """The subsets a tree's manifest.json selects samples of (the scored ones and those fdbu scores not)."""
    from .tree import read_manifest

    try:
        return {s.subset for s in read_manifest(system.root).samples}
    except FdbuError:
        return set(system.unified["subsets"])


def _reference(system) -> tuple[dict, str]:
    """(subset -> [(label, value)], why there is none) from the tree's summary.json (`fdbu evaluate`), read only
    while it was computed from the manifest.json and asr.json the tree's unified.json was."""
    from .evaluate import official_numbers, read_summary

    inputs = system.unified["inputs"]
    summary, why = read_summary(system.root, inputs["manifest.json"], inputs["asr.json"])
    if summary is None:
        return {}, why
    try:
        return official_numbers(summary), ""
    except (KeyError, TypeError, AttributeError, StopIteration, ValueError):
        return {}, f"{Path(system.root) / 'summary.json'} is not a summary.json fdbu can read"


def _reference_cell(ref: tuple[dict, str], subset: str) -> dict:
    """One system's official numbers of a subset: `numbers` [[label, value]], `text` as the console prints them,
    `note` why there are none."""
    from .evaluate import number_text as official_text

    numbers, why = ref
    if subset not in numbers:
        note = why or "summary.json has no numbers for this subset"
        return {"numbers": [], "text": note, "note": note}
    pairs = [[label, value] for label, value in numbers[subset]]
    return {"numbers": pairs, "text": ", ".join(f"{label} {official_text(v)}" for label, v in pairs), "note": None}


def _view_sections(systems, result: dict | None, baseline: str) -> list[dict]:
    """Each view's numbers per subset (fdbu.views), after the unified metrics, each section naming its source."""
    from .views import VIEWS

    out = []
    for view, head in systems[0].unified.get("views", {}).items():  # compared trees share their views (signature)
        settings = VIEWS[view].settings.of(head["settings"])
        own = [s.unified.get("views", {}).get(view, {}) for s in systems]
        for subset in head["subsets"]:
            table = VIEWS[view].parts[tasks.subset(subset).task.name].table(settings)
            entries = [o.get("subsets", {}).get(subset, {}) for o in own]
            rows = _metric_rows(table, systems, [e.get("metrics", {}) for e in entries],
                                [_pair_metrics(result, baseline, s.name, subset, view) for s in systems])
            _best(rows, systems)
            out.append({"subset": subset, "label": f"in {head['title']}'s terms, not the unified metrics",
                        "view": view, "source": head["source"], "rows": rows,
                        "counts": [e.get("counts", {}) for e in entries], "baseline": baseline})
        if "pooled" in head:
            rows = _metric_rows((VIEWS[view].pooled_metric(),), systems, [o.get("pooled", {}) for o in own],
                                [_pair_metrics(result, baseline, s.name, "pooled", view) for s in systems])
            _best(rows, systems)
            compared = next((p.get("views", {}).get(view, {}).get("pooled") for p in (result or {}).get("pairs", [])
                             if p.get("views", {}).get(view, {}).get("pooled")), None)
            over = ", ".join((compared or next(iter(head["pooled"].values())))["over"])  # what the mark is over
            out.append({"subset": "pooled", "label": f"in {head['title']}'s terms, pooled over {over}", "view": view,
                        "source": head["source"], "rows": rows, "counts": [{} for _ in systems], "baseline": baseline})
    return out


def _entry_rows(subset: str, systems) -> list[dict]:
    """The lines of the subset's family's entries (v1.5's matched control, README: Definition 58), below its metrics:
    a row per line, each system's paired difference with its interval (+-inf where one side is not reached), from
    its unified.json."""
    out = []
    for extra in tasks.family(subset).entries:
        entries = [s.unified["subsets"].get(subset, {}).get(extra.key) for s in systems]
        if not any(entries):
            continue
        for name, better in extra.better(subset, systems[0].unified).items():
            cells = []
            for e in entries:
                d = extra.lines(e)[name]["difference"] if e else None
                count = extra.count(e) if e else None
                if d is None or d["value_flag"] == UNDEFINED:
                    cells.append({**_cell(None, None), "count": count})
                    continue
                iv = None if d["interval"] is None else [signed(x, f) for x, f in zip(d["interval"],
                                                                                      d["interval_flags"])]
                cells.append({**_cell(signed(d["value"], d["value_flag"]), iv), "count": count})
            out.append({"metric": name, "label": extra.label(name), "better": better, "kind": "paired_difference",
                        "cells": cells})
    return out


RANK_RULE = ("ranked by mean rank over the headline metrics: on each, systems are ranked by its direction (1 is "
             "best; ties share their mean rank; a median not reached is the worst latency; no value ranks last), and "
             "equal means share a place. The ranks order point values; the marks say which differences fdbu compare "
             "finds on the paired samples")


def summary(board: list[dict], names: list[str]) -> dict:
    """Systems x the headline metrics of every scored subset (the spec's, `Metric.headline`: compare's Holm
    family), each cell its value and decision against the baseline, the systems ranked by RANK_RULE."""
    columns = [(sub, row) for sub in board if "view" not in sub for row in sub["rows"] if row.get("headline")]
    k = len(names)
    ranks = np.zeros((k, len(columns)))
    for j, (_, row) in enumerate(columns):
        keys = [(0, 0.0) if math.isnan(x) else (1, x)  # no value: below all, not reached included
                for x in (_key(c["value"], row["better"]) for c in row["cells"])]
        for i, x in enumerate(keys):  # 1 + those better, + half of those tied (the mean of the tied places)
            ranks[i, j] = 1 + sum(y > x for y in keys) + (sum(y == x for y in keys) - 1) / 2
    mean = ranks.mean(axis=1) if columns else np.ones(k)
    order = sorted(range(k), key=lambda i: (mean[i], i))
    rows = [{"system": names[i], "index": i, "place": 1 + sum(int(mean[j] < mean[i]) for j in range(k)),
             "mean_rank": round(float(mean[i]), 6), "ranks": [float(r) for r in ranks[i]],
             "cells": [row["cells"][i] for _, row in columns], "best": [i in row["best"] for _, row in columns]}
            for i in order]
    return {"columns": [{"subset": sub["subset"], "metric": row["metric"], "label": row["label"],
                         "better": row["better"], "kind": row["kind"]} for sub, row in columns],
            "rows": rows, "rule": RANK_RULE, "baseline": board[0]["baseline"] if board else ""}


def _cell(value, interval) -> dict:
    return {"value": value, "interval": interval, "text": record_text(value, interval)}


def _mark(cell: dict) -> str:
    d = cell.get("decision")
    return "" if not d or not d["mark"] else d["mark"] + {"better": "+", "worse": "-"}.get(d["side"], "")


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
            lines.append(f"| {r['place']} | {md_text(r['system'])} | {r['mean_rank']:.2f} | " + " | ".join(
                cell(c, b, num(c["value"])) for c, b in zip(r["cells"], r["best"])) + " |")
        lines += ["", md_text(f"Systems {top['rule']}."), ""]
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
    return (f"Values with 95% intervals from each system's unified.json; bold: best of the row by the metric's "
            f"direction; * fdbu compare marks the paired difference against {base} (its Holm-adjusted p is below "
            "alpha), + better, - worse; the mark is on the paired samples (those both systems have in the "
            "metric's population), the values on each system's own; n/r: not reached; official rules: the Full-Duplex-Bench scripts' numbers "
            "from each tree's summary.json (fdbu evaluate), for reference.")


TEX_ESCAPE = {"&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}",
              "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "\\": r"\textbackslash{}", "\n": " ", "\r": " ",
              "<": r"\textless{}", ">": r"\textgreater{}"}


def tex(text: str) -> str:
    """Text as LaTeX prints it literally: `<=`/`>=` as the relations (OT1, the default encoding, prints a bare `<`
    as an inverted exclamation mark), any other `<`, `>` as their text symbols, the specials escaped."""
    text = str(text).replace("<=", "\x00le").replace(">=", "\x00ge")
    out = "".join(TEX_ESCAPE.get(ch, ch) for ch in text)
    return out.replace("\x00le", r"$\le$").replace("\x00ge", r"$\ge$")


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
    from .evaluate import number_text

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
    """Text LaTeX may break between any two characters (no hyphen): a system or subset name in a narrow column
    never runs into the next (TeX would not hyphenate `freeze_omni`)."""
    return r"\allowbreak{}".join(tex(ch) for ch in str(text))


def _width(share: float) -> str:
    """A share of the line less one column gap (the tabular's 2 x 3pt), as a LaTeX dimension (e-TeX's
    \\dimexpr, in every pdflatex)."""
    return rf"\dimexpr{share:.3f}\linewidth-6pt\relax"


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
           rf"{tex(top['rule'])}. Bold: best; $^*$: paired difference against {tex(top['baseline'])} with "
           r"Holm-adjusted $p$ below $\alpha$ (+ better, - worse); n/r: not reached.}", r"\label{tab:fdbu-summary}"]
    for b, block in enumerate(blocks):
        width = _width(0.8 / len(block))  # the r columns' headers this wide
        groups: list[tuple[str, int]] = []
        for j in block:
            sub = top["columns"][j]["subset"]
            groups[-1:] = [(sub, groups[-1][1] + 1)] if groups and groups[-1][0] == sub else groups[-1:] + [(sub, 1)]
        out += ([r"\par\medskip"] if b else []) + [
            r"\begin{tabular}{@{}rp{0.12\linewidth}" + "r" * len(block) + "@{}}",
            r"\toprule", " & & " + " & ".join(
                rf"\multicolumn{{{n}}}{{c}}{{\parbox[b]{{{_width(0.8 * n / len(block))}}}{{\centering\scriptsize "
                + _breakable(sub) + "}}" for sub, n in groups) + r" \\"]
        at = 3
        rules = []
        for _, n in groups:
            rules.append(rf"\cmidrule(l){{{at}-{at + n - 1}}}")
            at += n
        arrow = {"lower": r"$\downarrow$", "higher": r"$\uparrow$"}
        out += ["".join(rules), r"\# & system & " + " & ".join(
            r"\parbox[t]{" + width + r"}{\raggedleft " + tex(top["columns"][j]["label"]) + " "
            + arrow.get(top["columns"][j]["better"], "") + "}"
            for j in block) + r" \\", r"\midrule"]
        for r in top["rows"]:
            cells = [_tex_value(r["cells"][j], r["best"][j]) for j in block]
            out.append(f"{r['place']} & " + r"\raggedright " + _breakable(r["system"]) + " & " + " & ".join(cells)
                       + r" \\")
        out += [r"\bottomrule", r"\end{tabular}"]
    return out + [rf"\end{{{env}}}", ""]


def to_latex(board: list[dict], names: list[str]) -> str:
    """The summary, then one table float per subset, captioned and labelled (tab:fdbu-<subset>), with booktabs
    rules (needs \\usepackage{booktabs} only), the official rules' numbers as each subset's last row: a `table`
    that fits one column of a two-column paper for up to COLUMN_SYSTEMS systems, a page-wide `table*` for more (the
    summary: `table*` beyond SUMMARY_COLUMNS headline metrics, in blocks; tests/test_paper_tables.py compiles all
    with no overfull box)."""
    env = "table" if len(names) <= COLUMN_SYSTEMS else "table*"
    out = [f"% fdbu report: {_legend(board)}"]
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
                r"(+ better, - worse); n/r: not reached." + source + note + official + "}", rf"\label{{{label}}}",
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
            "diff_undefined", "p", "p_holm", "significant", "side", "headline", "place", "note"]


FLAGS = ("value_not_reached", "lo_not_reached", "hi_not_reached", "best", "headline")  # always a bool


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
    `diff_undefined` where neither is, or no pair is), the raw and the Holm-adjusted p and the decision; `headline`
    for the summary's metrics. Then the summary's mean rank per system (subset `summary`, with its `place`) and
    the official rules' numbers (kind `official`: a mean and std as two rows; `note` where there is no number)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    views = any("view" in sub for sub in board)  # a `view` column only where the trees were scored with views
    w.writerow(CSV_HEAD + ["view"] * views)

    def write(cells: list, view=None) -> None:
        cells = cells + [None] * (len(CSV_HEAD) - len(cells)) + ([view] if views else [])
        w.writerow(["" if x is None else x for x in cells])  # csv writes inf and -inf, floats to pandas

    for sub in board:
        base = csv_text(sub["baseline"])
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
                       diff.get("value_flag") == UNDEFINED if diff else None, paired.get("p"), d.get("p_holm"),
                       bool(d["mark"]) if d else None, d.get("side"), bool(row.get("headline")) and "view" not in sub],
                      sub.get("view"))
        for name, r in zip(names, sub.get("reference", [])):
            for metric, x in _official_rows(r):
                number = isinstance(x, (int, float)) and not isinstance(x, bool)
                write(_row(subset=sub["subset"], metric=metric, kind="official", better="reference",
                           system=csv_text(name), baseline=base, value=x if number else None,
                           note=None if number else csv_text(x)), sub.get("view"))
    top = summary(board, names)
    for r in top["rows"] if top["columns"] else []:
        write(_row(subset="summary", metric="mean_rank", kind="rank", better="lower", system=csv_text(r["system"]),
                   baseline=csv_text(top["baseline"]), value=r["mean_rank"], place=r["place"]))
    return buf.getvalue()


# ---- the drill-downs -------------------------------------------------------------------------------------------

def rule(row: dict, words: list) -> tuple[str, str]:
    """(outcome, the rule that decided it in plain words), restated by the row's task (its metric module's
    `explain`) from the row's own fields and words."""
    if not row["eligible"]:
        return "ineligible", "ineligible: " + "; ".join(row.get("reasons") or ["see manifest.json"])
    return tasks.task(row["task"]).metric_module.explain(row, words)


class TreeFiles:
    """A scored tree's sample files as the report may read them: only those its manifest.json (annotations, audio)
    or asr.json (transcripts) list, each after its SHA-256 is checked and only inside the tree (`tree.hashed`),
    and both lists the very ones its unified.json was computed from. A file edited after scoring, or replaced by
    a link out of the tree, is refused in one line, not shown."""

    def __init__(self, system):
        from .tree import hashed, read_manifest

        self.root, inputs = Path(system.root), system.unified["inputs"]
        manifest = read_manifest(self.root)
        if manifest.sha256 != inputs["manifest.json"]:
            raise FdbuError(str(self.root), "manifest.json", "changed after the tree was scored; run fdbu score again")
        self.files = manifest.files
        asr = parse_json(hashed(self.root / "asr.json", str(self.root), "asr.json", inputs["asr.json"], "unified.json",
                                self.root), str(self.root), "asr.json")
        subsets = asr.get("subsets") if isinstance(asr, dict) else None
        self.receipts = {k: v["transcripts"] for k, v in (subsets or {}).items()
                         if isinstance(v, dict) and isinstance(v.get("transcripts"), dict)}
        self.others = {k: v["other_transcripts"] for k, v in (subsets or {}).items()  # v1.5: the clean run's, ...
                       if isinstance(v, dict) and isinstance(v.get("other_transcripts"), dict)}

    def read(self, sid: str, file: str) -> bytes | None:
        """The file's checked bytes; None where neither list names it (it is then not read at all)."""
        from .tree import hashed

        subset, name = sid.split("/")
        if file == "output.json":
            expected, listed_in = self.receipts.get(subset, {}).get(name), "asr.json"
        elif file.endswith(".json") and file in self.others.get(subset, {}):
            listed = self.others[subset][file]
            expected, listed_in = listed.get(name) if isinstance(listed, dict) else None, "asr.json"
        else:
            expected, listed_in = self.files.get(sid, {}).get(file), "manifest.json"
        if expected is None:
            return None
        return hashed(self.root / sid / file, sid, file, expected, listed_in, self.root)


def _words(files: TreeFiles, sid: str, where: str, file: str = "output.json") -> list:
    """[start, end, text] of the transcript's words (an end of null: a zero-length word)."""
    raw = files.read(sid, file)
    if raw is None:
        return []
    data = parse_json(raw, where, file)
    out = []
    try:
        for c in data.get("chunks", []) if isinstance(data, dict) else []:
            a, b = c["timestamp"]
            out.append([round(float(a), 3), round(float(a if b is None else b), 3), str(c.get("text", ""))])
    except (KeyError, TypeError, ValueError):
        raise FdbuError(where, file, "has a chunk without a [start, end] timestamp") from None
    return out


def peaks(data: bytes | Path | None, bins: int = PEAKS, where: str = "", file: str = "output.wav") -> list[int] | None:
    """The largest |sample| per bin, 0-99 (of full scale): a waveform small enough to inline."""
    if data is None:
        return None
    import soundfile as sf

    if isinstance(data, Path):
        where, file, data = str(data.parent), data.name, data.read_bytes()
    try:
        x, _ = sf.read(io.BytesIO(data), dtype="float32", always_2d=True)
    except (RuntimeError, sf.LibsndfileError) as e:
        raise FdbuError(where, file, f"cannot be read as audio: {e}") from None
    x = np.abs(x).max(axis=1)
    if len(x) == 0:
        return []
    edges = np.linspace(0, len(x), bins + 1).astype(np.int64)
    top = np.maximum.reduceat(x, np.minimum(edges[:-1], len(x) - 1))
    return [int(v) for v in np.minimum(99, np.round(top * 99))]


def _annotations(row: dict, files: TreeFiles) -> dict:
    """The times the drill-down marks, from the row's task (its metric module's `marks`), reading only checked
    files of the sample."""
    return tasks.task(row["task"]).metric_module.marks(row, lambda name: files.read(row["sample_id"], name))


def drilldown(system, row: dict, out: Path, files: TreeFiles | None = None) -> dict:
    """One sample of one system: everything its drill-down draws, from the tree's checked files."""
    files = files if files is not None else TreeFiles(system)
    sid = row["sample_id"]
    folder = system.root / sid
    where = f"{system.name}: {sid}"
    words = _words(files, sid, where) if row["eligible"] else []
    outcome, why = rule(row, words)
    d = {"id": sid, "T": row.get("T_s"), "outcome": outcome, "rule": why, "words": words,
         "segments": row.get("segments"), "marks": _annotations(row, files) if row["eligible"] else {},
         "row": row}
    for side in ("output", "input"):
        p = peaks(files.read(sid, f"{side}.wav"), where=sid, file=f"{side}.wav") if row["eligible"] else None
        if p is not None:
            d[side] = {"peaks": p, "src": _relative(folder / f"{side}.wav", out)}
    others = tasks.task(row["task"]).detected[1:]
    if row["eligible"] and others:  # the task's other runs (v1.5: the clean run), on the same timeline
        d["runs"] = [_run(files, sid, where, wav, row, folder, out) for wav in others]
    return d


def _run(files: TreeFiles, sid: str, where: str, wav: str, row: dict, folder: Path, out: Path) -> dict:
    """Another run of the sample (clean_output.wav): its waveform, speech segments (the row's `clean_segments`)
    and words, for the drill-down's second set of lanes."""
    stem = wav.removesuffix(".wav")
    prefix = stem.removesuffix("output")  # clean_output -> clean_: the row's prefix of that run's fields
    p = peaks(files.read(sid, wav), where=sid, file=wav)
    return {"name": stem.replace("_", " "), "peaks": p, "src": _relative(folder / wav, out) if p is not None else None,
            "segments": row.get(f"{prefix}segments"), "words": _words(files, sid, where, f"{stem}.json")}


def _relative(path: Path, out: Path) -> str:
    """`path` as a link from the report folder (the site and the trees move together), always starting with
    `./` or `../`: a first segment such as `javascript:void(0)` could otherwise be read as a URL scheme."""
    from urllib.parse import quote

    rel = quote(Path(os.path.relpath(Path(path).resolve(), Path(out).resolve())).as_posix())  # #, ?, % are path
    return rel if rel.startswith("../") else "./" + rel


TIMES = ("latency_s", "stop_s", "response_s")  # a row's times the samples across systems can be sorted by


def _index(system, out: Path, bar=None) -> tuple[list, list]:
    """(the inlined index: [sample_id, subset, outcome, {time: seconds}] per sample (TIMES the row has), the
    drill-downs)."""
    index, details = [], []
    files = TreeFiles(system)
    for subset, rows in system.rows.items():
        for row in rows:
            d = drilldown(system, row, out, files)
            if bar is not None:
                bar.update()
            index.append([row["sample_id"], subset, d["outcome"],
                          {k: row[k] for k in TIMES if isinstance(row.get(k), (int, float))}])
            details.append(d)
    return index, details


SCRIPT_ESCAPE = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
_ESCAPE_TABLE = str.maketrans(SCRIPT_ESCAPE)


def _script_json(obj) -> str:
    """JSON safe inside a <script> element: no `<` at all (so no `</script`, `<!--` or `<script` can change the
    element's parsing state), no `>` or `&`, and the two line separators JavaScript once refused in strings, all
    as JSON escapes that parse back to the same text."""
    text = json.dumps(obj, allow_nan=False, ensure_ascii=False, separators=(",", ":"))
    return text.translate(_ESCAPE_TABLE)


def html(systems, board: list[dict], index: list, figures: list[str], links: dict, signatures: list) -> str:
    data = {"systems": [s.name for s in systems], "board": board, "summary": summary(board, [s.name for s in systems]),
            "index": index, "chunk": CHUNK, "figures": figures,
            "links": links, "signatures": signatures}
    page = (ASSETS / "index.html").read_text()
    return (page.replace("/*CSS*/", (ASSETS / "site.css").read_text())
            .replace("/*JS*/", (ASSETS / "site.js").read_text())
            .replace("/*DATA*/", "window.FDBU = " + _script_json(data) + ";"))


def signature(system, out: Path) -> dict:
    """What a tree was scored with and from, and where it is relative to the report."""
    u = system.unified
    vad = u.get("speech_detection", {})
    return {"name": system.name, "tree": _relative(system.root, out), "fdbu_version": u.get("fdbu_version"),
            "definitions": u.get("definitions"), "inputs": u.get("inputs"), "sha256": system.sha256,
            "silero_vad": vad.get("silero_vad_version"), "vad_settings": vad.get("settings"),
            "transcripts": u.get("transcripts"), "bootstrap": u.get("bootstrap")}


CHUNK = 250  # drill-downs per samples-K-C.js: a sample opens after loading its part, never a whole system's


def parts(n: int) -> int:
    """How many samples-K-C.js files hold a system's n drill-downs."""
    return -(-n // CHUNK)


def names(sizes: list[int], formats=FORMATS, figures: tuple = ()) -> list[str]:
    """The report's files; `sizes`: each system's number of samples."""
    out = []
    if "html" in formats:
        out += ["index.html", *(f"samples-{k}-{c}.js" for k, n in enumerate(sizes) for c in range(parts(n))),
                *figures]
    out += [f"leaderboard.{f}" for f in formats if f != "html"]
    return out


def files(systems, result: dict | None, out: Path, formats=FORMATS, figures: dict[str, bytes] | None = None,
          links: dict | None = None, progress: bool = False) -> dict[str, bytes]:
    """Every file of the report folder `out` as bytes."""
    board = leaderboard(systems, result)
    sys_names = [s.name for s in systems]
    files = {}
    exporters = {"md": to_markdown, "tex": to_latex, "csv": to_csv}
    for f in formats:
        if f in exporters:
            files[f"leaderboard.{f}"] = exporters[f](board, sys_names).encode()
    if "html" in formats:
        index = []
        from tqdm import tqdm

        bar = tqdm(total=sum(len(r) for s in systems for r in s.rows.values()), desc="drill-downs", unit="sample",
                   disable=None if progress else True)  # on a terminal only
        for k, s in enumerate(systems):
            idx, details = _index(s, out, bar)
            index.append(idx)
            for c in range(parts(len(details))):
                files[f"samples-{k}-{c}.js"] = (f'window.FDBU_SAMPLES = window.FDBU_SAMPLES || {{}}; '
                                                f'window.FDBU_SAMPLES["{k}-{c}"] = '
                                                f'{_script_json(details[c * CHUNK:(c + 1) * CHUNK])};\n').encode()
        bar.close()
        figures = figures or {}
        files.update(figures)
        links = {k: _relative(v, out) for k, v in (links or {}).items()}
        files["index.html"] = html(systems, board, index, [f for f in figures if f.endswith(".png")], links,
                                   [signature(s, out) for s in systems]).encode()
    return files


# ---- the command -----------------------------------------------------------------------------------------------

HEAD = "report.json"


def figure_names(n_systems: int, plot: bool) -> tuple[str, ...]:
    if not plot:
        return ()
    from .compare_outputs import FIGURES, FORMATS
    from .unified import CURVES, family_figures

    return tuple(f"{stem}.{ext}" for stem in FIGURES for ext in FORMATS) if n_systems > 1 else CURVES + family_figures()


def outputs(out: Path, sizes: list[int], formats, plot: bool, own_compare: bool):
    """`fdbu report`'s outputs in `out` (`sizes`: each system's number of samples), checked before any work;
    report.json is their header."""
    from .outputs import Outputs

    extra = ["compare.json"] if own_compare else []
    return Outputs(out, "report", [HEAD, *extra, *names(sizes, formats, figure_names(len(sizes), plot))], head=HEAD)


def figures(systems, result: dict | None, width: str, progress: bool = False) -> dict[str, bytes]:
    """The figures the site embeds (PNG) and links (PDF): the comparison's, or one system's own (its latency curves,
    and for v1.5 its stop curves)."""
    if result is not None:
        from .compare_outputs import figures as compared

        return compared(result, systems, width, progress)
    from .unified import figures as own

    rows = [r for rs in systems[0].rows.values() for r in rs]
    return own(rows, systems[0].unified, systems[0].name, width)


def build(systems, result: dict | None, out: Path, *, formats=FORMATS, plot: bool = True, width: str = WIDTH,
          compare_path: Path | None = None, progress: bool = False) -> dict[str, bytes]:
    """Every file of `fdbu report` as bytes; compare.json is written beside the site when it was computed here."""
    from .atomic import dumps

    out = Path(out)
    figs = figures(systems, result, width, progress) if plot and "html" in formats else {}
    links = {f"{s.name}: unified.json": s.root / "unified.json" for s in systems}
    made = {}
    if result is not None:
        if compare_path is None:
            made["compare.json"] = dumps(result).encode()
            links["compare.json"] = out / "compare.json"
        else:
            links["compare.json"] = compare_path
    made.update(files(systems, result, out, formats, figs, links, progress))
    from .version import __version__

    head = {"generator": "fdbu", "fdbu_version": __version__, "kind": "report",
            "systems": [signature(s, out) for s in systems], "files": sorted(made)}
    return {HEAD: dumps(head).encode(), **made}
