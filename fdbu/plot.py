"""Response-latency curves F(t) for turn-taking and interruption, from the per-sample rows.

F(t) is the share of the population (eligible samples for turn-taking, exercised ones
for interruption) with a response latency of at most t; non-responders never arrive,
so a curve that stays below 0.5 is a median that is not reached.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .atomic import write_bytes

CURVES = {"candor_turn_taking": "turn-taking (from E)", "synthetic_user_interruption": "interruption (from R)"}


def curve(rows: list[dict], subset: str) -> tuple[np.ndarray, int]:
    """Sorted latencies of the responders and the population size."""
    pop = [r for r in rows if r["subset"] == subset and r["eligible"] and r.get("outcome") != "not_exercised"]
    return np.sort([r["latency_s"] for r in pop if r["latency_s"] is not None]), len(pop)


def latency_curves(rows: list[dict], path: Path, horizon_s: float = 6.0) -> Path:
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=120)
    for subset, label in CURVES.items():
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
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    plt.close(fig)
    write_bytes(path, buf.getvalue())
    return Path(path)
