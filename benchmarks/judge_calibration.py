"""v2's correlation with the judge under the null: how often its 95% interval leaves out 0 when the judge's score has
nothing to do with the timing (docs: Definition 68).

    python -m benchmarks.judge_calibration [--datasets 1000] [--seed 0]

Every dataset is S judged sessions, computed by the code `fdbu score` runs (`fdbu.families.v2.metrics.judge_entry`:
Kendall's tau-b and Spearman's rho, the expanded percentile bootstrap interval over whole sessions, no interval
under MIN_SESSIONS contributing sessions):

- null: session k has its own timing level m_k ~ U(0.2, 2) s and its own score level q_k ~ U(1, 5), drawn
  independently (a slow system is slow in every event; a judge scores a session as a whole), and 2 to 9 events, each
  with a latency m_k x Exp(1) (a share `never` of them +inf, no response) and a score round(q_k + N(0, 0.7)) clipped
  to 1-5 (ties, as the judge's integer scores have). Events of one session are correlated in both values, and the
  two values are independent: the null of "the judge does not reward this timing".

A "false" dataset is one whose tau-b interval (or rho interval) excludes 0; the bound in every cell is
0.05 + 3 sqrt(0.05 x 0.95 / D), three Monte Carlo standard errors over D datasets.
"""
from __future__ import annotations

import time

import numpy as np

from fdbu.families.v2.metrics import MIN_SESSIONS, Components, judge_entry
from fdbu.metrics.stats import Bootstrap

from .calibration import arguments, bound

SIZES = (MIN_SESSIONS, 20, 50)
NEVER = (0.0, 0.3)
ALPHA = 0.05


def judged(rng, sessions: int, never: float) -> list[np.ndarray]:
    """Each session's judged events as judge_entry reads them: window, TT, IF, latency, overlap and silence shares."""
    out = []
    for _ in range(sessions):
        m, q, k = rng.uniform(0.2, 2.0), rng.uniform(1.0, 5.0), int(rng.integers(2, 10))
        latency = np.where(rng.random(k) < never, np.inf, m * rng.exponential(1.0, k))
        tt = np.clip(np.round(q + rng.normal(0, 0.7, k)), 1, 5)
        ev = np.zeros((k, 7))
        ev[:, 2], ev[:, 3], ev[:, 4] = tt, 3.0, latency
        ev[:, 5], ev[:, 6] = rng.random(k), rng.random(k)
        out.append(ev)
    return out


def cell(sessions: int, never: float, datasets: int, seed: int, resamples: int = 2000) -> dict:
    """How often each statistic's latency interval leaves out 0, over `datasets` null datasets (fixed seed)."""
    rng = np.random.default_rng([seed, sessions, round(never * 100)])
    c = Components(np.zeros(sessions, np.int64), {}, np.zeros(0), np.zeros(0), np.zeros(0), np.zeros(0), [], [], [])
    false = {"kendall_tau_b": 0, "spearman": 0}
    for d in range(datasets):
        c.judged = judged(rng, sessions, never)
        lines = judge_entry(c, Bootstrap(resamples, d))["lines"]
        for stat in false:
            iv = lines[f"latency_s_{stat}"]["difference"]["interval"]
            false[stat] += iv is not None and (iv[0] > 0 or iv[1] < 0)
    return {"sessions": sessions, "never": never, "datasets": datasets, "bound": bound(ALPHA, datasets),
            **{stat: n / datasets for stat, n in false.items()}}


def main() -> None:
    args = arguments(__doc__)
    from .common import load as machine_load

    print(machine_load())
    t0 = time.perf_counter()
    print(f"null: {args.datasets} datasets per cell, bootstrap 2000 resamples over sessions; false = the latency "
          "line's 95% interval leaves out 0; bound = 0.05 + 3 MC standard errors")
    print("| sessions | never | tau-b false | rho false | bound | ok |")
    print("|---|---|---|---|---|---|")
    rows = []
    for sessions in SIZES:
        for never in NEVER:
            r = cell(sessions, never, args.datasets, args.seed)
            rows.append(r)
            ok = max(r["kendall_tau_b"], r["spearman"]) <= r["bound"]
            print(f"| {sessions} | {never} | {r['kendall_tau_b']:.4f} | {r['spearman']:.4f} | {r['bound']:.4f} | "
                  f"{'yes' if ok else 'NO'} |", flush=True)
    print(f"\n{time.perf_counter() - t0:.0f} s; {machine_load()}")
    if any(max(r["kendall_tau_b"], r["spearman"]) > r["bound"] for r in rows):
        raise SystemExit("a null cell's false rate is above its bound")


if __name__ == "__main__":
    main()
