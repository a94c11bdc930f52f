"""Response-latency curves F(t) for turn-taking and interruption, from the per-sample rows.

F(t) is the share of the population (eligible samples for turn-taking, exercised ones
for interruption) with a response latency of at most t; non-responders never arrive,
so a curve that stays below 0.5 is a median that is not reached.
"""
from __future__ import annotations

import io

import numpy as np

from .tasks import SUBSETS


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _png(fig) -> bytes:
    """PNG bytes without a timestamp or version stamp (the same figure gives the same bytes)."""
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    _pyplot().close(fig)
    return buf.getvalue()


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
    for k in (1, 2, 5):
        ax.axvline(k, color="0.85", lw=0.8, zorder=0)
    ax.axhline(0.5, color="0.6", lw=0.8, ls="--", zorder=0)
    ax.set(xlim=(0, horizon_s), ylim=(0, 1.02), xlabel="latency t (s)", ylabel="F(t): share responded by t",
           title="Response-latency curves (fdbu unified)")
    ax.legend(loc="lower right")
    return _png(fig)


def sweep_heatmaps(tree: dict, metrics) -> bytes:
    """One panel per metric: its value over threshold x minimum silence (other axes at their first value)."""
    others = ("neg_threshold_offset", "min_speech_ms", "speech_pad_ms")
    plt = _pyplot()
    pts = tree["points"]
    first = pts[0]["settings"]
    pts = [p for p in pts if all(p["settings"][k] == first[k] for k in others)]
    thr = sorted({p["settings"]["threshold"] for p in pts})
    sil = sorted({p["settings"]["min_silence_ms"] for p in pts})
    cols = 4
    rows = (len(metrics) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(3.4 * cols, 2.9 * rows), dpi=110, squeeze=False)
    for ax, name in zip(axes.flat, metrics):
        grid = np.full((len(thr), len(sil)), np.nan)
        for p in pts:
            v = p["metrics"][name]["value"]
            if isinstance(v, (int, float)):
                grid[thr.index(p["settings"]["threshold"]), sil.index(p["settings"]["min_silence_ms"])] = v
        im = ax.imshow(grid, origin="lower", aspect="auto", cmap="viridis")
        for (i, j), v in np.ndenumerate(grid):
            ax.text(j, i, "n/r" if np.isnan(v) else f"{v:.2f}", ha="center", va="center", fontsize=7, color="w")
        ax.set_xticks(range(len(sil)), [f"{s:g}" for s in sil], fontsize=7)
        ax.set_yticks(range(len(thr)), [f"{t:g}" for t in thr], fontsize=7)
        ax.set_title(name + (" (median)" if p["metrics"][name]["kind"] == "latency_quantiles" else ""), fontsize=8)
        ax.set_xlabel("min silence (ms)", fontsize=7)
        ax.set_ylabel("threshold", fontsize=7)
        fig.colorbar(im, ax=ax, fraction=0.046)
    for ax in list(axes.flat)[len(metrics):]:
        ax.axis("off")
    fig.suptitle(f"{tree['tree']}: interruption metrics over the VAD grid (neg offset "
                 f"{first['neg_threshold_offset']:g}, min speech {first['min_speech_ms']:g} ms, pad {first['speech_pad_ms']:g} ms; "
                 "n/r: not reached)",
                 fontsize=9)
    return _png(fig)
