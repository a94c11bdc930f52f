"""Response-latency curves F(t) for turn-taking and interruption, from the per-sample rows.

F(t) is the share of the population (eligible samples for turn-taking, exercised ones
for interruption) with a response latency of at most t; non-responders never arrive,
so a curve that stays below 0.5 is a median that is not reached.
"""
from __future__ import annotations

import io

import math

import numpy as np

from .tasks import SUBSETS

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


def _png(fig) -> bytes:
    """PNG bytes without a timestamp or version stamp (the same figure gives the same bytes)."""
    return _save(fig, ("png",))["png"]


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


def curve(rows: list[dict], subset: str) -> tuple[np.ndarray, int]:
    """Sorted latencies of the responders and the population size."""
    pop = [r for r in rows if r["subset"] == subset and r["eligible"] and r.get("outcome") != "not_exercised"]
    return np.sort([r["latency_s"] for r in pop if r["latency_s"] is not None]), len(pop)


def latency_curves(rows: list[dict], horizon_s: float = 6.0) -> bytes:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=120)
    for subset, entry in SUBSETS.items():
        if entry.task.reference is None:
            continue
        label = f"{entry.task.label}: {subset}"
        lat, n = curve(rows, subset)
        if n == 0:
            continue
        x = np.concatenate([[0.0], lat, [horizon_s]])
        y = np.concatenate([[0.0], np.arange(1, len(lat) + 1) / n, [len(lat) / n]])
        ax.step(x, y, where="post", label=f"{label}, n={n}")
    for k in MARKS_S:
        ax.axvline(k, color="0.85", lw=0.8, zorder=0)
    ax.axhline(0.5, color="0.6", lw=0.8, ls="--", zorder=0)
    ax.set(xlim=(0, horizon_s), ylim=(0, 1.02), xlabel="latency t (s)", ylabel="F(t): share responded by t",
           title="Response-latency curves (fdbu unified)")
    ax.legend(loc="lower right")
    return _png(fig)


def _digits(values, lo: int = 3, hi: int = 5) -> int:
    """The fewest decimals (3, as the console prints, up to 5) that print every distinct value of a panel group
    differently, so no two cells of different colour read the same."""
    distinct = sorted({v for v in values if isinstance(v, float) and math.isfinite(v)})
    for d in range(lo, hi + 1):
        if len({f"{v:.{d}f}" for v in distinct}) == len(distinct):
            return d
    return hi


def _scale(kind: str, values) -> tuple[float, float, str]:
    """One colour scale per metric, shared by every system: rates on 0-1, pooled ratios from 0 (to 1 or beyond),
    median latencies from 0 s to the largest reached one."""
    finite = [v for v in values if isinstance(v, float) and math.isfinite(v)]
    if kind == "share":
        return 0.0, 1.0, "share (fixed 0-1)"
    if kind == "pooled_ratio":
        return 0.0, max([1.0, *finite]), "ratio (from 0)"
    return 0.0, max(finite, default=1.0) or 1.0, "median s (from 0; n/r: not reached)"


def _grid_values(tree: dict, name: str, thr: list, sil: list, fixed: dict) -> np.ndarray:
    """The metric over threshold x min silence at the fixed other settings: NaN for no value, inf for not reached."""
    grid = np.full((len(thr), len(sil)), np.nan)
    for p in tree["points"]:
        st = p["settings"]
        if any(st[k] != v for k, v in fixed.items()):
            continue
        v = p["metrics"][name]["value"]
        grid[thr.index(st["threshold"]), sil.index(st["min_silence_ms"])] = (
            math.inf if v == "not reached" else np.nan if v is None else float(v))
    return grid


def sweep_heatmaps(result: dict, spec: dict) -> dict[str, bytes]:
    """Every interruption metric over threshold x minimum silence, the systems side by side on one shared scale
    per metric, the spec's point outlined (PNG and PDF)."""
    from matplotlib.colors import Normalize
    from matplotlib.patches import Rectangle

    plt = _pyplot()
    trees = result["trees"]
    table = SUBSETS[result["trees"][0]["subset"]].task.metrics.METRICS
    others = ("neg_threshold_offset", "min_speech_ms", "speech_pad_ms")
    settings = [p["settings"] for p in trees[0]["points"]]
    fixed = {}
    for k in others:  # the spec's value on each other axis when the grid has it, else the smallest
        values = sorted({st[k] for st in settings})
        fixed[k] = spec[k] if spec[k] in values else values[0]
    thr = sorted({st["threshold"] for st in settings})
    sil = sorted({st["min_silence_ms"] for st in settings})
    nsys = len(trees)
    groups_per_row = max(1, 4 // nsys)
    rows = math.ceil(len(table) / groups_per_row)
    cols = groups_per_row * nsys
    width, height = 2.6 * cols + 0.9 * groups_per_row + 0.6, 2.5 * rows + 0.8
    fig, axes = plt.subplots(rows, cols, figsize=(width, height), dpi=110, squeeze=False)
    fig.subplots_adjust(left=0.55 / width, right=1 - 0.75 / width, bottom=0.45 / height, top=1 - 0.75 / height,
                        wspace=0.35, hspace=0.55)  # a fixed layout: a layout engine costs seconds here
    cmap = plt.get_cmap("viridis").copy()
    for g, metric in enumerate(table):
        group = [axes[g // groups_per_row, (g % groups_per_row) * nsys + k] for k in range(nsys)]
        grids = [_grid_values(t, metric.name, thr, sil, fixed) for t in trees]
        values = [float(v) for grid in grids for v in grid.flat]
        lo, hi, label = _scale(metric.kind, values)
        norm = Normalize(lo, hi)
        digits = _digits(values)
        for ax, t, grid in zip(group, trees, grids):
            shown = np.where(np.isfinite(grid), grid, np.nan)
            im = ax.imshow(shown, origin="lower", aspect="auto", cmap=cmap, norm=norm)
            for (i, j), v in np.ndenumerate(grid):
                if np.isnan(v) or math.isinf(v):
                    ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, color="0.85", lw=0))
                    ax.text(j, i, "n/r" if math.isinf(v) else "n/a", ha="center", va="center", fontsize=6.5)
                    continue
                r, gg, b, _ = cmap(norm(v))
                ink = "black" if 0.299 * r + 0.587 * gg + 0.114 * b > 0.5 else "white"
                ax.text(j, i, f"{v:.{digits}f}", ha="center", va="center", fontsize=6.5, color=ink)
            if spec["threshold"] in thr and spec["min_silence_ms"] in sil and all(fixed[k] == spec[k] for k in others):
                ax.add_patch(Rectangle((sil.index(spec["min_silence_ms"]) - 0.5, thr.index(spec["threshold"]) - 0.5),
                                       1, 1, fill=False, edgecolor="red", lw=1.8))
            ax.set_xticks(range(len(sil)), [f"{x:g}" for x in sil], fontsize=6.5)
            ax.set_yticks(range(len(thr)), [f"{x:g}" for x in thr], fontsize=6.5)
            ax.set_xlabel("min silence (ms)", fontsize=6.5, labelpad=1)
            ax.set_ylabel("threshold", fontsize=6.5, labelpad=1)
            ax.tick_params(length=2, pad=1)
            kind = " (median)" if metric.kind == "latency_quantiles" else ""
            ax.set_title(f"{metric.name}{kind}\n{t['name']}", fontsize=7.5)
        bar = fig.colorbar(im, ax=group, fraction=0.06 / nsys, pad=0.03, aspect=25)
        bar.ax.tick_params(labelsize=6)
        bar.set_label(label, fontsize=6)
    for ax in axes.flat[len(table) * nsys:]:
        ax.axis("off")
    fig.suptitle(f"{result['trees'][0]['subset']}: {', '.join(t['name'] for t in trees)} over the VAD grid "
                 f"(neg offset {fixed['neg_threshold_offset']:g}, min speech {fixed['min_speech_ms']:g} ms, "
                 f"pad {fixed['speech_pad_ms']:g} ms); red: the spec's settings; n/r: not reached", fontsize=8.5)
    return _save(fig, tight=False)


def _marks(ax, horizon_s: float | None, xmax: float) -> None:
    """1, 2 and 5 s labelled; the region beyond min_observable_s shaded (F there is a lower bound)."""
    for k in MARKS_S:
        if k < xmax:
            ax.axvline(k, color="0.8", lw=0.8, zorder=0)
            ax.text(k, 1.005, f"{k} s", ha="center", va="bottom", fontsize=7, color="0.4")
    ax.axhline(0.5, color="0.6", lw=0.8, ls="--", zorder=0)
    if horizon_s is not None and horizon_s < xmax:
        ax.axvspan(horizon_s, xmax, color="0.93", zorder=0, lw=0)
        ax.text(horizon_s - 0.04, 0.5, f"min_observable_s {horizon_s:g} s: beyond it F(t) is a lower bound",
                rotation=90, fontsize=6.5, color="0.35", ha="right", va="center")


def compare_latency_curves(curves: list[dict]) -> dict[str, bytes]:
    """F(t) of every system on one axis per subset, with pointwise 95% bootstrap bands (PNG and PDF)."""
    plt = _pyplot()
    panels = max(1, len(curves))
    fig, axes = plt.subplots(1, panels, figsize=(5.6 * panels, 4.6), dpi=120, squeeze=False)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, c in zip(axes.flat, curves):
        horizon = c["horizon_s"]
        xmax = 6.0 if horizon is None else min(max(horizon, 5.5), 10.0)
        for k, s in enumerate(c["systems"]):
            t = np.asarray(s["t_us"], np.float64) / 1e6
            keep = t <= xmax
            x = np.concatenate([[0.0], t[keep], [xmax]])
            y, lo, hi = (_held(s[key][keep]) for key in ("F", "lo", "hi"))
            color = colors[k % len(colors)]
            ax.fill_between(x, lo, hi, step="post", color=color, alpha=0.18, lw=0)
            ax.step(x, y, where="post", color=color, label=f"{s['name']} (n={s['n']})")
        _marks(ax, horizon, xmax)
        ax.set(xlim=(0, xmax), ylim=(0, 1.04), xlabel="latency t (s)", ylabel="F(t): share responded by t")
        ax.set_title(f"{c['label']}: {c['subset']}\n{' vs '.join(s['name'] for s in c['systems'])}, samples "
                     f"{c['over']} in every system", fontsize=9)
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=min(3, len(c["systems"])), fontsize=8,
                  frameon=False)
    if not curves:
        axes.flat[0].axis("off")
        axes.flat[0].text(0.5, 0.5, "no subset with response latencies", ha="center", va="center")
    return _save(fig)


def _clip(x, flag, lo, hi):
    """A difference on the axis: +inf and -inf at the edges."""
    if flag == "+inf":
        return hi, True
    if flag == "-inf":
        return lo, True
    return x, False


def compare_forest(result: dict) -> dict[str, bytes]:
    """Paired differences b - a with their 95% intervals, one panel per subset for rates and ratios and one
    for its latency medians (seconds); right of each panel, one column per pair, each line's decision as on the
    console: * (Holm p < alpha) or - (too few pairs to decide) (PNG and PDF)."""
    from matplotlib.lines import Line2D
    from matplotlib.transforms import blended_transform_factory

    plt = _pyplot()
    panels = []  # (subset, metric names, seconds)
    for subset in dict.fromkeys(s for p in result["pairs"] for s, e in p["subsets"].items() if "metrics" in e):
        first = next(p["subsets"][subset] for p in result["pairs"] if "metrics" in p["subsets"].get(subset, {}))
        kinds = {name: m["kind"] for name, m in first["metrics"].items()}
        for seconds in (False, True):
            names = [n for n, k in kinds.items() if (k == "latency_quantiles") == seconds]
            if names:
                panels.append((subset, names, seconds))
    if not panels:
        fig, ax = plt.subplots(figsize=(6, 2))
        ax.axis("off")
        ax.text(0.5, 0.5, "no subset compared", ha="center", va="center")
        return _save(fig)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    heights = [len(names) + 1.6 for _, names, _ in panels]
    pairs = result["pairs"]
    legend_rows = math.ceil(len(pairs) / 3)
    height = 0.3 * sum(heights) + 1.2 + 0.2 * legend_rows
    fig, axes = plt.subplots(len(panels), 1, figsize=(8.5, height), dpi=120, squeeze=False,
                             gridspec_kw={"height_ratios": heights})
    for ax, (subset, names, seconds) in zip(axes[:, 0], panels):
        diffs = [[p["subsets"].get(subset, {}).get("metrics", {}).get(n) for n in names] for p in pairs]
        finite = [abs(x) for row in diffs for m in row if m for x in
                  [m["difference"]["value"], *(m["difference"]["interval"] or [])] if isinstance(x, (int, float))]
        edge = max(max(finite, default=0.0) * 1.12, 0.05 if not seconds else 0.1)
        margin = blended_transform_factory(ax.transAxes, ax.transData)  # x in axes fractions, y in rows
        for k, (p, row) in enumerate(zip(pairs, diffs)):
            offset = (k - (len(pairs) - 1) / 2) * 0.6 / len(pairs)
            color = colors[k % len(colors)]
            column = 1.02 + 0.025 * k
            for j, m in enumerate(row):
                if m is None:
                    continue
                d, y = m["difference"], len(names) - 1 - j + offset
                if d["interval"] is not None:
                    ends = [_clip(x, f, -edge, edge) for x, f in zip(d["interval"], d["interval_flags"])]
                    ax.plot([ends[0][0], ends[1][0]], [y, y], color=color, lw=1.6)
                    for (x, flagged), marker in zip(ends, "<>"):
                        if flagged:
                            ax.plot(x, y, marker=marker, color=color, ms=5)
                v, flagged = _clip(d["value"], d["value_flag"], -edge, edge)
                if v is None:
                    ax.text(0, y, f" {d['value_flag'] or 'n/a'}", fontsize=7, va="center", color=color)
                else:
                    ax.plot(v, y, marker="o", color=color, ms=4.5, mfc="white" if flagged else color)
                    if flagged:
                        ax.text(v, y + 0.22, d["value_flag"], fontsize=6.5, ha="left" if v < 0 else "right",
                                color=color)
                mark = "*" if m["marker"] else "-" if (m["reason"] or "").startswith("too few") else None
                if mark:
                    ax.text(column, len(names) - 1 - j, mark, transform=margin, fontsize=10 if mark == "*" else 8,
                            va="center", ha="center", color=color, clip_on=False)
        ax.axvline(0, color="0.4", lw=0.8)
        ax.set_xlim(-edge, edge)
        ax.set_ylim(-0.7, len(names) - 0.3)
        ax.set_yticks(range(len(names)), [f"{n} ({_arrow(result, subset, n)})" for n in reversed(names)],
                      fontsize=7.5)
        ax.tick_params(axis="x", labelsize=7.5)
        ax.set_xlabel("difference in seconds (latency medians)" if seconds else "difference (shares and ratios)",
                      fontsize=7.5)
        ax.set_title(f"{subset}" + (": latency medians" if seconds else ""), fontsize=9)
    handles = [Line2D([], [], color=colors[k % len(colors)], marker="o", ms=4.5, lw=1.6) for k in range(len(pairs))]
    fig.legend(handles, [f"{p['b']} - {p['a']}" for p in pairs], loc="lower center", ncol=min(3, len(pairs)),
               fontsize=8, frameon=False)
    alpha = result["comparison"]["alpha"]
    fig.suptitle(f"Paired differences b - a with 95% intervals; right of each panel, one column per pair: * Holm-"
                 f"adjusted p < {alpha:g},\n- too few pairs to decide; open marker at the edge: +-inf (one median "
                 "not reached)", fontsize=9, x=0.02, ha="left")
    fig.tight_layout(rect=(0, (0.15 + 0.2 * legend_rows) / height, 1, 1))
    return _save(fig, tight=False)


def _arrow(result: dict, subset: str, name: str) -> str:
    for p in result["pairs"]:
        m = p["subsets"].get(subset, {}).get("metrics", {}).get(name)
        if m:
            return {"lower": "lower better", "higher": "higher better"}.get(m["better"], "context")
    return ""
