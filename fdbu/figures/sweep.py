"""`fdbu sweep`'s heatmaps: per metric and tree, its value over threshold x minimum silence (a page of rows per
padding and offset), each colour bar formatted with the digits that tell its cells apart, the spec's point boxed."""
from __future__ import annotations

import functools
import math

import numpy as np

from .plot import FONT_PT, _paginate, _pyplot, _save, _style, _wrap
from ..config.settings import NOT_REACHED, WIDTH, WIDTHS
from ..tasks import metric_table


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
    """The width (inches) of the widest line of `text` at `pt` in the figures' font, as matplotlib lays it out (the
    box a drawn text's extent is: advances, not ink; measured without building the glyphs' outlines)."""
    from matplotlib.cbook import is_math_text
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import text_to_path

    font = FontProperties(size=pt)  # a line with $...$ (a system named so) is drawn as mathematics: measured so
    return max((text_to_path.get_text_width_height_descent(line, font, ismath=is_math_text(line))[0]
                for line in text.split("\n") if line), default=0.0) / 72


def sweep_heatmaps(result: dict, spec: dict, width: str = WIDTH, progress: bool = False) -> dict[str, bytes]:
    """Every metric of the swept subset over threshold x minimum silence, a panel per system (and per padding when
    the padding is swept). Colour: the difference from the system's value at the spec's settings, blue where better
    and red where worse by the metric's direction (purple/orange for context metrics), on one diverging scale per
    metric from -r to r, r the largest difference or COLOUR_RANGE's for its kind, whichever is larger; the numbers
    are the values, one format per metric; the spec's cell outlined; not reached cells and panels grey. Exactly the
    printed width: as many panels a row as fit their cells' numbers (a metric's panels wrap to the next row; where
    not even one panel fits them, the numbers are left out and the title says so); rows beyond PAGE_IN go on further
    pages (PNG and PDF). `progress`: a bar over the pages, drawn then rendered, on a terminal (the figures take
    longer than a cached sweep's arithmetic: never a silent screen)."""
    from ..common.progress import Bar

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
    bar = Bar(total=2 * len(pages), desc="heatmaps", unit="step", disable=None if progress else True)
    with _style(width), bar:
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
            bar.update()
        return _save(figs, tight=False, tick=lambda done, of: bar.update() if done > of // 2 else None)


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
