"""`fdbu compare` on Full-Duplex-Bench v2 sessions under the null: how often its marker fires over a split's headline
lines when both systems are drawn from one distribution of sessions, and how often when one answers sooner (power).

    python -m benchmarks.session_calibration [--datasets 1000] [--power-datasets 300] [--seed 0]

A dataset is S paired sessions (the same task run by both systems). Session i has its own difficulty, shared by
the two systems: k_i = 4 + Poisson(8) examiner turn ends, a response chance p_i ~ Beta(2r, 2(1 - r)), a latency
scale m_i ~ log(0.8) + 0.5 N(0, 1), j_i = Poisson(2) examiner interruptions with a stop chance q_i ~ Beta(3, 1), and
a talk-over share t_i ~ Beta(1, 12). Each system then draws its own session independently given those: how many
ends are answerable (each 0.9), responses ~ Binomial(answerable, p_i), each answer after exp(m_i + 0.5 e) s (an
unanswered end: never), the session's median latency by the spec's rule, stops ~ Binomial(j_i, q_i), examiner speech
~ U(30, 80) s and talk-over ~ that x Beta(12 t_i, 12 (1 - t_i)). Each system's arrays are the v2 metric table's own
(`fdbu.families.v2.metrics.METRICS`, their `values` over Components), and each line is decided by the code `fdbu compare`
runs (`difference`, then `decide` over the split's headline lines: one Holm family). At 20 and 30 sessions the
lines say "too few pairs" (session.MIN_PAIRS, 50): the 30-session cells show the rate the markers would have without
that rule (`raw`: the family's Holm decision on the p-values alone).

Power: system B's response chance p_i + delta. The bound in every null cell is alpha + 3 sqrt(alpha (1 - alpha) / D).
"""
from __future__ import annotations

import time

import numpy as np

from fdbu.kernels import INF
from fdbu.families.v2 import metrics as session, events as session_events
from fdbu.metrics.paired import ALPHA, difference, holm
from fdbu.metrics.stats import Bootstrap
from fdbu.comparison.pairwise import decide

from .calibration import arguments, bound

SIZES = (30, 50, 100, 200)
RATES = (0.5, 0.9)
US = 1_000_000
HEADLINE = [m for m in session.METRICS if m.headline]


def _system(rng, k, p, m, j, q, t, delta: float = 0.0) -> session.Components:
    n = len(k)
    answerable = rng.binomial(k, 0.9)
    responses = rng.binomial(answerable, np.clip(p + delta, 0, 1))
    medians = np.empty(n, np.int64)
    for i in range(n):
        lat = np.round(np.exp(m[i] + 0.5 * rng.standard_normal(responses[i])) * US).astype(np.int64)
        medians[i] = session_events.median_us(np.r_[lat, np.full(answerable[i] - responses[i], INF, np.int64)])
    stops = rng.binomial(j, q)
    examiner = np.round(rng.uniform(30, 80, n) * US).astype(np.int64)
    talk = np.round(examiner * rng.beta(12 * t, 12 * (1 - t))).astype(np.int64)
    zeros = np.zeros(n, np.int64)
    counts = {c: zeros.copy() for c in session.COUNTS}
    counts.update({"examiner_turns": k, "response": responses, "no_response": answerable - responses,
                   "interruptions": j, "stops": stops})
    stop_latency = np.where(j > 0, 500_000, -1).astype(np.int64)
    return session.Components(np.full(n, 120 * US, np.int64), counts, talk, examiner, medians, stop_latency, [None] * n,
                              [], [])


def dataset(rng, sessions: int, rate: float, delta: float = 0.0):
    k = 4 + rng.poisson(8, sessions)
    p = rng.beta(2 * rate, 2 * (1 - rate), sessions)
    m = np.log(0.8) + 0.5 * rng.standard_normal(sessions)
    j, q, t = rng.poisson(2, sessions), rng.beta(3, 1, sessions), rng.beta(1, 12, sessions)
    return _system(rng, k, p, m, j, q, t), _system(rng, k, p, m, j, q, t, delta)


def decided(a: session.Components, b: session.Components, boot: Bootstrap, alpha: float) -> dict:
    """The split's headline lines as `fdbu compare` decides them (`fdbu.metrics.paired.difference`, the metric's own
    fewest pairs included), on the sessions both systems have in each line's population."""
    pa, pb = session.populations(a), session.populations(b)
    lines = {m.name: {"headline": True, **difference(m, a, b, pa[m.over] & pb[m.over], boot, alpha)}
             for m in HEADLINE}
    decide([{"a": "A", "b": "B", "subsets": {"s": {"metrics": lines}}}], "baseline", alpha)
    return lines


def cell(sessions: int, rate: float, datasets: int, seed: int, delta: float = 0.0, alpha: float = ALPHA,
         boot: Bootstrap = Bootstrap()) -> dict:
    """The share of datasets where any headline line is marked, over `datasets` datasets (fixed seed)."""
    rng = np.random.default_rng([seed, sessions, round(rate * 100), round(delta * 100)])
    marked = raw = 0
    per_line = dict.fromkeys((m.name for m in HEADLINE), 0)
    for _ in range(datasets):
        lines = decided(*dataset(rng, sessions, rate, delta), boot, alpha)
        marked += any(line["marker"] for line in lines.values())
        ps = [line["p"] for line in lines.values() if line["p"] is not None]
        raw += bool(ps) and min(holm(ps)) < alpha
        for name, line in lines.items():
            per_line[name] += line["marker"]
    return {"sessions": sessions, "rate": rate, "delta": delta, "datasets": datasets, "marker": marked / datasets,
            "raw": raw / datasets,
            "per_line": {k: v / datasets for k, v in per_line.items()}, "bound": bound(alpha, datasets)}


def main() -> None:
    args = arguments(__doc__)
    from .common import load as machine_load

    print(machine_load())
    t0 = time.perf_counter()
    print(f"null: {args.datasets} datasets per cell, alpha {ALPHA}, bootstrap 2000 resamples; marker = Holm p < alpha "
          f"over the {len(HEADLINE)} headline lines of a split; bound = alpha + 3 MC standard errors")
    print("| sessions | response rate | family-wise marker rate | raw (Holm on the p alone) | bound | ok |\n"
          "|---|---|---|---|---|---|")
    rows = []
    for sessions in SIZES:
        for rate in RATES:
            r = cell(sessions, rate, args.datasets, args.seed)
            rows.append(r)
            print(f"| {sessions} | {rate} | {r['marker']:.4f} | {r['raw']:.4f} | {r['bound']:.4f} | "
                  f"{'yes' if r['marker'] <= r['bound'] else 'NO'} |", flush=True)
    print(f"\npower: {args.power_datasets} datasets per cell, B's response chance + delta (response rate 0.5)")
    print("| delta | sessions | family-wise marker rate | response_rate marked |\n|---|---|---|---|")
    for delta in (0.1, 0.2):
        for sessions in (50, 100):
            r = cell(sessions, 0.5, args.power_datasets, args.seed, delta=delta)
            print(f"| {delta} | {sessions} | {r['marker']:.3f} | {r['per_line']['response_rate']:.3f} |", flush=True)
    print(f"\n{time.perf_counter() - t0:.0f} s; {machine_load()}")
    if any(r["marker"] > r["bound"] for r in rows):
        raise SystemExit("a null cell's marker rate is above its bound")


if __name__ == "__main__":
    main()
