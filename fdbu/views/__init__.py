"""Other benchmarks' timing numbers on the same tree: one registry of views (docs: Numbers in other benchmarks'
terms).

A `View` is another paper's vocabulary (FD-Bench's SRR ... EIT, VideoFDB's timing classes and TOR-Alignment) as
declared metric tables, one `Part` per task it can be computed on. A part turns a subset's samples and the
task's components (the same kernels' outputs the unified metrics use) into one record per eligible sample, kept in
unified-samples.jsonl under `views` so compare and the report rebuild every number from the rows alone; its
table's `Metric`s read the records (with the unified row beside them) and `fdbu.metrics.table.aggregate` makes the
numbers with the spec's interval rules. A view's settings are the paper's open choices, recorded in unified.json.

Nothing here touches the unified metrics: a view's numbers live in unified.json's own `views` section, scored
under the definitions `+fdbu-views-2`, and a run without `views=` writes what it wrote before, byte for byte.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..metrics.stats import Bootstrap, percentile_interval, share
from ..metrics.table import aggregate
from . import fdbench, videofdb
from .base import INF, Part, Records, View, us

__all__ = ["INF", "Part", "Records", "View", "us", "VIEWS", "score_views", "aggregate_part", "pooled_share",
           "segmented", "part_of", "part_on"]
VIEWS: dict[str, View] = {v.name: v for v in (fdbench.VIEW, videofdb.VIEW)}


def score_views(names: list[str], subset_rows: dict[str, tuple[str, list, Any, list[dict], int, Any]], boot: Bootstrap,
                settings: dict[str, Any]) -> dict:
    """unified.json's `views` section, and each eligible row's records added under row["views"].

    `subset_rows`: subset -> (task name, eligible samples, task components, their rows (in place), selected count,
    the samples' speech segments or None).
    """
    out = {}
    for name in names:
        view, s = VIEWS[name], settings[name]
        entry: dict[str, Any] = {"title": view.title, "source": view.source, "settings": s.header(), "subsets": {}}
        pooled = []
        for subset, (task, eligible, comps, rows, selected, segments) in subset_rows.items():
            part = view.part(task, subset)
            if part is None:
                continue
            for row, record in zip(rows, part.records(eligible, comps, s, segments)):
                row.setdefault("views", {})[name] = record
            entry["subsets"][subset] = aggregate_part(part, rows, s, name, selected, boot)
            if part.passes is not None:
                pooled.append((subset, rows, part, selected))
        if view.pooled is not None and pooled:
            entry["pooled"] = {view.pooled: pooled_share(view, name, pooled, boot)}
        entry["not_computable"] = list(view.not_computable)
        out[name] = entry
    return out


def aggregate_part(part: Part, rows: list[dict], settings: Any, name: str, selected: int, boot: Bootstrap) -> dict:
    """A subset's view numbers from its eligible rows (score, and compare from a scored tree)."""
    c = Records(rows, name, part.fields)
    populations = part.populations(c)
    counts = {"selected": selected, "eligible": len(rows)}
    counts.update({p: int(np.count_nonzero(m)) for p, m in populations.items() if p != "eligible"})
    metrics = aggregate(part.table(settings), c, populations, selected=selected, ineligible=selected - len(rows),
                        boot=boot)
    return {"counts": counts, "metrics": metrics}


def pooled_share(view: View, name: str, parts: list[tuple[str, list[dict], Part, int]],
                 boot: Bootstrap | None = None) -> dict:
    """The share of every computable part's eligible samples that pass (TOR-Alignment), bounds over all selected;
    beside it each class's rate (its parts' samples pooled; a class is a part's label) and the mean of the class
    rates, the other reading of "the fraction of clips" (each class weighing the same), with a percentile interval
    from resampling each class's samples on their own (`boot`; None: no interval, as a check from the rows needs)."""
    passing = [(part.label or subset, getattr(Records(rows, name, part.fields), str(part.passes)))
               for subset, rows, part, _ in parts]
    hits = sum(int(np.count_nonzero(p)) for _, p in passing)
    n = sum(len(rows) for _, rows, _, _ in parts)
    selected = sum(s for _, _, _, s in parts)
    record = share(hits, n, unknown=selected - n, selected=selected, better="higher")
    record["over"] = [subset for subset, _, _, _ in parts]
    by_class: dict[str, np.ndarray] = {}
    for label, p in passing:
        by_class[label] = np.concatenate([by_class.get(label, np.zeros(0, bool)), p])
    record["classes"] = {label: {"count": int(np.count_nonzero(p)), "n": len(p),
                                 "value": float(np.count_nonzero(p)) / len(p) if len(p) else None}
                         for label, p in by_class.items()}
    rated = [p for p in by_class.values() if len(p)]
    record["class_mean"] = float(np.mean([c["value"] for c in record["classes"].values() if c["n"]])) if rated else None
    interval = None
    if rated and boot is not None:  # one generator carried from class to class: each class resampled on its own
        rng, total = np.random.default_rng(boot.seed), np.zeros(boot.resamples)
        for p in rated:
            boot._check(len(p))  # the size every metric's resampling is refused beyond, with the numbers
            total += p[rng.integers(0, len(p), size=(boot.resamples, len(p)))].mean(axis=1)
        interval = percentile_interval(np.sort(total / len(rated)))
    record["class_mean_interval"] = interval
    return record


def chosen(name: str, settings: Any) -> list[str]:
    """The view's settings in a scored tree's record (its header's `settings`) that are not the view's defaults
    (`fdbench.stop_by=R`): named wherever the view's numbers are shown (issue 75)."""
    if name not in VIEWS or not isinstance(settings, dict):
        return []
    return VIEWS[name].settings.of(settings).non_default()


def chosen_text(names: list[str]) -> str:
    """", with fdbench.stop_by=R" after a view's title; "" for its defaults."""
    return f", with {', '.join(names)}" if names else ""


def part_of(view: View, subset: str) -> Part | None:
    """The view's part on a subset (its task's, where the part covers the subset), None where it has none."""
    from .. import tasks

    return view.part(tasks.subset(subset).task.name, subset)


def part_on(view: View, subset: str) -> Part:
    """The view's part on a subset it holds numbers of (a scored tree's, already checked to be covered)."""
    part = part_of(view, subset)
    if part is None:
        raise KeyError(f"the {view.name} view has no part on {subset}")
    return part


def segmented(names, task: str) -> bool:
    """Whether one of the views `names` reads Silero's segments on `task`'s outputs (Part.segments)."""
    return any(getattr(VIEWS[n].parts.get(task), "segments", False) for n in names)
