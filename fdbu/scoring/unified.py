"""Stage 5, score's outputs: unified.json, unified-samples.jsonl, the latency curves and the printed summary."""
from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import tasks
from ..common.atomic import dumps, sha256_bytes
from ..common.outputs import Outputs
from ..common.cells import fmt, interval_text, num
from .scored import ROWS_SHA256, SAMPLES, UNIFIED
from ..config.settings import WIDTH

if TYPE_CHECKING:  # the type only: writing a score's files needs nothing of the pipeline
    from .pipeline import Scored

__all__ = ["ROWS_SHA256", "SAMPLES", "UNIFIED"]  # the files' names, declared by their reader (fdbu.scoring.scored)
CURVES = ("latency-curves.png", "latency-curves.pdf")


def samples_jsonl(rows: list[dict]) -> str:
    return "".join(json.dumps(r, allow_nan=False, ensure_ascii=False) + "\n" for r in rows)


def family_figures() -> tuple[str, ...]:
    """Every registered family's figure files (v1.5's stop curves), which a score or a one-system report may write."""
    return tuple(name for f in tasks.FAMILIES.values() for fig in f.figures for name in fig.files)


def names(plot: bool = False) -> list[str]:
    return [UNIFIED, SAMPLES] + (list(CURVES) + list(family_figures()) if plot else [])


def outputs(out: Path, plot: bool = False) -> Outputs:
    """`fdbu score`'s outputs in `out`, checked before any work; unified.json is their header."""
    return Outputs(out, "score", names(plot), head=UNIFIED)


def files(scored: "Scored", plot: bool = False, name: str = "system", width: str = WIDTH,
          progress: bool = False) -> dict[str, bytes]:
    """The files of `fdbu score`; `name` titles the figure (the tree's folder name on the CLI). unified.json
    records the SHA-256 of the rows written beside it, so a reader (`fdbu.scoring.scored`) knows the two files are
    from one run."""
    rows = samples_jsonl(scored.rows).encode()
    out = {UNIFIED: dumps({**scored.unified, ROWS_SHA256: sha256_bytes(rows)}).encode(), SAMPLES: rows}
    if plot:
        out.update(figures(scored.rows, scored.unified, name, width, progress))
    return out


def figures(rows: list[dict], unified: dict, name: str = "system", width: str = WIDTH,
            progress: bool = False) -> dict[str, bytes]:
    """One system's figures by file name: its response-latency curves (CURVES: where a subset's task has a latency,
    or where no family of the tree draws a figure of its own) and each figure of the tree's families (v1.5's stop
    curves). Score and a one-system report draw the same, each figure a step of a bar on a terminal (seconds each on
    a full tree)."""
    from ..common.progress import figure_bar, figure_step
    from ..figures.plot import compare_latency_curves, latency_curves

    out: dict[str, bytes] = {}
    own = [fig for f in tasks.families_of(unified["subsets"]) for fig in f.figures]
    latency = not own or any(tasks.subset(s).task.latency for s in unified["subsets"])
    with figure_bar(latency + len(own), progress) as bar:
        if latency:
            figure = latency_curves(rows, name=name, unified=unified, width=width, tick=figure_step(bar, 0))
            out.update(zip(CURVES, (figure["png"], figure["pdf"])))
        for k, fig in enumerate(own, start=latency):
            curves, words = fig.curves(rows, unified)
            figure = compare_latency_curves(curves, width, {**words, "subject": name}, tick=figure_step(bar, k))
            out.update(zip(fig.files, (figure["png"], figure["pdf"])))
    return out


def write(scored: "Scored", out: Path | Outputs, plot: bool = False, name: str = "system",
          width: str = WIDTH) -> list[Path]:
    """unified.json and unified-samples.jsonl (and the curves) in `out`, as one unit; `out` may be the
    `outputs(...)` a command checked before its work."""
    return (out if isinstance(out, Outputs) else outputs(out, plot)).commit(files(scored, plot, name, width))


def _metric_line(name: str, m: dict) -> str:
    """A metric's row, at most 78 characters: an interval's not-reached ends are n/r (the value column spells it)."""
    count = f"{m['count']}/{m['n']}" if m["kind"] == "share" else str(m["count"])
    interval = "n/a" if m["interval"] is None else f"[{num(m['interval'][0])}, {num(m['interval'][1])}]"
    return f"  {name:<27} {m['better']:<7} {fmt(m['value']):>11}  {interval:<14} {count:>9}"


TABLE_HEAD = f"  {'metric':<27} {'better':<7} {'value':>11}  {'95% interval':<14} {'n':>9}"


def _after_table(metrics: dict) -> list[str]:
    """What does not fit a row: each share's bounds over all selected samples, each latency's p90."""
    bounds = [f"{name} {interval_text(m['selected_bounds'])}" for name, m in metrics.items() if m["kind"] == "share"]
    p90 = [f"{name} {fmt(m['p90'])}" for name, m in metrics.items() if "p90" in m]
    out = [f"  bounds over all selected samples: {'; '.join(bounds)}"] if bounds else []
    return out + ([f"  p90: {'; '.join(p90)}"] if p90 else [])


def transcripts_text(unified: dict) -> str:
    """Where the transcripts came from, for the console: `adopted (nvidia/parakeet-tdt-0.6b-v2, ...)`."""
    from ..config.settings import SOURCES

    t: Any = unified.get("transcripts") or {"source": "unrecorded", "model": None}
    detail = SOURCES.get(t.get("source"), str(t.get("source")))
    return f"{t.get('source')} ({t.get('model') or 'model not recorded'}; {detail})"


def summary(unified: dict) -> str:
    vad = unified["speech_detection"]
    st = vad["settings"]
    b = unified["bootstrap"]
    lines = [
        f"fdbu {unified['fdbu_version']} | {unified['definitions']} | silero-vad {vad['silero_vad_version']} "
        f"{vad['model_file']} sha256:{vad['model_sha256'][:12]} threshold {st['threshold']} "
        f"min_speech {st['min_speech_duration_ms']} ms min_silence {st['min_silence_duration_ms']} ms "
        f"pad {st['speech_pad_ms']} ms | bootstrap {b['resamples']} seed {b['seed']}",
        f"manifest.json sha256:{unified['inputs']['manifest.json'][:12]} | "
        f"asr.json sha256:{unified['inputs']['asr.json'][:12]} | transcripts: {transcripts_text(unified)}",
    ]
    for subset, entry in unified["subsets"].items():
        c = entry["counts"]
        head = (f"{subset}: selected {c['selected']} of {c['declared']} declared, eligible {c['eligible']} "
                f"(coverage {entry['coverage']:.3f})")
        if "exercised" in c:
            head += f", exercised {c['exercised']}"
        if "min_observable_s" in entry:
            head += f", min_observable_s {fmt(entry['min_observable_s'])}"
        lines += ["", head]
        if c.get("ineligible"):  # why coverage is below 1
            lines.append("  ineligible: " + "; ".join(f"{n} {reason}" for reason, n in c["ineligible_reasons"].items()))
        if "outcomes" in c:
            lines.append("  outcomes: " + ", ".join(f"{k} {v}" for k, v in c["outcomes"].items()))
        lines.append(TABLE_HEAD)
        lines += [_metric_line(name, m) for name, m in entry["metrics"].items()]
        lines += _after_table(entry["metrics"])
        for extra in tasks.family(subset).entries:  # a family's entries (v1.5's matched control)
            if extra.key in entry:
                lines += extra.console(entry[extra.key])
    for name, view in unified.get("views", {}).items():
        lines += view_lines(view, name)
    return "\n".join([*lines, "", LEGEND])


def view_lines(view: dict, name: str | None = None) -> list[str]:
    """Another benchmark's numbers (fdbu.views), under its own heading with its source and settings; a pooled share
    names the classes it pools (each part's label) and their subsets."""
    settings = ", ".join(f"{k} {'none' if v is None else fmt(v)}" for k, v in view["settings"].items())
    lines = ["", f"== {view['title']}'s terms, not the unified metrics ==", f"  source: {view['source']}",
             f"  settings: {settings}"]
    for subset, entry in view["subsets"].items():
        c = entry["counts"]
        lines += [f"{view['title']} on {subset}: eligible {c['eligible']} of {c['selected']} selected"
                  + "".join(f", {k} {v}" for k, v in c.items() if k not in ("selected", "eligible")), TABLE_HEAD]
        lines += [_metric_line(name, m) for name, m in entry["metrics"].items()]
    for pooled, m in view.get("pooled", {}).items():
        lines += [f"{view['title']} pooled over {_classes(name, m['over'])}:", _metric_line(pooled, m)]
        if m.get("classes"):
            interval = m.get("class_mean_interval")
            lines.append(f"  the mean of the classes' rates (each class weighing the same): "
                         f"{'n/a' if m['class_mean'] is None else fmt(m['class_mean'])}"
                         + (f" [{fmt(interval[0])}, {fmt(interval[1])}]" if interval else "") + "; "
                         + ", ".join(f"{label} {c['count']}/{c['n']}" for label, c in m["classes"].items()))
    return lines + [f"  not computable offline: {'; '.join(view['not_computable'])}"]


def _classes(view: str | None, subsets: list[str]) -> str:
    """`stay-silent (a, b), smooth-handoff (c)`: the classes a pooled share is over, each with its subsets."""
    from ..views import VIEWS, part_of

    if view not in VIEWS:
        return ", ".join(subsets)
    by: dict[str, list[str]] = {}
    for subset in subsets:
        part = part_of(VIEWS[view], subset)
        by.setdefault(part.label if part is not None and part.label else subset, []).append(subset)
    return ", ".join(f"{label} ({', '.join(subs)})" for label, subs in by.items())


LEGEND = ("better: lower or higher is better; context: describes the samples, neither better nor worse. 95% interval: "
          "Wilson for shares, percentile bootstrap for pooled ratios and latency medians. n: k/n for a share, the "
          "samples for the others; bounds: a share over all selected samples, every unknown outcome (ineligible, "
          "and not exercised where a metric is over the exercised samples) counted no, then yes. not reached (n/r in an interval): a latency "
          "median beyond what the captures show (docs: Definitions).")
