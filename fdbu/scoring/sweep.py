"""Sensitivity sweep: the outcomes of a subset with speech detection over a grid of VAD settings, from one pass of
the model.

The Silero probabilities of every swept output (v1.0's interruption outputs; for a v1.5 subset both runs of each
sample) are computed once (or read from the cache); each grid point only re-derives segments (numba) and outcomes.
The guard runs for every grid point's thresholds, so each point's segments are the reference path's under
that point's settings, and the point with the spec's settings reproduces unified.json.
"""
from __future__ import annotations

import csv
import io
from dataclasses import asdict
from pathlib import Path

from ..common.atomic import dumps
from ..common.outputs import Outputs
from ..common.progress import Bar
from ..errors import FdbuError
from ..metrics.stats import NOT_REACHED, Bootstrap
from ..common.cells import csv_text, fmt, split_reached
from ..config.settings import AXES, SPEC, WIDTH, GridPoint, default_names, grid  # noqa: F401  (grid: the sweep's, re-exported)
from .pipeline import by_file, detection_jobs, family_header, family_settings, score_subset, signature
from ..common.audio import SAMPLE_RATE
from ..tasks import FAMILIES, SUBSETS, family, metric_table, swept
from ..tree.load import load_tree
from ..vad import SpeechDetector
from ..vad.silero import samples_to_us

def _point_record(point: GridPoint, subset: str, metrics: dict, extra: dict) -> dict:
    """One grid point: its settings, the counts its task's SWEEP takes from the aggregate, the metrics, and of each
    of its family's entries (v1.5's control) the lines the entry's `sweep` keeps."""
    record = {"settings": {**asdict(point), "neg_threshold": point.rule.neg_threshold}, "spec_settings": point.is_spec,
              "counts": SUBSETS[subset].task.swept.counts_of(extra)}
    if "min_observable_s" in extra:
        record["min_observable_s"] = extra["min_observable_s"]
    record["metrics"] = metrics
    for entry in family(subset).entries:
        if entry.key not in extra:  # a task of the family without this entry
            continue
        lines = entry.lines(extra[entry.key])
        record[entry.key] = {name: {k: lines[name][k] for k in ("difference", "p", "p_holm", "marker")}
                             for name in entry.sweep}
    return record


def _range(records: list[dict], name: str) -> dict:
    """Smallest and largest value over the grid; for latencies, of the median and of p90."""
    def span(values):
        vals = [v for v in values if v is not None]
        finite = [v for v in vals if v != NOT_REACHED]
        if not vals:
            return None
        hi = NOT_REACHED if NOT_REACHED in vals else max(finite)
        return [min(finite) if finite else NOT_REACHED, hi]

    ms = [r["metrics"][name] for r in records]
    out = {"value": span([m["value"] for m in ms])}
    if ms[0]["kind"] == "latency_quantiles":
        out["p90"] = span([m["p90"] for m in ms])
    return out


def swept_subsets() -> list[str]:
    """The subsets a sweep can sweep (fdbu.tasks.swept)."""
    return swept()


MAX_WORK = 1_000_000  # grid points x swept files without sweep.allow_large (1000 points x 1000 files)


def chosen(root: Path, subset: str | None = None, manifest=None) -> str:
    """The subset swept in the tree at `root`: `subset`, else its first with speech detection (from manifest.json
    alone, before any work; `manifest` when it is read already); refused when the tree has none of it."""
    from ..tree.load import read_manifest

    present = {s.subset for s in (manifest or read_manifest(root)).samples}
    name = subset if subset is not None else next((n for n in swept_subsets() if n in present), None)
    if name is None or name not in present:
        what = name or f"{' or '.join(swept_subsets())} (the subsets with speech detection)"
        raise FdbuError(str(root), "manifest.json", f"has no {what} samples to sweep")
    return name


def check_size(roots: list[Path], points: list[GridPoint], allow_large: bool, subset: str | None = None) -> None:
    """A sweep's time and memory grow with points x files (each point re-derives and bootstraps every file's
    outcomes): beyond MAX_WORK it is refused before any work unless sweep.allow_large=true, not left to run
    for hours or fail for memory at the end. The files are those of the subset each tree sweeps (both runs of a
    v1.5 sample)."""
    from ..tree.load import read_manifest

    files = 0
    for r in roots:
        m = read_manifest(r)
        name = chosen(r, subset, m)
        files += sum(len(SUBSETS[name].task.detected) for s in m.samples if s.eligible and s.subset == name)
    if len(points) * files > MAX_WORK and not allow_large:
        raise FdbuError("config", None, f"the sweep is {len(points)} points x {files} files = {len(points) * files}, "
                        f"more than {MAX_WORK}; pass sweep.allow_large=true to run it")


def sweep_tree(root: Path, detector: SpeechDetector, boot: Bootstrap, points: list[GridPoint], subset: str,
               groups: dict | None = None) -> dict:
    """One tree over the grid: `subset` (`chosen`, by `sweep`) at every point."""
    tree = load_tree(root, {subset})
    selected = tree.subset(subset)
    kind = SUBSETS[subset].task
    eligible = [s for s in selected if s.eligible]
    jobs = detection_jobs(kind.detected, eligible)
    entries = detector.guard(detector.probabilities(jobs), jobs, [p.rule for p in points])
    records = []
    # each setting's segments and metrics: a bar of its own (a 25-point grid took 18 s with nothing on screen)
    with Bar(total=len(points), unit="setting", desc=f"sweep: {root.name}",
             disable=None if detector.progress else True) as bar:  # None: on a terminal only
        for point in points:
            found = [samples_to_us(st, SAMPLE_RATE) for st in detector.stamps(entries, jobs, point.rule)]
            segs = by_file(found, kind.detected, len(eligible), subset)
            _, metrics, extra = score_subset(kind, selected, boot, segs, groups)
            records.append(_point_record(point, subset, metrics, extra))
            bar.update()
    return {"subset": subset,
            "inputs": {"manifest.json": tree.manifest_sha256, "asr.json": tree.asr_sha256},
            "counts": {"selected": len(selected), "eligible": len(eligible)},
            "points": records, "ranges": {m.name: _range(records, m.name) for m in metric_table(subset, _header(
                subset, groups))}}


def _header(subset: str, groups: dict | None) -> dict:
    """What a unified.json of `subset` records of its family's settings (the metric table may depend on them)."""
    settings = family_settings(family(subset), groups or {})
    return {} if settings is None else {family(subset).settings.key: settings.header()}  # type: ignore[union-attr]


def sweep(roots: list[Path], detector: SpeechDetector, boot: Bootstrap, points: list[GridPoint],
          names: list[str] | None = None, subset: str | None = None, groups: dict | None = None) -> dict:
    """Every tree over the grid; `names` name the systems in tables and figures (default: folder names); `subset`
    the one swept (default: each tree's first with speech detection, v1.0's interruption before v1.5's: all trees
    must sweep the same one, checked before any work); `groups` holds the families' settings (group key ->
    settings: a v1.5 subset's overlap.*)."""
    names = list(names) if names is not None else default_names([str(r) for r in roots])
    swept = {name: chosen(Path(r), subset) for r, name in zip(roots, names)}
    if len(set(swept.values())) > 1:
        raise FdbuError("config", None, "the trees' first swept subsets differ ("
                        + ", ".join(f"{n}: {s}" for n, s in swept.items()) + "); name one with sweep.subset=NAME")
    head = signature(detector, boot, vad_settings=False)  # the VAD settings are the grid's points
    head["kind"] = "sweep"
    head["speech_detection"] = {k: v for k, v in head["speech_detection"].items() if k != "settings"}
    head["grid"] = {"points": len(points), **{k: sorted({getattr(p, k) for p in points}) for k in AXES}}
    # the swept subset's family's settings group, as in unified.json (not its definitions' name)
    family_header(head, [family(next(iter(swept.values())))], groups or {}, definitions=False)
    head["trees"] = [{"name": name, **sweep_tree(Path(r), detector, boot, points, swept[name], groups)}
                     for r, name in zip(roots, names)]
    if len(roots) > 1:
        head["rankings"] = rankings(head["trees"])
    return head


def _key(m: dict) -> float | None:
    v = m["value"]
    return float("inf") if v == NOT_REACHED else v


def weak_order(names: list[str], values: list) -> list[list[str]] | None:
    """The systems grouped by equal value, lowest first ("not reached" highest); None when one has no value."""
    if any(v is None for v in values):
        return None
    return [[n for n, v in zip(names, values) if v == level] for level in sorted(set(values))]


def order_text(groups: list[list[str]]) -> str:
    """mixed < prompt = slow: ties shown as ties."""
    return " < ".join(" = ".join(g) for g in groups)


def rankings(trees: list[dict]) -> dict:
    """For every metric: the order of the systems at each grid point (ties as ties), and whether it holds at
    every point. A point where a system has no value (no exercised sample) has no order."""
    names = [t["name"] for t in trees]
    out = {}
    for name in trees[0]["ranges"]:
        seen: dict[str, int] = {}
        undefined = 0
        for k in range(len(trees[0]["points"])):
            groups = weak_order(names, [_key(t["points"][k]["metrics"][name]) for t in trees])
            if groups is None:
                undefined += 1
                continue
            text = order_text(groups)
            seen[text] = seen.get(text, 0) + 1
        orders = sorted(seen.items(), key=lambda kv: (-kv[1], kv[0]))
        out[name] = {"better": trees[0]["points"][0]["metrics"][name]["better"],
                     "holds": undefined == 0 and len(orders) == 1,
                     "orders": [{"order": text, "points": count} for text, count in orders],
                     "undefined_points": undefined}
    return out


def _ranking_line(name: str, r: dict) -> str:
    better = {"lower": "lower is better", "higher": "higher is better"}.get(r["better"], "context")
    if r["holds"]:
        return f"  {name} ({better}): holds at every point: {r['orders'][0]['order']}"
    parts = [f"{o['order']} at {o['points']}" for o in r["orders"]]
    if r["undefined_points"]:
        parts.append(f"no order at {r['undefined_points']} (a system without a value)")
    return f"  {name} ({better}): changes: " + "; ".join(parts)


LABELS = {"threshold": ("thr", "threshold", ""), "neg_threshold": ("neg", "neg threshold", ""),
        "min_silence_duration_ms": ("min_sil", "min silence", " ms"), "min_speech_duration_ms": ("min_sp", "min speech", " ms"),
        "speech_pad_ms": ("pad", "padding", " ms")}


def _axis(value: float, key: str) -> str:
    return f"{value:.2f}" if key in ("threshold", "neg_threshold") else f"{value:.0f}"


def table(result: dict, paths: list | None = None) -> str:
    """The console: per tree, a line saying what was swept and what held, then three tables of at most 80 columns
    (the outcome counts, the shares, the latencies and the pooled ratio), each row a grid point by its swept
    settings, and a legend of the short names; `paths` (the trees as typed) are shown beside the names."""
    lines = []
    swept = result["trees"][0]["subset"]
    declared = SUBSETS[swept].task.swept
    shown = {n: label for n, label in declared.shown.items() if n in result["trees"][0]["ranges"]}
    count_labels = declared.count_labels
    entries = [(e.key, e.sweep) for e in family(swept).entries if e.sweep]  # v1.5: the control's headline lines
    for k, t in enumerate(result["trees"]):
        kinds = {n: t["points"][0]["metrics"][n]["kind"] for n in shown}
        shares = [n for n in shown if kinds[n] == "share"]
        # three tables of metrics, each within 80 columns beside three swept settings
        groups = [shares[:5], shares[5:] + [n for n in shown if kinds[n] == "pooled_ratio"],
                  [n for n in shown if kinds[n] == "latency_quantiles"]]
        where = f" ({paths[k]})" if paths else ""
        points = t["points"]
        values = {a: sorted({p["settings"][a] for p in points}) for a in LABELS}
        swept = [a for a in LABELS if len(values[a]) > 1]  # the neg threshold moves with the threshold or its offset
        held = [f"{LABELS[a][1]} {_axis(values[a][0], a)}{LABELS[a][2]}" for a in LABELS if a not in swept]
        lines += ["", f"{t['name']}{where}: {t['subset']}, {t['counts']['eligible']} eligible of "
                      f"{t['counts']['selected']} selected",
                  f"  swept: {', '.join(f'{LABELS[a][1]} ({len(values[a])})' for a in swept) or 'nothing'}"
                  f"{' (neg threshold = threshold - offset)' if 'neg_threshold' in swept else ''}; held: "
                  f"{', '.join(held) or 'nothing'}; only speech detection changes, so pause handling and turn-taking "
                  "(words only) are not swept"]
        head = "    " + " ".join(f"{LABELS[a][0]:>7}" for a in swept)

        def row(p, cells, swept=swept):  # the spec's point starred after the indent, so every row starts alike
            star = "*" if p["spec_settings"] else " "
            return f"  {star} " + " ".join(f"{_axis(p['settings'][a], a):>7}" for a in swept) + " | " + cells

        lines.append(head + " | " + " ".join(f"{v:>6}" for v in count_labels.values()))
        lines += [row(p, " ".join(f"{p['counts'][c]:>6d}" for c in count_labels)) for p in points]
        for group in [g for g in groups if g]:
            width = max(9, *(len(shown[n]) for n in group)) + (2 if kinds[group[0]] == "latency_quantiles" else 0)
            lines.append(head + " | " + " ".join(f"{shown[n]:>{width}}" for n in group))
            lines += [row(p, " ".join(f"{fmt(p['metrics'][n]['value']):>{width}}" for n in group)) for p in points]
        for key, labels in [(k, v) for k, v in entries if k in points[0]]:  # a family's entry's lines, as compare's
            lines.append(head + " | " + " ".join(f"{v:>20}" for v in labels.values()))
            lines += [row(p, " ".join(f"{_line_cell(p[key][n]):>20}" for n in labels)) for p in points]
        lines.append("  range over the grid: " + "; ".join(
            f"{n} [{fmt(t['ranges'][n]['value'][0])}, {fmt(t['ranges'][n]['value'][1])}]"
            for n in shown if t["ranges"][n]["value"]))
    if "rankings" in result:
        lines += ["", "order of the systems over the grid (lowest value first, = a tie; 'not reached' highest):"]
        lines += [_ranking_line(n, r) for n, r in result["rankings"].items()]
    lines.append(f"\n* the spec's settings (threshold {SPEC['threshold']}, min silence {SPEC['min_silence_duration_ms']} ms, "
                 f"min speech {SPEC['min_speech_duration_ms']} ms, neg offset {SPEC['neg_threshold_offset']}, "
                 f"pad {SPEC['speech_pad_ms']} ms). " + "; ".join(f"{v}: {LABELS[k][1]}" for k, v in
                                                                   ((k, a[0]) for k, a in LABELS.items()))
                 + "; " + "; ".join(f"{v}: {k}" for k, v in count_labels.items())
                 + "; " + "; ".join(f"{v}: {k}" for k, v in shown.items()) + " (medians: stop_med_s, resp_med_s)"
                 + "".join("; " + "; ".join(f"{v}: {k} (event - clean, * Holm p < alpha)" for k, v in labels.items())
                           for _, labels in entries))
    return "\n".join(lines)


def _line_cell(line: dict) -> str:
    """An entry's line in a sweep table: the difference, * where marked."""
    from ..common.cells import difference_text

    d = line["difference"]
    return difference_text({**d, "interval": None}) + ("*" if line["marker"] else "")


def counts_of(subset: str) -> tuple[str, ...]:
    """sweep.csv's count columns for a swept subset (its task's SWEEP)."""
    return SUBSETS[subset].task.swept.counts


def csv_rows(result: dict) -> list[dict]:
    """One row per tree and grid point, typed (sweep.csv's columns; the API's DataFrame)."""
    names = list(result["trees"][0]["ranges"])
    counts = counts_of(result["trees"][0]["subset"])
    rows = []
    for t in result["trees"]:
        for r in t["points"]:
            s, c = r["settings"], r["counts"]
            row = {"system": t["name"], **{k: s[k] for k in ("threshold", "neg_threshold", "min_silence_duration_ms",
                                                               "min_speech_duration_ms", "speech_pad_ms")},
                   "spec_settings": r["spec_settings"], **{k: c[k] for k in counts}}
            for n in names:
                m = r["metrics"][n]
                iv = m["interval"] or [None, None]
                row.update({f"{n}_value": m["value"], f"{n}_lo": iv[0], f"{n}_hi": iv[1], f"{n}_p90": m.get("p90")})
            for n, line in entry_lines(r):  # v1.5's control: event - clean, +-inf kept (a flag beside each)
                d = line["difference"]
                iv, flags = d["interval"] or [None, None], d["interval_flags"] or [None, None]
                row.update({f"{n}_diff": d["value"], f"{n}_diff_flag": d["value_flag"], f"{n}_diff_lo": iv[0],
                            f"{n}_diff_lo_flag": flags[0], f"{n}_diff_hi": iv[1], f"{n}_diff_hi_flag": flags[1],
                            f"{n}_p": line["p"], f"{n}_p_holm": line["p_holm"], f"{n}_marker": line["marker"]})
            rows.append(row)
    return rows


def entry_lines(point: dict) -> list[tuple[str, dict]]:
    """(name, line) of every family entry's lines a grid point keeps (`_point_record`)."""
    keys = [e.key for f in FAMILIES.values() for e in f.entries if e.sweep]
    return [(n, line) for key in keys for n, line in point.get(key, {}).items()]


def to_csv(result: dict) -> str:
    """sweep.csv: csv_rows, every number a number: a latency's value, interval and p90 empty where not reached, a
    `<column>_not_reached` flag beside each (as compare.csv and leaderboard.csv, and the API's DataFrame)."""
    reach = {f"{m.name}_{part}" for m in metric_table(result["trees"][0]["subset"], result)
             if m.kind == "latency_quantiles" for part in ("value", "lo", "hi", "p90")}
    rows = []
    for row in csv_rows(result):
        out: dict = {}
        for k, v in row.items():
            if k in reach:
                out[k], out[f"{k}_not_reached"] = split_reached(v)
            else:
                out[k] = v
        rows.append(out)
    buf = io.StringIO()
    w = csv.DictWriter(buf, list(rows[0]), lineterminator="\n")
    w.writeheader()
    for row in rows:
        w.writerow({k: "" if v is None else csv_text(v) if k == "system" else v for k, v in row.items()})
    return buf.getvalue()


HEATMAPS = ("sweep-heatmaps.png", "sweep-heatmaps.pdf")


def names(plot: bool = True) -> list[str]:
    return ["sweep.json", "sweep.csv"] + (list(HEATMAPS) if plot else [])


def outputs(out: Path, plot: bool = True) -> Outputs:
    """`fdbu sweep`'s outputs in `out`, checked before any work; sweep.json is their header."""
    return Outputs(out, "sweep", names(plot), head="sweep.json")


def files(result: dict, plot: bool = True, width: str = WIDTH, progress: bool = False) -> dict[str, bytes]:
    out = {"sweep.json": dumps(result).encode(), "sweep.csv": to_csv(result).encode()}
    if plot:
        from ..figures.sweep import sweep_heatmaps

        figure = sweep_heatmaps(result, spec=SPEC, width=width, progress=progress)
        for name in HEATMAPS:
            out[name] = figure[name.rsplit(".", 1)[1]]
    return out


def write(result: dict, out: Path, plot: bool = True) -> list[Path]:
    return outputs(out, plot).commit(files(result, plot))
