"""`fdbu compare`'s forest: per subset and pair, each metric's difference b - a with its interval, marked where
Holm's p is below alpha, a circle where too few pairs could decide, +-inf at the axis' edges; another benchmark's
columns (fdbu.views) in panels of their own, titled with the paper's terms."""
from __future__ import annotations

import math


from ..comparison.marks import holm_rule
from .plot import FONT_PT, PAGE_IN, _paginate, _pyplot, _save, _style, _wrap
from ..config.settings import ALPHA, WIDTH, WIDTHS

MARKED, FEW = "*", "\u25cb"  # the forest's decisions: Holm-adjusted p < alpha; too few pairs to decide (a circle,
# not a dash: a dash reads as a minus sign beside a difference, and as a hyphen where the title wraps)


def _clip(x, flag, lo, hi):
    """A difference on the axis: +inf and -inf at the edges."""
    if flag == "+inf":
        return hi, True
    if flag == "-inf":
        return lo, True
    return x, False


Where = tuple  # (None, subset): the unified metrics of a subset; (view, subset): another benchmark's (fdbu.views)


def _entries(pair: dict) -> dict:
    """A pair's compared sections by where: each subset's unified metrics, each family entry compared on it (v1.5's
    matched control), then each view's subsets (and pooled)."""
    out: dict = {(None, s): e for s, e in pair["subsets"].items()}
    for key, subsets in pair.get("entries", {}).items():  # a family entry compared: "control on SUBSET"
        out.update({(None, f"{key} on {s}"): e for s, e in subsets.items()})
    for view, subsets in pair.get("views", {}).items():
        out.update({(view, s): e for s, e in subsets.items()})
    return out


def forest_panels(result: dict) -> list[tuple[Where, str, list[str]]]:
    """(where, part, metric names): per subset its outcome rates and ratios, its latency medians (seconds), and
    apart its context metrics (no better or worse); then each view's sections alike, in their own panels."""
    panels = []
    sections = dict.fromkeys(w for p in result["pairs"] for w, e in _entries(p).items() if "metrics" in e)
    for where in sections:
        first = next(_entries(p)[where] for p in result["pairs"] if "metrics" in _entries(p).get(where, {}))
        parts: dict[str, list] = {"outcomes": [], "latency medians (s)": [], "latency shifts (s)": [], "context": []}
        for name, m in first["metrics"].items():
            part = "context" if m["better"] == "context" else "latency medians (s)" if m["kind"] == "latency_quantiles" \
                else "latency shifts (s)" if m["kind"] == "latency_shift" else "outcomes"
            parts[part].append(name)
        panels += [(where, part, names) for part, names in parts.items() if names]
    return panels


def _short(where: Where, name: str) -> str:
    """A line's name as its family entry's hook shortens it (`Compared.console`: v1.5's "attributable_stop_1s"), so
    the labels leave the panel its width; a subset's or a view's lines as they are."""
    from .. import tasks

    view, section = where
    key, _, subset = section.partition(" on ")
    if view is not None or subset not in tasks.SUBSETS:
        return name
    hook = next((e.compared for e in tasks.family(subset).entries if e.key == key and e.compared), None)
    return hook.console(name) if hook else name


def _line(pair: dict, where: Where, name: str) -> dict | None:
    """A pair's compared line of a section's metric (None where the pair has none)."""
    return _entries(pair).get(where, {}).get("metrics", {}).get(name)


def _title(where: Where) -> str:
    """A panel's section: the subset, or the view's paper and subset, marked as its terms (not the unified ones)."""
    from ..views import VIEWS

    view, subset = where
    if view is None:
        return subset
    title = VIEWS[view].title if view in VIEWS else view
    return f"{title}'s terms, {'pooled' if subset == 'pooled' else subset}"


def _decision(m: dict) -> str | None:
    """The decision drawn beside a line: * (marked), a circle (too few pairs to decide), or none."""
    from ..metrics.paired import too_few

    return MARKED if m.get("marker") else FEW if too_few(m) else None


def _finite(m: dict | None) -> bool:
    """A line the forest can place as a point on an axis: its difference is a number."""
    return isinstance(((m or {}).get("difference") or {}).get("value"), (int, float))


def _signed_text(x, flag) -> str:
    return flag if flag in ("+inf", "-inf") else "n/a" if not isinstance(x, (int, float)) else f"{x:+.3f}"


def compare_forest(result: dict, width: str = WIDTH, tick=None) -> dict[str, bytes]:
    """Paired differences b - a with their 95% intervals, a panel per subset and part (outcomes, latency medians,
    context), each with its x label; +-inf (one median not reached) as a labelled arrow at the edge, a panel with no
    finite difference as a note of each line's flag and interval instead of an axis of arrows; beside a pair's row
    its decision as on the console: * (Holm-adjusted p < alpha, the result's `marker`) or a circle (too few pairs
    to decide). Exactly the printed width; panels beyond
    PAGE_IN go on further pages (PDF pages; the PNG holds them one under the other). `tick(done, of)`: its steps as
    drawn (`fdbu.figures.plot._save`)."""
    plt = _pyplot()
    panels = forest_panels(result)
    pairs = result["pairs"]
    alpha = result.get("comparison", {}).get("alpha", ALPHA)
    with _style(width):
        if not panels:
            fig, ax = plt.subplots(figsize=(WIDTHS[width], 1.2))
            ax.axis("off")
            ax.text(0.5, 0.5, "no subset compared", ha="center", va="center")
            return _save(fig, tick=tick)
        pt = FONT_PT[width]
        line_in = 1.4 * pt / 72
        # the pairs' lines spread over 0.8 of a row, 1.6 text heights apart: their stars never stack
        row_in = max(0.2, 1.6 * pt / 72 * len(pairs) / 0.8)
        family = f" ({holm_rule(result['comparison'])})" if "comparison" in result else ""
        key = (f"\u2193/\u2191 lower/higher is better; {MARKED}\u00a0Holm-adjusted p < {alpha:g}{family}; "
               f"{FEW}\u00a0too few pairs; arrow: +-inf")
        ncol = 1 if width == "column" else min(3, len(pairs))
        # the title's, the key's and the legend's lines on top of the panels, so the panels keep their rows' height
        above = (2 + _wrap(key, width).count("\n") + math.ceil(len(pairs) / ncol)) * 1.35 * pt / 72 + 0.3
        # a panel of more rows than a page holds (many pairs) is split into parts that fit; rows closer only where
        # not even one fits
        fits = max(1, int((PAGE_IN - above - 0.45 - line_in) // row_in))
        row_in = min(row_in, (PAGE_IN - above - 0.45 - line_in) / fits)
        panels = [(where, part, names[i:i + fits]) for where, part, names in panels
                  for i in range(0, len(names), fits)]
        notes = [None if any(_finite(_line(p, where, n)) for p in pairs for n in names)
                 else _forest_note(result, (where, part, names), width) for where, part, names in panels]
        # each panel's title as drawn (a view's wraps to two or three lines at column width): its lines are the
        # panel's, so the rows keep their height (two rows squeezed under a three-line title overlapped their labels)
        titles = [_panel_title(where, part, width) for where, part, _ in panels]
        heights = [(note.count("\n") + 3) * line_in + 0.45 if note
                   else len(panel[2]) * row_in + 0.45 for panel, note in zip(panels, notes)]
        heights = [h + (t.count("\n") + 1) * line_in for h, t in zip(heights, titles)]
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
        return _save(figs, tight=False, tick=tick)


def _forest_note(result: dict, panel: tuple, width: str) -> str:
    """A panel with no finite difference, in words: each line's flag, interval and decision per pair, wrapped to the
    width."""
    from ..metrics.table import readable

    where, _, names = panel
    lines = []
    for n in names:
        for p in result["pairs"]:
            m = _line(p, where, n) or {}
            d = m.get("difference") or {}
            iv = d.get("interval")
            mark = f" {_decision(m)}" if m and _decision(m) else ""
            ends = "" if iv is None else " [" + ", ".join(
                _signed_text(x, f) for x, f in zip(iv, d.get("interval_flags") or [None, None])) + "]"
            lines.append(f"{readable(_short(where, n))} {_arrow(result, where, n)}: {p['b']} - {p['a']} "
                         f"{d.get('value_flag') or 'n/a'}{ends}{mark}")
    lines.append("+inf/-inf: one system's median not reached; undefined: neither's" if panel[1].startswith("latency")
                 else "n/a: no paired difference (no pair in the metric's population)")
    return _wrap("\n".join(lines), width, 0.95)


def _panel_title(where: Where, part: str, width: str) -> str:
    """A panel's title, wrapped as drawn: its section and part."""
    return _wrap(f"{_title(where)}: {part}", width, 0.55 if width == "column" else 0.7)


def _forest_panel(ax, result: dict, panel: tuple, note: str | None, width: str, colors: list) -> None:
    """One subset's part: a row per metric, a line per pair; or, where no line is finite, its `note` instead."""
    from matplotlib.ticker import MaxNLocator

    from ..metrics.table import readable

    where, part, names = panel
    pairs = result["pairs"]
    ax.set_title(_panel_title(where, part, width), loc="left")
    diffs = [[_line(p, where, n) for n in names] for p in pairs]
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
    ax.set_yticks(range(len(names)), [f"{readable(_short(where, n))} {_arrow(result, where, n)}"
                                      for n in reversed(names)])
    ax.set_xlabel("difference b - a" + (" (s)" if part.startswith("latency") else ""), labelpad=1)
    ax.xaxis.set_major_locator(MaxNLocator(5, symmetric=True, prune="both"))  # no label at the edges
    ax.tick_params(axis="y", length=0)


def _arrow(result: dict, where: Where, name: str) -> str:
    for p in result["pairs"]:
        m = _line(p, where, name)
        if m:
            return {"lower": "\u2193", "higher": "\u2191"}.get(m["better"], "")
    return ""
