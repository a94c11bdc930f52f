"""Response-latency curves F(t) for turn-taking and interruption, from the per-sample rows.

F(t) is the share of the population (eligible samples for turn-taking, exercised ones
for interruption) with a response latency of at most t; non-responders never arrive,
so a curve that stays below 0.5 is a median that is not reached.
"""
from __future__ import annotations

import functools
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
    """The figure as PNG and PDF bytes, without dates or version stamps (the same figure gives the same bytes). A list
    of figures (pages, each no taller than PAGE_IN, all of one width) gives a PDF of one page each and a PNG of the
    pages one under the other (a screen scrolls; a paper includes a page: \\includegraphics[page=2]{...})."""
    if isinstance(fig, list):
        return _save_pages(fig) if len(fig) > 1 else _save(fig[0], formats, tight)
    if tight:
        fig.tight_layout()
    out = {}
    for ext in formats:
        buf = io.BytesIO()
        fig.savefig(buf, format=ext, metadata=METADATA[ext])
        out[ext] = buf.getvalue()
    _pyplot().close(fig)
    return out


def _save_pages(figs: list) -> dict[str, bytes]:
    from matplotlib.backends.backend_pdf import PdfPages
    from matplotlib.image import imread, imsave

    pdf, images = io.BytesIO(), []
    with PdfPages(pdf, metadata=METADATA["pdf"]) as pages:
        for fig in figs:
            pages.savefig(fig)
            buf = io.BytesIO()
            fig.savefig(buf, format="png", metadata=METADATA["png"])
            images.append(imread(io.BytesIO(buf.getvalue()), format="png"))
            _pyplot().close(fig)
    png = io.BytesIO()
    imsave(png, np.concatenate(images, axis=0), format="png", metadata=METADATA["png"],  # type: ignore[arg-type]
           dpi=figs[0].dpi)  # None drops the version stamp, as savefig does
    return {"png": png.getvalue(), "pdf": pdf.getvalue()}


PAGE_IN = 9.0  # the tallest figure: a US-letter page's text height with 1 in margins (A4's is 9.7 in)


def _paginate(heights: list[float], above: float) -> list[list[int]]:
    """Items of these heights (inches) in order on pages of at most PAGE_IN with `above` inches on top of each;
    an item taller than a page alone on its own."""
    pages: list[list[int]] = [[]]
    used = above
    for i, h in enumerate(heights):
        if pages[-1] and used + h > PAGE_IN:
            pages.append([])
            used = above
        pages[-1].append(i)
        used += h
    return pages


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


COLOUR_RANGE = {"share": 0.05, "pooled_ratio": 0.05, "latency_quantiles": 0.25}  # the least difference (a share,
# a ratio, seconds) a heatmap's colour saturates at: a 0.0006 change stays pale; larger differences set the range
PANEL_H = 1.85  # a heatmap row: 1.1 in of cells, then its x label and the next row's two-line title
AXIS_IN = 0.62  # a heatmap panel's y label, tick labels and gap to the next panel


@functools.lru_cache(maxsize=4096)
def _text_in(text: str, pt: float) -> float:
    """The width (inches) of the widest line of `text` at `pt` in the figures' font (its glyphs' outlines)."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import TextPath

    font = FontProperties(size=pt)
    return max((TextPath((0, 0), line, prop=font).get_extents().width for line in text.split("\n") if line),
               default=0.0) / 72


def sweep_heatmaps(result: dict, spec: dict, width: str = WIDTH) -> dict[str, bytes]:
    """Every metric of the swept subset over threshold x minimum silence, a panel per system (and per padding when
    the padding is swept). Colour: the difference from the system's value at the spec's settings, blue where better
    and red where worse by the metric's direction (purple/orange for context metrics), on one diverging scale per
    metric from -r to r, r the largest difference or COLOUR_RANGE's for its kind, whichever is larger; the numbers
    are the values, one format per metric; the spec's cell outlined; not reached cells and panels grey. Exactly the
    printed width: as many panels a row as fit their cells' numbers (a metric's panels wrap to the next row; where
    not even one panel fits them, the numbers are left out and the title says so); rows beyond PAGE_IN go on further
    pages (PNG and PDF)."""
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
    panels = [(t, pad) for t in trees for pad in pads]
    grids = {m.name: [_grid_values(t, m.name, thr, sil, {**fixed, "speech_pad_ms": pad}) for t, pad in panels]
             for m in table}
    digits = {name: _digits([float(v) for g in gs for v in g.flat]) for name, gs in grids.items()}
    fig_w, pt = WIDTHS[width], FONT_PT[width]
    bar_in = 0.75  # each row's colour bar, its ticks and label
    shown = {f"{v:.{digits[n]}f}" for n, gs in grids.items() for g in gs for v in g.flat if np.isfinite(v)}
    cell = max(_text_in(text, pt) for text in shown) if shown else 0.2
    titles = max(_text_in(_heat_title(m, t, pad, pads), pt) for m in table for t, pad in panels) + 0.1
    need = max(len(sil) * (cell + 4 / 72), titles) + AXIS_IN  # 2 pt each side of a number; titles apart
    left = 0.45  # the first panel's y label and ticks; the others' take AXIS_IN each
    numbers = len(sil) * (cell + 4 / 72) <= fig_w - bar_in - left
    cols = max(1, int((fig_w - bar_in - left + AXIS_IN) // need)) if numbers else max(
        1, int((fig_w - bar_in - left + AXIS_IN) // (AXIS_IN + max(0.8, titles))))
    # a row per group of panels: each metric's panels, wrapped at `cols`
    rows = [(m, panels[i:i + cols], i) for m in table for i in range(0, len(panels), cols)]
    names = ", ".join(t["name"] for t in trees)
    pad_text = f"pad {', '.join(f'{p:g}' for p in pads)} ms"
    caption = (f"VAD grid; neg offset {fixed['neg_threshold_offset']:g}, min speech "
               f"{fixed['min_speech_duration_ms']:g} ms, {pad_text}" + ("" if numbers else "; no room for the values: "
                                                                       "sweep.csv"))
    def heading(more: str) -> str:
        return _wrap(f"{trees[0]['subset']}: {names}{more}\n{caption}", width)

    # the heading's lines (sized with room for a page number), then the panel titles
    top_in = (heading(" (99/99)").count("\n") + 1) * 1.35 * pt / 72 + 0.15 + 2 * 1.35 * pt / 72
    pages = _paginate([PANEL_H] * len(rows), top_in + 0.35 - (PANEL_H - 1.1))
    panel_w = (fig_w - left - bar_in - (cols - 1) * AXIS_IN) / cols
    figs = []
    with _style(width):
        for n, page in enumerate(pages):
            fig_h = PANEL_H * len(page) - (PANEL_H - 1.1) + top_in + 0.35
            fig, axes = plt.subplots(len(page), cols, figsize=(fig_w, fig_h), dpi=200, squeeze=False)
            fig.subplots_adjust(left=left / fig_w, right=1 - bar_in / fig_w, bottom=0.35 / fig_h, top=1 - top_in / fig_h,
                                wspace=AXIS_IN / panel_w, hspace=(PANEL_H - 1.1) / 1.1)  # fixed: a layout engine
            # costs seconds here; each row 1.1 in of cells, 0.6 in for its x label and the next row's title
            for r, row in enumerate(page):
                metric, group, first = rows[row]
                _heat_row(fig, axes[r], metric, group, grids[metric.name][first:first + len(group)], spec, fixed, thr,
                          sil, pads, digits[metric.name], numbers, width)
            more = f" ({n + 1}/{len(pages)})" if len(pages) > 1 else ""
            fig.suptitle(heading(more), y=1 - 0.08 / fig_h)
            figs.append(fig)
        return _save(figs, tight=False)


def _heat_title(metric, tree: dict, pad, pads: list) -> str:
    kind = " (median)" if metric.kind == "latency_quantiles" else ""
    return f"{metric.label}{kind}\n{tree['name']}" + (f", pad {pad:g} ms" if len(pads) > 1 else "")


def _heat_row(fig, axes, metric, group: list, grids: list, spec: dict, fixed: dict, thr: list, sil: list, pads: list,
              digits: int, numbers: bool, width: str) -> None:
    """One row of heatmap panels: `group`'s (tree, padding) panels of one metric, its colour bar at the row's end."""
    from matplotlib.colors import Normalize
    from matplotlib.patches import Rectangle

    plt = _pyplot()
    pt = FONT_PT[width]
    refs = [_spec_value(t, metric.name, spec) for t, _ in group]
    sign = {"lower": -1.0, "higher": 1.0}.get(metric.better, 1.0)
    diffs = [np.where(np.isfinite(grid), grid - ref, np.nan) if ref is not None and math.isfinite(ref)
             else np.full(grid.shape, np.nan) for grid, ref in zip(grids, refs)]
    largest = max([float(np.nanmax(np.abs(d))) for d in diffs if np.isfinite(d).any()], default=0.0)
    reach = max(largest, COLOUR_RANGE.get(metric.kind, 0.05))
    context = metric.better == "context"
    cmap = plt.get_cmap("PuOr" if context else "RdBu").copy()
    norm = Normalize(-reach, reach)
    im = None
    for ax, (t, pad), grid, d in zip(axes, group, grids, diffs):
        ax.set_title(_heat_title(metric, t, pad, pads), fontsize=pt)
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
                if numbers:
                    ax.text(j, i, "n/r" if math.isinf(v) else "n/a", ha="center", va="center", fontsize=pt)
                continue
            if not numbers:
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
    for ax in axes[len(group):]:
        ax.axis("off")
    if im is not None:  # at the row's end, in the right margin (0.1 in wide; its ticks and label beside it)
        box = axes[0].get_position()
        fig_w = fig.get_size_inches()[0]
        bar = fig.colorbar(im, cax=fig.add_axes((1 - 0.68 / fig_w, box.y0, 0.09 / fig_w, box.height), label="<colorbar>"))
        bar.set_label("value - spec" if context else "+ better, - worse", fontsize=pt, labelpad=1)
        bar.ax.tick_params(labelsize=pt, length=2, pad=1)
        bar.set_ticks([-reach, 0.0, reach])
        bar.ax.yaxis.set_major_formatter(  # digits bound now: a late-bound one formatted every bar as the last
            lambda x, _, d=digits: "0" if x == 0 else f"{x:+.{max(1, d - 1)}f}")


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
    vertical marks and the empty figure's text (response latencies; a family's own curves, fdbu.family.Figure)."""
    plt = _pyplot()
    panels = max(1, len(curves))
    cols = (panels if panels <= 2 else 2) if width == "page" else 1  # more than two (v1.5's four): two a row
    per_page = cols * int((PAGE_IN - 0.9) // PANEL_IN)  # rows of panels a page holds, with its title and legend
    names = list(dict.fromkeys(s["name"] for c in curves for s in c["systems"]))
    names = [words["subject"]] if "subject" in words else names
    chunks = [curves[i:i + per_page] for i in range(0, len(curves), per_page)] or [[]]
    figs = []
    with _style(width):
        for n, chunk in enumerate(chunks):
            rows = math.ceil(max(1, len(chunk)) / cols)
            fig, axes = plt.subplots(rows, cols, figsize=(WIDTHS[width], PANEL_IN * rows + 0.9), dpi=200,
                                     squeeze=False, layout="constrained")
            handles = _curve_panels(axes, chunk, words, width, cols, plt)
            if not curves:
                axes.flat[0].text(0.5, 0.5, words["none"], ha="center", va="center")
            more = f" ({n + 1}/{len(chunks)})" if len(chunks) > 1 else ""
            fig.suptitle(_wrap(f"{words['title']}: {', '.join(names) or 'no system'}{more}", width))
            if handles:
                fig.legend(list(handles.values()), list(handles),  # each handle is kept under its own label
                           loc="outside lower center", ncol=1 if width == "column" else 2, frameon=False)
            figs.append(fig)
        return _save(figs, tight=False)


def _curve_panels(axes, curves: list[dict], words: dict, width: str, cols: int, plt) -> dict[str, Any]:
    """Each subset's F(t) of every system on its own axis; the legend's handles by label."""
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
        ax.set(xlim=(0, xmax), ylim=(0, 1.02), xlabel=axis or "latency (s)", ylabel=words["ylabel"])
        ns = ", ".join(f"{s['name']} {s['n']}" for s in c["systems"])
        bound = "" if horizon is None else f"; {words['horizon']} {horizon:g} s"
        ax.set_title(_wrap(f"{c['subset']}\nn: {ns}{bound}", width, 0.8 / cols))
    for ax in list(axes.flat)[len(curves):]:
        ax.axis("off")
    return handles


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


def _line(pair: dict, subset: str, name: str) -> dict | None:
    """A pair's compared line of a subset's metric (None where the pair has none)."""
    return pair["subsets"].get(subset, {}).get("metrics", {}).get(name)


def _decision(m: dict) -> str | None:
    """The decision drawn beside a line: * (marked), a circle (too few pairs to decide), or none."""
    from .metrics.paired import too_few

    return MARKED if m.get("marker") else FEW if too_few(m) else None


def _finite(m: dict | None) -> bool:
    """A line the forest can place as a point on an axis: its difference is a number."""
    return isinstance(((m or {}).get("difference") or {}).get("value"), (int, float))


def _signed_text(x, flag) -> str:
    return flag if flag in ("+inf", "-inf") else "n/a" if not isinstance(x, (int, float)) else f"{x:+.3f}"


def compare_forest(result: dict, width: str = WIDTH) -> dict[str, bytes]:
    """Paired differences b - a with their 95% intervals, a panel per subset and part (outcomes, latency medians,
    context), each with its x label; +-inf (one median not reached) as a labelled arrow at the edge, a panel with no
    finite difference as a note of each line's flag and interval instead of an axis of arrows; beside a pair's row
    its decision as on the console: * (Holm-adjusted p < alpha, the result's `marker`) or a circle (too few pairs
    to decide). Exactly the printed width; panels beyond
    PAGE_IN go on further pages (PDF pages; the PNG holds them one under the other)."""
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
        line_in = 1.4 * pt / 72
        # the pairs' lines spread over 0.8 of a row, 1.6 text heights apart: their stars never stack
        row_in = max(0.2, 1.6 * pt / 72 * len(pairs) / 0.8)
        key = (f"\u2193/\u2191 lower/higher is better; {MARKED}\u00a0Holm-adjusted p < {alpha:g}; {FEW}\u00a0too few "
               "pairs; arrow: +-inf")
        ncol = 1 if width == "column" else min(3, len(pairs))
        # the title's, the key's and the legend's lines on top of the panels, so the panels keep their rows' height
        above = (2 + _wrap(key, width).count("\n") + math.ceil(len(pairs) / ncol)) * 1.35 * pt / 72 + 0.3
        # a panel of more rows than a page holds (many pairs) is split into parts that fit; rows closer only where
        # not even one fits
        fits = max(1, int((PAGE_IN - above - 0.45 - line_in) // row_in))
        row_in = min(row_in, (PAGE_IN - above - 0.45 - line_in) / fits)
        panels = [(subset, part, names[i:i + fits]) for subset, part, names in panels
                  for i in range(0, len(names), fits)]
        notes = [None if any(_finite(_line(p, subset, n)) for p in pairs for n in names)
                 else _forest_note(result, (subset, part, names), width) for subset, part, names in panels]
        heights = [(note.count("\n") + 4) * line_in + 0.45 if note  # + its title
                   else len(panel[2]) * row_in + 0.45 + line_in for panel, note in zip(panels, notes)]
        pages = _paginate(heights, above)
        colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        figs = []
        for k, page in enumerate(pages):
            fig, axes = plt.subplots(len(page), 1, figsize=(WIDTHS[width], sum(heights[i] for i in page) + above),
                                     dpi=200, squeeze=False, gridspec_kw={"height_ratios": [heights[i] for i in page]},
                                     layout="constrained")
            for ax, i in zip(axes[:, 0], page):
                _forest_panel(ax, result, panels[i], notes[i], width, colors)
            handles = [plt.Line2D([], [], color=colors[j % len(colors)], marker="o", ms=3.5, lw=1.4,
                                  label=f"{p['b']} - {p['a']}") for j, p in enumerate(pairs)]
            fig.legend(handles=handles, loc="outside lower center", ncol=ncol, frameon=False)
            more = f" ({k + 1}/{len(pages)})" if len(pages) > 1 else ""
            fig.suptitle(_wrap(f"Paired differences, 95% intervals{more}\n{key}", width))
            figs.append(fig)
        return _save(figs, tight=False)


def _forest_note(result: dict, panel: tuple, width: str) -> str:
    """A panel with no finite difference, in words: each line's flag, interval and decision per pair, wrapped to the
    width."""
    from .metrics.table import readable

    subset, _, names = panel
    lines = []
    for n in names:
        for p in result["pairs"]:
            m = _line(p, subset, n) or {}
            d = m.get("difference") or {}
            iv = d.get("interval")
            mark = f" {_decision(m)}" if m and _decision(m) else ""
            ends = "" if iv is None else " [" + ", ".join(
                _signed_text(x, f) for x, f in zip(iv, d.get("interval_flags") or [None, None])) + "]"
            lines.append(f"{readable(n)} {_arrow(result, subset, n)}: {p['b']} - {p['a']} "
                         f"{d.get('value_flag') or 'n/a'}{ends}{mark}")
    lines.append("+inf/-inf: one system's median not reached; undefined: neither's" if panel[1].startswith("latency")
                 else "n/a: no paired difference (no pair in the metric's population)")
    return _wrap("\n".join(lines), width, 0.95)


def _forest_panel(ax, result: dict, panel: tuple, note: str | None, width: str, colors: list) -> None:
    """One subset's part: a row per metric, a line per pair; or, where no line is finite, its `note` instead."""
    from matplotlib.ticker import MaxNLocator

    from .metrics.table import readable

    subset, part, names = panel
    pairs = result["pairs"]
    ax.set_title(_wrap(f"{subset}: {part}", width, 0.55 if width == "column" else 0.7), loc="left")
    diffs = [[_line(p, subset, n) for n in names] for p in pairs]
    if note:  # no finite difference (medians not reached, or no pair): no axis to draw them on, the flags in words
        ax.axis("off")
        from matplotlib.transforms import blended_transform_factory

        at = blended_transform_factory(ax.figure.transFigure, ax.transAxes)  # from the figure's left: the whole width
        ax.text(0.02, 1, note, transform=at, va="top", ha="left",
                linespacing=1.4).set_in_layout(False)  # its panel is sized for it, as a drawn one with its x label
        ax.set_xticks([]), ax.set_yticks([])
        return
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
            mark = _decision(m)
            if mark:
                ax.text(1.01, y, mark, transform=ax.get_yaxis_transform(), va="center", ha="left",
                        color=color, fontweight="bold")
    ax.axvline(0, color="0.4", lw=0.8)
    ax.set_xlim(-edge, edge)
    ax.set_ylim(-0.6, len(names) - 0.4)
    ax.set_yticks(range(len(names)), [f"{readable(n)} {_arrow(result, subset, n)}" for n in reversed(names)])
    ax.set_xlabel("difference b - a" + (" (s)" if part.startswith("latency") else ""), labelpad=1)
    ax.xaxis.set_major_locator(MaxNLocator(5, symmetric=True, prune="both"))  # no label at the edges
    ax.tick_params(axis="y", length=0)


def _arrow(result: dict, subset: str, name: str) -> str:
    for p in result["pairs"]:
        m = _line(p, subset, name)
        if m:
            return {"lower": "\u2193", "higher": "\u2191"}.get(m["better"], "")
    return ""
