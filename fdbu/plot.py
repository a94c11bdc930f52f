"""Response-latency curves F(t) for turn-taking and interruption, from the per-sample rows.

F(t) is the share of the population (eligible samples for turn-taking, exercised ones
for interruption) with a response latency of at most t; non-responders never arrive,
so a curve that stays below 0.5 is a median that is not reached.
"""
from __future__ import annotations

import io
import math
from typing import Any

import numpy as np

from .settings import ALPHA, NOT_REACHED, WIDTH, WIDTHS

MARKED, FEW = "*", "\u25cb"  # the forest's decisions: Holm-adjusted p < alpha; too few pairs to decide (a circle,
# not a dash: a dash reads as a minus sign beside a difference, and as a hyphen where the title wraps)
from .tasks import SUBSETS, metric_table

MARKS_S = (1, 2, 5)  # the response_rate_ks marks


def _held(values: np.ndarray) -> np.ndarray:
    """A step curve's values from 0, held at the last one to the plot's edge."""
    return np.concatenate([[0.0], values, [values[-1] if len(values) else 0.0]])


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


# no timestamp or version stamp: the same figure gives the same bytes
METADATA = {"png": {"Software": None}, "pdf": {"Creator": None, "Producer": None, "CreationDate": None}}


def _save(fig, formats=("png", "pdf"), tight: bool = True) -> dict[str, bytes]:
    """The figure as PNG and PDF bytes, without dates or version stamps (the same figure gives the same bytes)."""
    if tight:
        fig.tight_layout()
    out = {}
    for ext in formats:
        buf = io.BytesIO()
        fig.savefig(buf, format=ext, metadata=METADATA[ext])
        out[ext] = buf.getvalue()
    _pyplot().close(fig)
    return out


FONT_PT = {"column": 7.0, "page": 8.0}  # at the printed width: never below 7 pt
PANEL_IN = 2.5  # one panel's height


def _style(width: str):
    """Font sizes for a figure printed at `width` (column or page): every text at least 7 pt."""
    if width not in WIDTHS:
        raise ValueError(f"width {width!r}: choose column or page")
    pt = FONT_PT[width]
    return _pyplot().rc_context({"font.size": pt, "axes.titlesize": pt + 0.5, "axes.labelsize": pt,
                                 "xtick.labelsize": pt, "ytick.labelsize": pt, "legend.fontsize": pt,
                                 "figure.titlesize": pt + 1, "pdf.fonttype": 42})


def _wrap(text: str, width: str, share: float = 1.0) -> str:
    """Text wrapped to the printed width (a `share` of it), lines of at most as many characters as fit at 7-8 pt."""
    import textwrap

    chars = int(WIDTHS[width] * share * 72 / (FONT_PT[width] * 0.6))
    return "\n".join(textwrap.fill(line, chars) for line in text.split("\n"))


def latency_values(task, comps: list) -> tuple[Any, list[np.ndarray]]:
    """The task's latency metric (`Task.latency`) and each system's values (int64 microseconds, INF for never) over
    the samples its population (`over`) keeps in every system: what a latency curve draws, for score's one system
    and compare's several."""
    module = task.metric_module
    metric = next(m for m in module.METRICS if m.name == task.latency)
    mask = np.logical_and.reduce([module.populations(c)[metric.over] for c in comps])
    return metric, [np.asarray(metric.values(c), np.int64)[mask] for c in comps]


def score_curves(rows: list[dict], name: str, unified: dict | None = None) -> list[dict]:
    """One system's F(t) per subset whose task names a latency metric (`Task.latency`), over that metric's samples,
    with its pointwise bootstrap band (unified.json's draw; the spec's without one)."""
    from .metrics.paired import cdf_band
    from .metrics.stats import Bootstrap
    from .settings import RESAMPLES, SEED

    b = (unified or {}).get("bootstrap") or {"resamples": RESAMPLES, "seed": SEED}
    boot = Bootstrap(b["resamples"], b["seed"])
    out = []
    for subset, entry in SUBSETS.items():
        task = entry.task
        eligible = [r for r in rows if r["subset"] == subset and r["eligible"]]
        if task.latency is None or not task.scored or not eligible:
            continue
        metric, (lat,) = latency_values(task, [task.metric_module.from_rows(eligible)])
        if not len(lat):
            continue
        horizon = ((unified or {}).get("subsets", {}).get(subset) or {}).get("min_observable_s")
        out.append({"subset": subset, "label": task.label, "over": metric.over,
                    "horizon_s": horizon if isinstance(horizon, (int, float)) else None,
                    "systems": [{"name": name, **cdf_band(lat, boot)}]})
    return out


def latency_curves(rows: list[dict], name: str = "system", unified: dict | None = None,
                   width: str = WIDTH) -> dict[str, bytes]:
    """`fdbu score`'s response-latency curves F(t) with their bands (PNG and PDF)."""
    return compare_latency_curves(score_curves(rows, name, unified), width=width)


STOP_CURVES = {"title": "Stop curves F(t), event run vs clean run over the matched pairs, 95% bands",
               "ylabel": "share stopped by then", "marks_s": (0.5, 1, 2), "none": "no v1.5 subset with matched pairs",
               "horizon": "the shortest capture after o_s"}


def stop_curves(rows: list[dict], name: str, unified: dict, width: str = WIDTH) -> dict[str, bytes]:
    """v1.5's stop curves (README: Definition 58): per subset, F(t), the share of the control's pairs whose speech
    covering o_s has ended t seconds after o_s, in the event run and in the clean run, each with its pointwise
    bootstrap band (unified.json's draw). The gap between the curves is what the event caused (PNG and PDF)."""
    from .metrics import overlap
    from .metrics.paired import cdf_band
    from .metrics.stats import Bootstrap

    b = unified["bootstrap"]
    boot = Bootstrap(b["resamples"], b["seed"])
    curves = []
    for subset, entry in SUBSETS.items():
        eligible = [r for r in rows if r["subset"] == subset and r["eligible"]]
        if entry.task.metrics is not overlap or not eligible:
            continue
        c = overlap.from_rows(eligible, subset, unified)
        pairs = c.pairs
        if not pairs.any():
            continue
        horizon = int((c.T_us - c.o_s)[pairs].min())  # beyond the shortest capture after o_s, F is a lower bound
        curves.append({"subset": subset, "label": entry.task.label, "over": "pairs", "horizon_s": horizon / 1e6,
                       "systems": [{"name": f"{run} run", **cdf_band(np.ascontiguousarray(r.stop_us[pairs]), boot)}
                                   for run, r in (("event", c.event), ("clean", c.clean))]})
    marks = tuple(k / 1e6 for k in overlap.ControlSettings.of(unified).within_us)
    return compare_latency_curves(curves, width, {**STOP_CURVES, "subject": name, "marks_s": marks})


def _digits(values, lo: int = 3, hi: int = 5) -> int:
    """The fewest decimals (3, as the console prints, up to 5) that print every distinct value of a panel group
    differently, so no two cells of different colour read the same."""
    distinct = sorted({v for v in values if isinstance(v, float) and math.isfinite(v)})
    for d in range(lo, hi + 1):
        if len({f"{v:.{d}f}" for v in distinct}) == len(distinct):
            return d
    return hi


def _grid_values(tree: dict, name: str, thr: list, sil: list, fixed: dict) -> np.ndarray:
    """The metric over threshold x min silence at the fixed other settings: NaN for no value, inf for not reached."""
    grid = np.full((len(thr), len(sil)), np.nan)
    for p in tree["points"]:
        st = p["settings"]
        if any(st[k] != v for k, v in fixed.items()):
            continue
        value = _number(p["metrics"][name]["value"])
        grid[thr.index(st["threshold"]), sil.index(st["min_silence_duration_ms"])] = np.nan if value is None else value
    return grid


def _number(v) -> float | None:
    """A recorded value as a number: not reached is +inf, no value None."""
    return math.inf if v == NOT_REACHED else None if v is None else float(v)


def _spec_value(tree: dict, name: str, spec: dict):
    """The metric at the spec's settings when the grid has them (else None)."""
    for p in tree["points"]:
        if all(p["settings"][k] == v for k, v in spec.items()):
            return _number(p["metrics"][name]["value"])
    return None


def sweep_heatmaps(result: dict, spec: dict, width: str = WIDTH) -> dict[str, bytes]:
    """Every interruption metric over threshold x minimum silence, a panel per system (and per padding when the
    padding is swept). Colour: the difference from the system's value at the spec's settings, on one diverging
    scale per metric, blue where better and red where worse by the metric's direction (purple/orange for context
    metrics); the numbers are the values, one format per metric; the spec's cell outlined; not reached cells and
    panels grey (PNG and PDF)."""
    from matplotlib.colors import Normalize
    from matplotlib.patches import Rectangle

    plt = _pyplot()
    trees = result["trees"]
    table = metric_table(trees[0]["subset"], result)
    settings = [p["settings"] for p in trees[0]["points"]]
    pads = sorted({st["speech_pad_ms"] for st in settings})
    fixed = {}
    for k in ("neg_threshold_offset", "min_speech_duration_ms"):  # the spec's value on each other axis when the grid has it
        values = sorted({st[k] for st in settings})
        fixed[k] = spec[k] if spec[k] in values else values[0]
    thr = sorted({st["threshold"] for st in settings})
    sil = sorted({st["min_silence_duration_ms"] for st in settings})
    per_group = len(trees) * len(pads)  # panels per metric
    fit = max(1, int(WIDTHS[width] // 2.2))  # panels about 2 in wide: a value per cell fits at 7 pt (page 3, column 1)
    groups_per_row = max(1, fit // per_group)
    cols = groups_per_row * per_group
    nrows = math.ceil(len(table) / groups_per_row)
    fig_w = WIDTHS[width] if cols <= fit else WIDTHS[width] * cols / fit
    style = "page" if fig_w >= WIDTHS["page"] else width
    names = ", ".join(t["name"] for t in trees)
    pad_text = f"pad {', '.join(f'{p:g}' for p in pads)} ms" if len(pads) > 1 else f"pad {pads[0]:g} ms"
    heading = _wrap(f"{trees[0]['subset']}: {names} over the VAD grid (neg offset {fixed['neg_threshold_offset']:g}, "
                    f"min speech {fixed['min_speech_duration_ms']:g} ms, {pad_text}); colour: the difference from the value at "
                    "the spec's settings (outlined), blue better, red worse (context metrics: purple up, orange down); "
                    "n/r: not reached", style, fig_w / WIDTHS[style])
    panel_h = 1.7
    pt = FONT_PT[width]
    top_in = (heading.count("\n") + 1) * 1.35 * pt / 72 + 0.5  # the title's lines, then the panels' two-line titles
    fig_h = panel_h * nrows + top_in + 0.15
    with _style(width):
        fig, axes = plt.subplots(nrows, cols, figsize=(fig_w, fig_h), dpi=200, squeeze=False)
        fig.subplots_adjust(left=0.45 / fig_w, right=1 - 0.6 / fig_w, bottom=0.35 / fig_h, top=1 - top_in / fig_h,
                            wspace=0.55, hspace=0.8)  # a fixed layout: a layout engine costs seconds here
        for g, metric in enumerate(table):
            group = [axes[g // groups_per_row, (g % groups_per_row) * per_group + k] for k in range(per_group)]
            panels = [(t, pad) for t in trees for pad in pads]
            grids = [_grid_values(t, metric.name, thr, sil, {**fixed, "speech_pad_ms": pad}) for t, pad in panels]
            refs = [_spec_value(t, metric.name, spec) for t, _ in panels]
            sign = {"lower": -1.0, "higher": 1.0}.get(metric.better, 1.0)
            diffs = [np.where(np.isfinite(grid), grid - ref, np.nan) if ref is not None and math.isfinite(ref)
                     else np.full(grid.shape, np.nan) for grid, ref in zip(grids, refs)]
            reach = max([float(np.nanmax(np.abs(d))) for d in diffs if np.isfinite(d).any()], default=0.0) or 1e-9
            context = metric.better == "context"
            cmap = plt.get_cmap("PuOr" if context else "RdBu").copy()
            norm = Normalize(-reach, reach)
            values = [float(v) for grid in grids for v in grid.flat]
            digits = _digits(values)
            im = None
            for ax, (t, pad), grid, d in zip(group, panels, grids, diffs):
                kind = " (median)" if metric.kind == "latency_quantiles" else ""
                title = f"{metric.label}{kind}\n{t['name']}" + (f", pad {pad:g} ms" if len(pads) > 1 else "")
                ax.set_title(title, fontsize=pt)
                if not np.isfinite(grid).any():  # nothing reached anywhere: a grey panel that says so
                    ax.set_facecolor("0.85")
                    ax.set_xticks([]), ax.set_yticks([])
                    ax.text(0.5, 0.5, "not reached\nat any setting" if np.isinf(grid).any() else "no value",
                            ha="center", va="center", transform=ax.transAxes, color="0.3")
                    continue
                im = ax.imshow(sign * d, origin="lower", aspect="auto", cmap=cmap, norm=norm)
                for (i, j), v in np.ndenumerate(grid):
                    if not np.isfinite(v):
                        ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, color="0.85", lw=0))
                        ax.text(j, i, "n/r" if math.isinf(v) else "n/a", ha="center", va="center", fontsize=pt)
                        continue
                    shade = d[i, j]
                    r, gg, b, _ = cmap(norm(sign * shade)) if np.isfinite(shade) else (1, 1, 1, 1)
                    ink = "black" if 0.299 * r + 0.587 * gg + 0.114 * b > 0.5 else "white"
                    ax.text(j, i, f"{v:.{digits}f}", ha="center", va="center", fontsize=pt, color=ink)
                if pad == spec["speech_pad_ms"] and spec["threshold"] in thr and spec["min_silence_duration_ms"] in sil \
                        and all(fixed[k] == spec[k] for k in fixed):
                    ax.add_patch(Rectangle((sil.index(spec["min_silence_duration_ms"]) - 0.5, thr.index(spec["threshold"]) - 0.5),
                                           1, 1, fill=False, edgecolor="black", lw=1.6))
                ax.set_xticks(range(len(sil)), [f"{x:g}" for x in sil])
                ax.set_yticks(range(len(thr)), [f"{x:g}" for x in thr])
                ax.set_xlabel("min silence (ms)", labelpad=1)
                ax.set_ylabel("threshold", labelpad=1)
                ax.tick_params(length=2, pad=1)
            if im is not None and any(np.isfinite(d).any() for d in diffs):
                bar = fig.colorbar(im, ax=group, fraction=0.06 / len(group), pad=0.03, aspect=15)
                bar.set_label("value - spec" if context else "+ better, - worse", fontsize=pt, labelpad=1)
                bar.ax.tick_params(labelsize=pt, length=2, pad=1)
                bar.set_ticks([-reach, 0.0, reach] if reach > 1e-9 else [0.0])
                bar.ax.yaxis.set_major_formatter(  # digits bound now: a late-bound one formatted every bar as the last
                    lambda x, _, d=digits: "0" if x == 0 else f"{x:+.{max(1, d - 1)}f}")
        for ax in axes.flat[len(table) * per_group:]:
            ax.axis("off")
        fig.suptitle(heading, y=1 - 0.08 / fig_h)
        return _save(fig, tight=False)


STYLES = ("-", "--", ":", "-.")


def _marks(ax, horizon_s: float | None, xmax: float, marks_s=MARKS_S, horizon: str = "min_observable_s") -> list:
    """The 1, 2 and 5 s marks (`marks_s`) as lines, the median line, the region beyond the `horizon`
    (min_observable_s) shaded (F there is a lower bound); returns legend handles explaining the line and the
    shading."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    ax.set_xticks([k for k in range(0, int(xmax) + 1)])
    for k in marks_s:
        if k < xmax:
            ax.axvline(k, color="0.85", lw=0.7, zorder=0)
    ax.axhline(0.5, color="0.45", lw=0.8, ls=(0, (4, 3)), zorder=1)
    handles: list[Any] = [Line2D([], [], color="0.45", lw=0.8, ls=(0, (4, 3)), label="F = 0.5: the median")]
    if horizon_s is not None and horizon_s < xmax:
        ax.axvspan(horizon_s, xmax, color="0.9", zorder=0, lw=0)
        handles.append(Patch(color="0.9", label=f"shaded: after {horizon}, F is a lower bound"))
    return handles


RESPONSE_CURVES = {"title": "Response-latency curves F(t), 95% bands", "ylabel": "share responded by then",
                   "marks_s": MARKS_S, "none": "no subset with response latencies", "horizon": "min_observable_s"}


def compare_latency_curves(curves: list[dict], width: str = WIDTH, words: dict = RESPONSE_CURVES) -> dict[str, bytes]:
    """F(t) of every system on one axis per subset, with pointwise 95% bootstrap bands (PNG and PDF): side by side
    at page width, stacked at column width; the legend below the data. `words`: the title, the y label, the
    vertical marks and the empty figure's text (response latencies; v1.5's stop curves, `stop_curves`)."""
    plt = _pyplot()
    panels = max(1, len(curves))
    cols = (panels if panels <= 2 else 2) if width == "page" else 1  # more than two (v1.5's four): two a row
    rows = math.ceil(panels / cols)
    names = list(dict.fromkeys(s["name"] for c in curves for s in c["systems"]))
    names = [words["subject"]] if "subject" in words else names
    with _style(width):
        fig, axes = plt.subplots(rows, cols, figsize=(WIDTHS[width], PANEL_IN * rows + 0.9), dpi=200, squeeze=False,
                                 layout="constrained")
        colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        handles: dict[str, Any] = {}
        for ax, c in zip(axes.flat, curves):
            horizon = c["horizon_s"]
            xmax = 6.0 if horizon is None else min(max(horizon, 5.5), 10.0)
            for k, s in enumerate(c["systems"]):
                t = np.asarray(s["t_us"], np.float64) / 1e6
                keep = t <= xmax
                x = np.concatenate([[0.0], t[keep], [xmax]])
                y, lo, hi = (_held(np.asarray(s[key])[keep]) for key in ("F", "lo", "hi"))
                color, ls = colors[k % len(colors)], STYLES[k % len(STYLES)]
                ax.fill_between(x, lo, hi, step="post", color=color, alpha=0.13, lw=0)
                for edge in (lo, hi):
                    ax.step(x, edge, where="post", color=color, lw=0.5, alpha=0.6, ls=ls)
                line, = ax.step(x, y, where="post", color=color, lw=1.4, ls=ls)
                handles.setdefault(s["name"], line)
            for h in _marks(ax, horizon, xmax, words["marks_s"], words["horizon"]):
                handles.setdefault(h.get_label(), h)
            axis = SUBSETS[c["subset"]].task.latency_from if c["subset"] in SUBSETS else None
            ax.set(xlim=(0, xmax), ylim=(0, 1.02), xlabel=axis or "latency (s)",
                   ylabel=words["ylabel"])
            ns = ", ".join(f"{s['name']} {s['n']}" for s in c["systems"])
            bound = "" if horizon is None else f"; {words['horizon']} {horizon:g} s"
            ax.set_title(_wrap(f"{c['subset']}\nn: {ns}{bound}", width, 0.8 / cols))
        for ax in list(axes.flat)[len(curves):]:
            ax.axis("off")
        if not curves:
            axes.flat[0].text(0.5, 0.5, words["none"], ha="center", va="center")
        fig.suptitle(_wrap(f"{words['title']}: {', '.join(names) or 'no system'}", width))
        if handles:
            fig.legend(list(handles.values()), list(handles),  # each handle is kept under its own label
                       loc="outside lower center", ncol=1 if width == "column" else 2, frameon=False)
        return _save(fig, tight=False)


def _clip(x, flag, lo, hi):
    """A difference on the axis: +inf and -inf at the edges."""
    if flag == "+inf":
        return hi, True
    if flag == "-inf":
        return lo, True
    return x, False


def forest_panels(result: dict) -> list[tuple[str, str, list[str]]]:
    """(subset, part, metric names): per subset its outcome rates and ratios, its latency medians (seconds), and
    apart its context metrics (no better or worse)."""
    panels = []
    for subset in dict.fromkeys(s for p in result["pairs"] for s, e in p["subsets"].items() if "metrics" in e):
        first = next(p["subsets"][subset] for p in result["pairs"] if "metrics" in p["subsets"].get(subset, {}))
        parts: dict[str, list] = {"outcomes": [], "latency medians (s)": [], "context": []}
        for name, m in first["metrics"].items():
            part = "context" if m["better"] == "context" else \
                "latency medians (s)" if m["kind"] == "latency_quantiles" else "outcomes"
            parts[part].append(name)
        panels += [(subset, part, names) for part, names in parts.items() if names]
    return panels


def compare_forest(result: dict, width: str = WIDTH) -> dict[str, bytes]:
    """Paired differences b - a with their 95% intervals, a panel per subset and part (outcomes, latency medians,
    context); +-inf (one median not reached) as a labelled arrow at the edge; beside a pair's row its decision as
    on the console: * (Holm-adjusted p < alpha, the result's `marker`) or a circle (too few pairs to decide) (PNG and
    PDF)."""
    from matplotlib.ticker import MaxNLocator

    from .metrics.paired import too_few

    from .metrics.table import readable

    plt = _pyplot()
    panels = forest_panels(result)
    pairs = result["pairs"]
    alpha = result.get("comparison", {}).get("alpha", ALPHA)
    with _style(width):
        if not panels:
            fig, ax = plt.subplots(figsize=(WIDTHS[width], 1.2))
            ax.axis("off")
            ax.text(0.5, 0.5, "no subset compared", ha="center", va="center")
            return _save(fig)
        pt = FONT_PT[width]
        # the pairs' lines spread over 0.8 of a row, 1.6 text heights apart: their stars never stack
        row_in = max(0.2, 1.6 * pt / 72 * len(pairs) / 0.8)
        heights = [len(names) * row_in + 0.45 for _, _, names in panels]
        title = _wrap(f"Paired differences {', '.join(p['b'] + ' - ' + p['a'] for p in pairs)}, 95% intervals\n"
                      f"\u2193/\u2191: lower/higher is better; {MARKED}\u00a0Holm-adjusted p < {alpha:g}; "
                      f"{FEW}\u00a0too few pairs to decide; arrow: +-inf (one median not reached)", width)
        ncol = 1 if width == "column" else min(3, len(pairs))
        # the title's and the legend's lines on top of the panels, so the panels keep their rows' height
        above = (title.count("\n") + 1 + math.ceil(len(pairs) / ncol)) * 1.35 * pt / 72 + 0.25
        fig, axes = plt.subplots(len(panels), 1, figsize=(WIDTHS[width], sum(heights) + above), dpi=200,
                                 squeeze=False, gridspec_kw={"height_ratios": heights}, layout="constrained")
        colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        for ax, (subset, part, names) in zip(axes[:, 0], panels):
            diffs = [[p["subsets"].get(subset, {}).get("metrics", {}).get(n) for n in names] for p in pairs]
            finite = [abs(x) for row in diffs for m in row if m for x in
                      [m["difference"]["value"], *(m["difference"]["interval"] or [])] if isinstance(x, (int, float))]
            edge = max(max(finite, default=0.0) * 1.25, 0.1 if part.startswith("latency") else 0.05)
            for k, row in enumerate(diffs):
                offset = -(k - (len(pairs) - 1) / 2) * 0.8 / len(pairs)
                color = colors[k % len(colors)]
                for j, m in enumerate(row):
                    if m is None:
                        continue
                    d, y = m["difference"], len(names) - 1 - j + offset
                    if d["interval"] is not None:
                        ends = [_clip(x, f, -edge, edge) for x, f in zip(d["interval"], d["interval_flags"])]
                        ax.plot([ends[0][0], ends[1][0]], [y, y], color=color, lw=1.4, solid_capstyle="butt")
                    v, flagged = _clip(d["value"], d["value_flag"], -edge, edge)
                    if v is None:
                        ax.text(0, y, f" {d['value_flag'] or 'n/a'}", va="center", color=color)
                    elif flagged:
                        sign = 1 if v > 0 else -1
                        ax.annotate("", xy=(v, y), xytext=(v - sign * 0.3 * edge, y),
                                    arrowprops={"arrowstyle": "-|>", "color": color, "lw": 1.4})
                        ax.text(v - sign * 0.3 * edge, y, d["value_flag"], va="center", zorder=5,
                                ha="right" if sign > 0 else "left", color=color,
                                bbox={"boxstyle": "square,pad=0.1", "fc": "white", "ec": "none"})
                    else:
                        ax.plot(v, y, marker="o", color=color, ms=3.5)
                    mark = MARKED if m.get("marker") else FEW if too_few(m) else None
                    if mark:
                        ax.text(1.01, y, mark, transform=ax.get_yaxis_transform(), va="center", ha="left",
                                color=color, fontweight="bold")
            ax.axvline(0, color="0.4", lw=0.8)
            ax.set_xlim(-edge, edge)
            ax.set_ylim(-0.6, len(names) - 0.4)
            ax.set_yticks(range(len(names)), [f"{readable(n)} {_arrow(result, subset, n)}" for n in reversed(names)])
            ax.set_title(_wrap(f"{subset}: {part}", width, 0.55 if width == "column" else 0.7), loc="left")
            ax.xaxis.set_major_locator(MaxNLocator(5, symmetric=True, prune="both"))  # no label at the edges
            ax.tick_params(axis="y", length=0)
        handles = [plt.Line2D([], [], color=colors[k % len(colors)], marker="o", ms=3.5, lw=1.4,
                              label=f"{p['b']} - {p['a']}") for k, p in enumerate(pairs)]
        fig.legend(handles=handles, loc="outside lower center", ncol=ncol, frameon=False)
        fig.suptitle(title)
        return _save(fig, tight=False)


def _arrow(result: dict, subset: str, name: str) -> str:
    for p in result["pairs"]:
        m = p["subsets"].get(subset, {}).get("metrics", {}).get(name)
        if m:
            return {"lower": "\u2193", "higher": "\u2191"}.get(m["better"], "")
    return ""
