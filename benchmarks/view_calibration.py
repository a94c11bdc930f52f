"""The markers `fdbu compare` puts on other benchmarks' columns (fdbu.views: FD-Bench, VideoFDB) under the null: how
often a view's Holm family marks anything when both systems are drawn from one distribution, and how often it
does when one system yields and answers sooner (power).

    python -m benchmarks.view_calibration [--datasets 1000] [--power-datasets 300] [--seed 0]

Every dataset is n turn-taking and n interruption samples whose words and speech segments each system draws from
one per-sample distribution; they go through the code `fdbu score views=[fdbench,videofdb]` and `fdbu compare`
run: the task kernels and rows (`fdbu.metrics`), the views' records (`fdbu.views`), the paired lines
(`fdbu.comparison.pairwise.compare_pair` with `Scope.view`) and Holm's marker (`fdbu.comparison.pairwise.decide`), one family per view,
subset and pair. A cell's rate is the share of datasets in which the family marks at least one line (its
family-wise error rate under the null); the bound is alpha + 3 Monte Carlo standard errors.

- turn-taking (E = 5 s, T = 10 s): sample i speaks with chance p_i ~ Beta(2r, 2(1 - r)), one word at
  E + m_i + 0.7 N(0, 1) s (m_i ~ N(0.3, 1) shared by the pair), 0.2 to 1 s long;
- interruption (S = 4 s, R = 6 s, T = 10 s): speaking at S with chance p_i, the segment from 3 s ending
  max(0.05, s_i + 0.7 N(0, 1)) s after S (s_i ~ N(1.5, 1) shared), or, one time in five, running to T (no stop
  seen: yield latencies +inf, their medians not reached where most samples do so); else an earlier segment or
  none; an answer (a segment and a word) 0 to 2 s after R with chance 0.7.

Power: system B's stop and onset means are 0.8 s earlier and its speaking chance + 0.1.
"""
from __future__ import annotations

import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from fdbu.views.fdbench import Config as FdbenchConfig
from fdbu.views.videofdb import Config as VideofdbConfig
from fdbu.families.v1_0 import interruption, turn_taking
from fdbu.metrics.paired import ALPHA
from fdbu.metrics.stats import Bootstrap
from fdbu.comparison.systems import Scope, System
from fdbu.comparison.pairwise import Pairing, compare_pair, decide
from fdbu.views import VIEWS, aggregate_part

from .calibration import arguments, bound

TURN, INT = "candor_turn_taking", "synthetic_user_interruption"
US = 1_000_000
E, S, R, T = 5 * US, 4 * US, 6 * US, 10 * US
SIZES = (8, 30, 200)
RATES = (0.2, 0.5, 0.9)
SETTINGS = {"fdbench": FdbenchConfig().settings(), "videofdb": VideofdbConfig().settings()}


def _us(x) -> int:
    return int(round(float(x) * US))


def draw(rng, n: int, rate: float) -> dict:
    """One dataset's latent per-sample parameters (shared by the pair)."""
    return {"p": rng.beta(2 * rate, 2 * (1 - rate), n), "m": 0.3 + rng.standard_normal(n),
            "s": 1.5 + rng.standard_normal(n)}


def system(rng, latent: dict, effect: bool, to_t: float = 0.2) -> dict[str, list]:
    """One system's samples (words, segments) for both subsets; `to_t`: the share of speakers at S who talk to T."""
    n = len(latent["p"])
    p = np.clip(latent["p"] + (0.1 if effect else 0.0), 0, 1)
    early = 0.8 if effect else 0.0
    turn, inter = [], []
    for i in range(n):
        words = []
        if rng.random() < p[i]:
            start = min(max(0.05, 5 + latent["m"][i] - early + 0.7 * rng.standard_normal()), 9.5)
            words = [(_us(start), _us(min(start + rng.uniform(0.2, 1.0), 10.0)))]
        turn.append(SimpleNamespace(word_start=np.array([w[0] for w in words], np.int64),
                                    word_end=np.array([w[1] for w in words], np.int64), E_us=E, T_us=T))
        segs, ws = [], []
        if rng.random() < p[i] and rng.random() < to_t:  # speaking to T: no stop seen (a median may be not reached)
            segs.append((3 * US, T))
        elif rng.random() < p[i]:
            end = min(max(0.05, latent["s"][i] - early + 0.7 * rng.standard_normal()), 5.8)
            segs.append((3 * US, S + _us(end)))
        elif rng.random() < 0.5:
            segs.append((1 * US, 2 * US))
        if rng.random() < 0.7 and not (segs and segs[-1][1] == T):
            a = max(_us(6 + rng.uniform(0, 2)), segs[-1][1] + 50_000 if segs else 0)
            if a < T - 300_000:
                segs.append((a, a + 250_000))
                ws.append(a)
        inter.append(SimpleNamespace(word_start=np.array(ws, np.int64), word_end=np.array(ws, np.int64) + 200_000,
                                     S_us=S, R_us=R, T_us=T, segments=np.array(segs, np.int64).reshape(-1, 2)))
    return {TURN: turn, INT: inter}


def scored(name: str, samples: dict, boot: Bootstrap) -> System:
    """The system as `fdbu compare` reads it back: its rows (with the views' records) and unified.json's entries."""
    comps = {TURN: turn_taking.components(samples[TURN]),
             INT: interruption.components(samples[INT], [s.segments for s in samples[INT]])}
    modules = {TURN: turn_taking, INT: interruption}
    tasks = {TURN: "turn_taking", INT: "user_interruption"}
    rows, unified = {}, {"subsets": {}, "views": {}}
    for subset, module in modules.items():
        rows[subset] = [{"sample_id": f"{subset}/{i}", "subset": subset, "eligible": True, **r}
                        for i, r in enumerate(module.rows(samples[subset], comps[subset]))]
        unified["subsets"][subset] = {"coverage": 1.0, "metrics": {}}
    for view, settings in SETTINGS.items():
        entry: dict = {"subsets": {}}
        for subset in modules:
            part = VIEWS[view].parts[tasks[subset]]
            segments = [s.segments for s in samples[subset]] if subset == INT else None
            for row, record in zip(rows[subset], part.records(samples[subset], comps[subset], settings, segments)):
                row.setdefault("views", {})[view] = record
            entry["subsets"][subset] = aggregate_part(part, rows[subset], settings, view, len(rows[subset]), boot)
        unified["views"][view] = entry
    return System(name, Path(name), unified, rows, {})


def families(a: System, b: System, boot: Bootstrap, alpha: float) -> dict[str, bool]:
    """Each view family's decision for the pair: whether any of its lines is marked."""
    pair: dict = {"a": a.name, "b": b.name, "subsets": {}, "views": {}}
    for view, settings in SETTINGS.items():
        for subset in (TURN, INT):
            pair["views"].setdefault(view, {})[subset] = compare_pair(
                a, b, subset, Pairing({}, boot, False, alpha), Scope.view(subset, view, settings))
    decide([pair], "baseline", alpha)
    return {f"{view} on {subset}": any(line["marker"] for line in entry["metrics"].values())
            for view, by in pair["views"].items() for subset, entry in by.items()}


def cell(n: int, rate: float, datasets: int, seed: int, effect: bool = False, alpha: float = ALPHA,
         boot: Bootstrap = Bootstrap(), to_t: float = 0.2) -> dict:
    """Each family's marker rate over `datasets` datasets of one cell (fixed seed)."""
    rng = np.random.default_rng([seed, n, round(rate * 100), int(effect), round(to_t * 100)])
    counts: dict[str, int] = {}
    for _ in range(datasets):
        latent = draw(rng, n, rate)
        a = scored("A", system(rng, latent, False, to_t), boot)
        b = scored("B", system(rng, latent, effect, to_t), boot)
        for family, marked in families(a, b, boot, alpha).items():
            counts[family] = counts.get(family, 0) + marked
    return {"n": n, "rate": rate, "to_t": to_t, "effect": effect, "datasets": datasets, "bound": bound(alpha, datasets),
            "rates": {f: k / datasets for f, k in counts.items()}}


def main() -> None:
    args = arguments(__doc__)
    from .common import load as machine_load

    t0 = time.perf_counter()
    print(f"null: {args.datasets} datasets per cell, alpha {ALPHA}, bootstrap 2000 resamples; a family marks when "
          "any of its lines has Holm p < alpha; bound = alpha + 3 MC standard errors")
    rows = []
    for n in SIZES:
        for rate in RATES:
            r = cell(n, rate, args.datasets, args.seed)
            rows.append(r)
            if len(rows) == 1:
                print("| n | speaking chance | " + " | ".join(r["rates"]) + " | bound | ok |")
                print("|---|---|" + "---|" * (len(r["rates"]) + 2))
            print(f"| {n} | {rate} | " + " | ".join(f"{v:.4f}" for v in r["rates"].values()) +
                  f" | {r['bound']:.4f} | {'yes' if max(r['rates'].values()) <= r['bound'] else 'NO'} |", flush=True)
    print("\ndegenerate: seven speakers in ten talk to T (most yield medians not reached)")
    for n in (30, 200):
        r = cell(n, 0.9, args.datasets, args.seed, to_t=0.7)
        rows.append(r)
        print(f"| {n} | 0.9, to T 0.7 | " + " | ".join(f"{v:.4f}" for v in r["rates"].values()) +
              f" | {r['bound']:.4f} | {'yes' if max(r['rates'].values()) <= r['bound'] else 'NO'} |", flush=True)
    null_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    print(f"\npower: {args.power_datasets} datasets per cell (B stops and speaks 0.8 s sooner, speaking chance + 0.1)")
    for n in (30, 200):
        r = cell(n, 0.5, args.power_datasets, args.seed, effect=True)
        if n == 30:
            print("| n | speaking chance | " + " | ".join(r["rates"]) + " |\n|---|---|" + "---|" * len(r["rates"]))
        print(f"| {n} | 0.5 | " + " | ".join(f"{v:.3f}" for v in r["rates"].values()) + " |", flush=True)
    print(f"\nnull table {null_s:.0f} s, power {time.perf_counter() - t1:.0f} s; {machine_load()}")
    if any(max(r["rates"].values()) > r["bound"] for r in rows):
        raise SystemExit("a null cell's marker rate is above its bound")


if __name__ == "__main__":
    main()
