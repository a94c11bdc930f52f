"""Outcome classification and bootstrap for a full-size tree: numba kernels vs the plain-Python twins.

    python -m benchmarks.kernels [--repeat 5]

Both ways get the same per-sample data (random, at the v1.0 subset sizes: 353 pause,
119 turn-taking, 200 interruption samples) and must give identical numbers; the
benchmark checks that, then prints the wall time of each and their ratio.
"""
from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import twins  # noqa: E402

from fdbu.kernels import (interruption_outcomes, pause_components, resample_ranked, resample_ratios,  # noqa: E402
                          turn_taking_outcomes)
from fdbu.metrics.flat import column, flatten  # noqa: E402
from fdbu.metrics.stats import Bootstrap  # noqa: E402

US = 1_000_000


def data(seed: int = 0):
    rng = np.random.default_rng(seed)
    pause, tt, ui = [], [], []
    for _ in range(353):
        T = int(rng.integers(10, 30)) * US
        cuts = np.sort(rng.choice(np.arange(2 * US, T, 10_000), size=2 * int(rng.integers(1, 4)), replace=False))
        starts = np.sort(rng.integers(0, T, int(rng.integers(0, 30))))
        pause.append((T, cuts.reshape(-1, 2), np.stack([starts, starts + rng.integers(0, 600_000, len(starts))], 1)))
    for _ in range(119):
        E = int(rng.integers(3, 10)) * US
        tt.append((E, np.sort(rng.integers(0, E + 5 * US, int(rng.integers(0, 30))))))
    for _ in range(200):
        T = int(rng.integers(15, 30)) * US
        S = int(rng.integers(4, 8)) * US
        R = S + int(rng.integers(1, 3)) * US
        cuts = np.unique(rng.integers(0, T, 2 * int(rng.integers(0, 6))))
        cuts = cuts[: len(cuts) // 2 * 2].reshape(-1, 2)
        ui.append((T, S, R, cuts, np.sort(rng.integers(R, T, int(rng.integers(0, 20))))))
    return pause, tt, ui


def with_kernels(pause, tt, ui, boot):
    ws, wo = flatten([w[:, 0] for _, _, w in pause])
    we, _ = flatten([w[:, 1] for _, _, w in pause])
    pa, po = flatten([p[:, 0] for _, p, _ in pause])
    pb, _ = flatten([p[:, 1] for _, p, _ in pause])
    c = pause_components(ws, we, wo, pa, pb, po, column([t for t, _, _ in pause]))
    ts, to = flatten([w for _, w in tt])
    outcome, latency = turn_taking_outcomes(ts, to, column([e for e, _ in tt]))
    ga, go = flatten([g[:, 0] for *_, g, _ in ui])
    gb, _ = flatten([g[:, 1] for *_, g, _ in ui])
    us, uo = flatten([w for *_, w in ui])
    res = interruption_outcomes(ga, gb, go, us, uo, *(column([u[k] for u in ui]) for k in (1, 2, 0)))
    idx_p, idx_t = boot.indices(len(pause)), boot.indices(len(tt))
    boots = [resample_ratios(c.intruded_pauses, c.pauses, idx_p).values,
             resample_ratios(c.covered_us, c.pause_us, idx_p).values,
             resample_ranked(latency, idx_t, (len(tt) + 1) // 2)]
    return [int(x) for x in c.covered_us], [int(x) for x in latency], [int(x) for x in res.stop_us], \
        [np.asarray(b, dtype=float).tolist() for b in boots]


def with_twins(pause, tt, ui, boot):
    p = [twins.pause([tuple(map(int, w)) for w in words], [tuple(map(int, x)) for x in ps], T)
         for T, ps, words in pause]
    t = [twins.turn_taking([int(s) for s in w], E)[1] for E, w in tt]
    u = [twins.interruption([tuple(map(int, g)) for g in segs], [int(s) for s in w], S, R, T)["stop"]
         for T, S, R, segs, w in ui]
    idx_p, idx_t = boot.indices(len(pause)), boot.indices(len(tt))
    boots = [twins.ratios([x["intruded_pauses"] for x in p], [x["pauses"] for x in p], idx_p),
             twins.ratios([x["covered_us"] for x in p], [x["pause_us"] for x in p], idx_p),
             [float(twins.ranked([t[j] for j in row], (len(tt) + 1) // 2)) for row in idx_t]]
    return [x["covered_us"] for x in p], t, u, boots


def best_of(fn, repeat, *args):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn(*args)
        times.append(time.perf_counter() - t0)
    return min(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    pause, tt, ui = data()
    boot = Bootstrap()
    with_kernels(pause, tt, ui, boot)  # compile (or load the numba cache) outside the timing
    t_k, out_k = best_of(with_kernels, args.repeat, pause, tt, ui, boot)
    t_p, out_p = best_of(with_twins, max(1, args.repeat // 2), pause, tt, ui, boot)
    assert out_k == out_p, "kernels and twins disagree"
    print(f"machine: {platform.processor() or platform.machine()}, python {platform.python_version()}")
    print(f"full-size outcomes + 3 bootstraps (2000 resamples): numba {t_k * 1e3:.1f} ms, "
          f"plain Python {t_p * 1e3:.1f} ms, ratio {t_p / t_k:.0f}x, identical numbers: yes")


if __name__ == "__main__":
    main()
