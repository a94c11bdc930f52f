"""Sensitivity sweep: interruption outcomes over a grid of VAD settings, from one pass of the model.

The Silero probabilities of every interruption output are computed once (or read from the
cache); each grid point only re-derives segments (numba) and outcomes. The guard runs for
every grid point's thresholds, so each point's segments are the reference path's under
that point's settings, and the point with the spec's settings reproduces unified.json.
"""
from __future__ import annotations

import csv
import io
from dataclasses import asdict
from pathlib import Path

from .atomic import dumps
from .outputs import Outputs
from .errors import FdbuError
from .metrics.stats import NOT_REACHED, Bootstrap
from .cells import csv_text, fmt
from .settings import AXES, SPEC, WIDTH, GridPoint, default_names, grid  # noqa: F401  (grid: the sweep's, re-exported)
from .pipeline import score_subset, signature
from .audio import SAMPLE_RATE
from .tasks import SUBSETS
from .tree import load_tree
from .vad import Job, SpeechDetector
from .vad.silero import samples_to_us

# the metrics a sweep table shows, with their column labels; sweep.json has every interruption metric
SHOWN = {"exercised_rate": "exercised", "speaking_at_end_rate": "spk@end", "response_rate_1s": "resp<=1s",
         "response_rate_2s": "resp<=2s", "response_rate_5s": "resp<=5s", "stop_latency_s": "stop_med_s",
         "response_latency_s": "resp_med_s", "no_response_rate": "no_resp",
         "speech_s_per_interruption_s": "speech/int", "restart_rate": "restart"}


def _point_record(point: GridPoint, metrics: dict, extra: dict) -> dict:
    return {"settings": {**asdict(point), "neg_threshold": point.rule.neg_threshold}, "spec_settings": point.is_spec,
            "counts": {"exercised": extra["exercised"], **extra["outcomes"]},
            "min_observable_s": extra["min_observable_s"], "metrics": metrics}


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
    """The subsets whose outcomes depend on speech detection in one file (the interruption subset; v1.5's two runs
    are not swept yet)."""
    return [name for name, s in SUBSETS.items() if s.task.speech_detection and len(s.task.detected) == 1]


MAX_WORK = 1_000_000  # grid points x swept files without sweep.allow_large (1000 points x 1000 files)


def check_size(roots: list[Path], points: list[GridPoint], allow_large: bool) -> None:
    """A sweep's time and memory grow with points x files (each point re-derives and bootstraps every file's
    outcomes): beyond MAX_WORK it is refused before any work unless sweep.allow_large=true, not left to run
    for hours or fail for memory at the end."""
    from .tree import read_manifest

    swept = swept_subsets()
    files = sum(s.eligible and s.subset in swept for r in roots for s in read_manifest(r).samples)
    if len(points) * files > MAX_WORK and not allow_large:
        raise FdbuError("config", None, f"the sweep is {len(points)} points x {files} files = {len(points) * files}, "
                        f"more than {MAX_WORK}; pass sweep.allow_large=true to run it")


def sweep_tree(root: Path, detector: SpeechDetector, boot: Bootstrap, points: list[GridPoint]) -> dict:
    tree = load_tree(root)
    subset = next((name for name in swept_subsets() if tree.subset(name)), None)
    if subset is None:
        raise FdbuError(str(root), "manifest.json", f"has no {' or '.join(swept_subsets())} samples to sweep")
    selected = tree.subset(subset)
    kind = SUBSETS[subset].task
    eligible = [s for s in selected if s.eligible]
    jobs = [Job.of(s) for s in eligible]
    entries = detector.guard(detector.probabilities(jobs), jobs, [p.rule for p in points])
    records = []
    for point in points:
        segs = [samples_to_us(st, SAMPLE_RATE) for st in detector.stamps(entries, jobs, point.rule)]
        _, metrics, extra = score_subset(kind, selected, boot, segs)
        records.append(_point_record(point, metrics, extra))
    return {"subset": subset,
            "inputs": {"manifest.json": tree.manifest_sha256, "asr.json": tree.asr_sha256},
            "counts": {"selected": len(selected), "eligible": len(eligible)},
            "points": records, "ranges": {m.name: _range(records, m.name) for m in kind.metric_module.METRICS}}


def sweep(roots: list[Path], detector: SpeechDetector, boot: Bootstrap, points: list[GridPoint],
          names: list[str] | None = None) -> dict:
    """Every tree over the grid; `names` name the systems in tables and figures (default: folder names)."""
    names = list(names) if names is not None else default_names([str(r) for r in roots])
    head = signature(detector, boot, vad_settings=False)  # the VAD settings are the grid's points
    head["kind"] = "sweep"
    head["speech_detection"] = {k: v for k, v in head["speech_detection"].items() if k != "settings"}
    head["grid"] = {"points": len(points), **{k: sorted({getattr(p, k) for p in points}) for k in AXES}}
    head["trees"] = [{"name": name, **sweep_tree(Path(r), detector, boot, points)} for r, name in zip(roots, names)]
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
COUNT_LABELS = {"not_exercised": "not_ex", "speaking_at_end": "s@end", "response": "resp", "no_response": "no_r"}


def _axis(value: float, key: str) -> str:
    return f"{value:.2f}" if key in ("threshold", "neg_threshold") else f"{value:.0f}"


def table(result: dict, paths: list | None = None) -> str:
    """The console: per tree, a line saying what was swept and what held, then three tables of at most 80 columns
    (the outcome counts, the shares, the latencies and the pooled ratio), each row a grid point by its swept
    settings, and a legend of the short names; `paths` (the trees as typed) are shown beside the names."""
    lines = []
    for k, t in enumerate(result["trees"]):
        kinds = {n: t["points"][0]["metrics"][n]["kind"] for n in SHOWN}
        shares = [n for n in SHOWN if kinds[n] == "share"]
        # three tables of metrics, each within 80 columns beside three swept settings
        groups = [shares[:5], shares[5:] + [n for n in SHOWN if kinds[n] == "pooled_ratio"],
                  [n for n in SHOWN if kinds[n] == "latency_quantiles"]]
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

        lines.append(head + " | " + " ".join(f"{v:>6}" for v in COUNT_LABELS.values()))
        lines += [row(p, " ".join(f"{p['counts'][c]:>6d}" for c in COUNT_LABELS)) for p in points]
        for group in [g for g in groups if g]:
            width = max(9, *(len(SHOWN[n]) for n in group)) + (2 if kinds[group[0]] == "latency_quantiles" else 0)
            lines.append(head + " | " + " ".join(f"{SHOWN[n]:>{width}}" for n in group))
            lines += [row(p, " ".join(f"{fmt(p['metrics'][n]['value']):>{width}}" for n in group)) for p in points]
        lines.append("  range over the grid: " + "; ".join(
            f"{n} [{fmt(t['ranges'][n]['value'][0])}, {fmt(t['ranges'][n]['value'][1])}]"
            for n in SHOWN if t["ranges"][n]["value"]))
    if "rankings" in result:
        lines += ["", "order of the systems over the grid (lowest value first, = a tie; 'not reached' highest):"]
        lines += [_ranking_line(n, r) for n, r in result["rankings"].items()]
    lines.append(f"\n* the spec's settings (threshold {SPEC['threshold']}, min silence {SPEC['min_silence_duration_ms']} ms, "
                 f"min speech {SPEC['min_speech_duration_ms']} ms, neg offset {SPEC['neg_threshold_offset']}, "
                 f"pad {SPEC['speech_pad_ms']} ms). " + "; ".join(f"{v}: {LABELS[k][1]}" for k, v in
                                                                   ((k, a[0]) for k, a in LABELS.items()))
                 + "; " + "; ".join(f"{v}: {k}" for k, v in COUNT_LABELS.items())
                 + "; " + "; ".join(f"{v}: {k}" for k, v in SHOWN.items()) + " (medians: stop_med_s, resp_med_s)")
    return "\n".join(lines)


COUNTS = ("exercised", "not_exercised", "speaking_at_end", "response", "no_response")


def csv_rows(result: dict) -> list[dict]:
    """One row per tree and grid point, typed (sweep.csv's columns; the API's DataFrame)."""
    names = list(result["trees"][0]["ranges"])
    rows = []
    for t in result["trees"]:
        for r in t["points"]:
            s, c = r["settings"], r["counts"]
            row = {"system": t["name"], **{k: s[k] for k in ("threshold", "neg_threshold", "min_silence_duration_ms",
                                                               "min_speech_duration_ms", "speech_pad_ms")},
                   "spec_settings": r["spec_settings"], **{k: c[k] for k in COUNTS}}
            for n in names:
                m = r["metrics"][n]
                iv = m["interval"] or [None, None]
                row.update({f"{n}_value": m["value"], f"{n}_lo": iv[0], f"{n}_hi": iv[1], f"{n}_p90": m.get("p90")})
            rows.append(row)
    return rows


def to_csv(result: dict) -> str:
    buf = io.StringIO()
    rows = csv_rows(result)
    w = csv.DictWriter(buf, list(rows[0]), lineterminator="\n")
    w.writeheader()
    for row in rows:
        w.writerow({k: "" if v is None else csv_text(v) if k == "system" else v for k, v in row.items()})
    return buf.getvalue()


HEATMAPS = ("sweep-heatmaps.png", "sweep-heatmaps.pdf")


def names(result_trees: int, plot: bool = True) -> list[str]:
    return ["sweep.json", "sweep.csv"] + (list(HEATMAPS) if plot else [])


def outputs(out: Path, trees: int, plot: bool = True) -> Outputs:
    """`fdbu sweep`'s outputs in `out`, checked before any work; sweep.json is their header."""
    return Outputs(out, "sweep", names(trees, plot), head="sweep.json")


def files(result: dict, plot: bool = True, width: str = WIDTH) -> dict[str, bytes]:
    out = {"sweep.json": dumps(result).encode(), "sweep.csv": to_csv(result).encode()}
    if plot:
        from .plot import sweep_heatmaps

        figure = sweep_heatmaps(result, spec=SPEC, width=width)
        for name in HEATMAPS:
            out[name] = figure[name.rsplit(".", 1)[1]]
    return out


def write(result: dict, out: Path, plot: bool = True) -> list[Path]:
    return outputs(out, len(result["trees"]), plot).commit(files(result, plot))
