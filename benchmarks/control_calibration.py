"""v1.5's matched control under the null: how often its marker fires when the overlap event changes nothing, and
how often it fires when the system yields to the event (power).

    python -m benchmarks.control_calibration [--datasets 2000] [--power-datasets 500] [--seed 0]

Every dataset is n samples exercised in both runs, decided by the code `fdbu score` runs
(`fdbu.families.v1_5.metrics.control`: the exact McNemar test of "stopped within 1 s" and the paired bootstrap of the stop
latency's median, Holm over the two, docs: Definition 58):

- null: sample i has its own stop-time scale s_i ~ U(0.2, 3) s; each run stops after s_i x Exp(1), drawn
  independently for the two runs (exchangeable: the event changes nothing, and the runs of one sample are
  correlated through s_i), and a share q of runs never stops (+infinity: the answer runs to the end);
- power: as the null, and in the event run a share delta of samples yields, stopping 0 to 0.5 s after o_s.

The bound in every null cell is alpha + 3 sqrt(alpha (1 - alpha) / D), three Monte Carlo standard errors over
D datasets. `p < alpha` counts either headline line's raw p before Holm and the too-few-pairs rule.
"""
from __future__ import annotations

import time

import numpy as np

from fdbu.kernels import INF, OverlapRun
from fdbu.families.v1_5 import metrics as overlap
from fdbu.metrics.paired import ALPHA
from fdbu.metrics.stats import Bootstrap

from .calibration import arguments, bound

SIZES = (8, 20, 40, 200)
NEVER = (0.0, 0.2, 0.5, 0.9)  # 0.9: both medians mostly not reached (no difference, no test)
US = 1_000_000
T_US = 30 * US


def stops(rng, n: int, never: float, delta: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """(event run's, clean run's) stop latencies in microseconds (INF: never stops), as the docstring says."""
    scale = rng.uniform(0.2, 3.0, n)
    event, clean = (np.where(rng.random(n) < never, INF, np.round(scale * rng.exponential(1.0, n) * US)
                             .astype(np.int64)) for _ in range(2))
    if delta:
        yields = rng.random(n) < delta
        event = np.where(yields, np.round(rng.uniform(0.0, 0.5, n) * US).astype(np.int64), event)
    return event, clean


def components(event: np.ndarray, clean: np.ndarray) -> overlap.Components:
    """A subset whose every sample is exercised in both matched runs, with these stops."""
    n = len(event)

    def run(stop):
        return OverlapRun(np.ones(n, bool), stop, np.zeros(n, np.int64), np.zeros(n, bool), np.full(n, INF),
                          np.full(n, INF))

    zeros, T = np.zeros(n, np.int64), np.full(n, T_US, np.int64)
    return overlap.Components("user_interruption", run(event), run(clean), zeros, zeros, T, T, np.ones(n), [], [])


def cell(n: int, never: float, datasets: int, seed: int, delta: float = 0.0, resamples: int = 2000,
         alpha: float = ALPHA) -> dict:
    """Marker rate and raw p < alpha rate over `datasets` datasets of one cell (fixed seed)."""
    rng = np.random.default_rng([seed, n, round(never * 100), round(delta * 100)])
    marked = raw = 0
    for k in range(datasets):
        control = overlap.control(components(*stops(rng, n, never, delta)), Bootstrap(resamples, k), alpha)
        lines = [control["stops"][overlap.HEADLINE], control["stop_latency_shift_s"]]
        marked += any(line["marker"] for line in lines)
        raw += any(line["p"] is not None and line["p"] < alpha for line in lines)
    return {"n": n, "never": never, "delta": delta, "datasets": datasets, "marker": marked / datasets,
            "raw": raw / datasets, "bound": bound(alpha, datasets)}


def main() -> None:
    args = arguments(__doc__)
    from .common import load as machine_load

    print(machine_load())
    t0 = time.perf_counter()
    print(f"null: {args.datasets} datasets per cell, alpha {ALPHA}, bootstrap 2000 resamples; marker = Holm p < alpha "
          "over the two headline lines; bound = alpha + 3 MC standard errors")
    print("| n | never stops | marker rate | bound | raw p < alpha (either line) | ok |")
    print("|---|---|---|---|---|---|")
    rows = []
    for n in SIZES:
        for never in NEVER:
            r = cell(n, never, args.datasets, args.seed)
            rows.append(r)
            print(f"| {n} | {never} | {r['marker']:.4f} | {r['bound']:.4f} | {r['raw']:.4f} | "
                  f"{'yes' if r['marker'] <= r['bound'] else 'NO'} |", flush=True)
    null_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    print(f"\npower: {args.power_datasets} datasets per cell, never stops 0.2; a share delta yields to the event")
    print("| delta | n | marker rate |")
    print("|---|---|---|")
    for delta in (0.2, 0.5):
        for n in (40, 200):
            r = cell(n, 0.2, args.power_datasets, args.seed, delta=delta)
            print(f"| {delta} | {n} | {r['marker']:.3f} |", flush=True)
    print(f"\nnull table {null_s:.0f} s, power {time.perf_counter() - t1:.0f} s; {machine_load()}")
    if any(r["marker"] > r["bound"] for r in rows):
        raise SystemExit("a null cell's marker rate is above its bound")


if __name__ == "__main__":
    main()
