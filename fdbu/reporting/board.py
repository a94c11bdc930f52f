"""The report's leaderboard as data (`fdbu report`): per subset, a row per declared metric (and per line of its
family's entries) with each system's value and interval from its unified.json, the best cells, each system's
decision against the baseline from the compare result, the official rules' numbers from its summary.json; the
views' sections; and the summary's ranking over the headline metrics. Numbers are read, never recomputed.

The page (fdbu.reporting.site) and the tables (fdbu.reporting.tables) render it."""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from .. import tasks
from ..common.cells import difference_text, num, p_text, record_text
from ..comparison.marks import holm_note
from ..errors import FdbuError
from ..metrics.paired import UNDEFINED, signed
from ..metrics.stats import NOT_REACHED


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
    p_holm = m.get("p_holm")
    return {"mark": mark, "side": side, "p_holm": p_holm, "p_holm_text": None if p_holm is None else p_text(p_holm),
            "reason": m.get("reason")}


def _pair_metrics(result: dict | None, pair: tuple[str, str], subset: str, view: str | None = None,
                  key: str | None = None) -> dict:
    """The compare result's lines of the pair (baseline, name) on a subset: its unified metrics, a view's numbers
    (`view`), or a family entry's compared lines (`key`: v1.5's matched control)."""
    if result is None:
        return {}
    for p in result["pairs"]:
        if (p["a"], p["b"]) == pair:
            entry = p.get("entries", {}).get(key, {}) if key is not None else \
                p["subsets"] if view is None else p.get("views", {}).get(view, {})
            return entry.get(subset, {}).get("metrics", {})
    return {}


def _paired(cell: dict, pm: dict | None) -> None:
    """A cell's decision against the baseline and its paired difference, from the compare result's line `pm`."""
    if pm is None:
        return
    cell["decision"] = decision(pm)
    d = pm["difference"]  # only the keys compared.read_result checks (a given compare.json)
    difference = {k: d.get(k) for k in ("value", "value_flag", "interval", "interval_flags")}
    cell["paired"] = {"n": pm.get("n"), "p": pm.get("p"), "difference": difference,
                      # the texts every output prints (the site shows these, never rounds itself)
                      "text": {"difference": difference_text(difference), "p": p_text(pm.get("p"))}}


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
            _paired(cell, pair.get(m.name))
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
    decided = {k: result["comparison"].get(k) for k in ("alpha", "pairs", "holm_family")} if result else None
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
                             [_pair_metrics(result, (baseline, s.name), subset) for s in systems])
        rows += _entry_rows(subset, systems, result, baseline)
        _best(rows, systems)
        out.append({"subset": subset, "label": tasks.subset(subset).task.label, "rows": rows, "counts": counts,
                    "baseline": baseline, "reference": [_reference_cell(r, subset) for r in refs]})
    out += _view_sections(systems, result, baseline)
    # what a table's marks hold together (compare.family), said under it
    note = holm_note(decided, views=any("view" in sub for sub in out)) if len(systems) > 1 else ""
    for sub in out:
        sub["decided"], sub["family"] = decided, note
    return out


UNSCORED = ("No unified metric (the spec: icc_backchannel's official frequency and JSD are the reference); "
            "its official numbers only")
REFERENCE = "official rules (summary.json)"


def _subsets(system) -> set[str]:
    """The subsets a tree's manifest.json selects samples of (the scored ones and those fdbu scores not)."""
    from ..tree.load import read_manifest

    try:
        return {s.subset for s in read_manifest(system.root).samples}
    except FdbuError:
        return set(system.unified["subsets"])


def _reference(system) -> tuple[dict, str]:
    """(subset -> [(label, value)], why there is none) from the tree's summary.json (`fdbu evaluate`), read only
    while it was computed from the manifest.json and asr.json the tree's unified.json was."""
    from ..official.summary import official_numbers, read_summary

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
    from ..official.summary import number_text as official_text

    numbers, why = ref
    if subset not in numbers:
        note = why or "summary.json has no numbers for this subset"
        return {"numbers": [], "text": note, "note": note}
    pairs = [[label, value] for label, value in numbers[subset]]
    return {"numbers": pairs, "text": ", ".join(f"{label} {official_text(v)}" for label, v in pairs), "note": None}


def _view_sections(systems, result: dict | None, baseline: str) -> list[dict]:
    """Each view's numbers per subset (fdbu.views), after the unified metrics, each section naming its source."""
    from ..views import VIEWS, chosen, chosen_text, part_on

    out = []
    for view, head in systems[0].unified.get("views", {}).items():  # compared trees share their views (signature)
        settings = VIEWS[view].settings.of(head["settings"])
        mine = chosen(view, head["settings"])  # named wherever the view's numbers are shown
        own = [s.unified.get("views", {}).get(view, {}) for s in systems]
        for subset in head["subsets"]:
            table = part_on(VIEWS[view], subset).table(settings)
            entries = [o.get("subsets", {}).get(subset, {}) for o in own]
            rows = _metric_rows(table, systems, [e.get("metrics", {}) for e in entries],
                                [_pair_metrics(result, (baseline, s.name), subset, view) for s in systems])
            _best(rows, systems)
            out.append({"subset": subset, "label": f"in {head['title']}'s terms{chosen_text(mine)}, not the unified metrics",
                        "view": view, "view_settings": mine, "source": head["source"], "rows": rows,
                        "counts": [e.get("counts", {}) for e in entries], "baseline": baseline})
        if "pooled" in head:
            rows = _metric_rows((VIEWS[view].pooled_metric(),), systems, [o.get("pooled", {}) for o in own],
                                [_pair_metrics(result, (baseline, s.name), "pooled", view) for s in systems])
            _best(rows, systems)
            compared = next((p.get("views", {}).get(view, {}).get("pooled") for p in (result or {}).get("pairs", [])
                             if p.get("views", {}).get(view, {}).get("pooled")), None)
            over = ", ".join((compared or next(iter(head["pooled"].values())))["over"])  # what the mark is over
            out.append({"subset": "pooled", "label": f"in {head['title']}'s terms{chosen_text(mine)}, pooled over {over}",
                        "view": view, "view_settings": mine, "source": head["source"], "rows": rows,
                        "counts": [{} for _ in systems], "baseline": baseline})
    return out


def _entry_rows(subset: str, systems, result: dict | None = None, baseline: str = "") -> list[dict]:
    """The lines of the subset's family's entries (v1.5's matched control, docs: Definition 58), below its metrics:
    a row per line, each system's paired difference with its interval (+-inf where one side is not reached), from
    its unified.json; and where compare compared the entries (Definitions 87-90), each system's decision against the
    baseline."""
    out = []
    for extra in tasks.family(subset).entries:
        entries = [s.unified["subsets"].get(subset, {}).get(extra.key) for s in systems]
        if not any(entries):
            continue
        paired = [_pair_metrics(result, (baseline, s.name), subset, key=extra.key) for s in systems]
        for name, better in extra.better(subset, systems[0].unified).items():
            cells = []
            for e, pair in zip(entries, paired):
                line = extra.lines(e).get(name) if e else None  # an entry may have no line for it (v2's judge
                d = line["difference"] if line else None           # entry of a tree with no judged events)
                count = extra.count(e) if e else None
                if d is None or d["value_flag"] == UNDEFINED:
                    cells.append({**_cell(None, None), "count": count})
                    _paired(cells[-1], pair.get(name))
                    continue
                iv = None if d["interval"] is None else [signed(x, f) for x, f in zip(d["interval"],
                                                                                      d["interval_flags"])]
                value = signed(d["value"], d["value_flag"])
                # +-inf (a median not reached on one side) is text in the cell, and no number in the page's JSON
                cells.append({**_cell(_finite(value), None if iv is None else [_finite(x) for x in iv]),
                              "text": record_text(value, iv), "value_text": num(value), "count": count})
                _paired(cells[-1], pair.get(name))
            out.append({"metric": name, "label": extra.label(name), "better": better, "kind": extra.kind,
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
             "mean_rank": round(float(mean[i]), 6), "mean_rank_text": f"{round(float(mean[i]), 6):.2f}",
             "ranks": [float(r) for r in ranks[i]],
             "cells": [row["cells"][i] for _, row in columns], "best": [i in row["best"] for _, row in columns]}
            for i in order]
    return {"columns": [{"subset": sub["subset"], "metric": row["metric"], "label": row["label"],
                         "better": row["better"], "kind": row["kind"]} for sub, row in columns],
            "rows": rows, "rule": RANK_RULE, "baseline": board[0]["baseline"] if board else "",
            "family": holm_note(board[0].get("decided"), len({sub["subset"] for sub, _ in columns})) if board and k > 1
            else ""}


def _finite(x: float | None) -> float | None:
    return None if x is None or math.isinf(x) else x


def _cell(value, interval) -> dict:
    return {"value": value, "interval": interval, "text": record_text(value, interval), "value_text": num(value)}


def _mark(cell: dict) -> str:
    d = cell.get("decision")
    return "" if not d or not d["mark"] else d["mark"] + {"better": "+", "worse": "-"}.get(d["side"], "")
