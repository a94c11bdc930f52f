"""Which marks hold alpha together: `fdbu compare`'s Holm family options (compare.family=subset|pair|leaderboard)
under the null, read as a reader reads the report's summary (issue 54, item 2).

    python -m benchmarks.family_calibration [--datasets 1000] [--power-datasets 300] [--seed 0]

Every dataset is three systems (A the baseline, B, C) on the four scored v1.0 subsets, n samples each, every
system drawn from one per-sample distribution (the null), through the code score and compare run: the task
kernels and rows (`fdbu.metrics`), the paired lines (`fdbu.comparison.pairwise.compare_pair`) and Holm's marker
(`fdbu.comparison.pairwise.decide`) under each option. Turn-taking and interruption samples are `benchmarks.view_calibration`'s;
a pause sample (T = 10 s, pauses [3, 4) and [6, 7) s) has, with chance p_i ~ Beta(2r, 2(1 - r)) shared by the
systems, one word 0.2 to 1 s long starting uniformly in [0.5, 9.5] s.

Per option, the share of datasets with any mark in B's summary row (its headline lines on the four subsets,
against A) and with any mark on the whole board (B's and C's rows); the bound is alpha + 3 Monte Carlo standard
errors. Holm holds alpha within a family, so `pair` must hold it over a row and `leaderboard` over the board;
`subset` holds it per subset only, and a row of four subsets may show a chance mark more often (the union bound
allows 4 alpha). Then every printed p of B's row (every metric with a test, headline or not, issue 54's "every
printed p"): the share of the datasets that printed it with p < alpha. Power: B's speaking chance + 0.1 and its
stops and onsets 0.8 s sooner (C as A).
"""
from __future__ import annotations

import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from fdbu import tasks
from fdbu.families.v1_0 import interruption, pause, turn_taking
from fdbu.metrics.paired import ALPHA
from fdbu.metrics.stats import Bootstrap
from fdbu.comparison.pairwise import Pairing, compare_pair, decide
from fdbu.config.settings import HOLM_FAMILIES
from fdbu.comparison.systems import System

from .calibration import arguments, bound
from .view_calibration import INT, TURN, US, draw, system as turn_and_interruption

PAUSES = ("synthetic_pause_handling", "candor_pause_handling")
SUBSETS = (*PAUSES, TURN, INT)
MODULES = {PAUSES[0]: pause, PAUSES[1]: pause, TURN: turn_taking, INT: interruption}
SIZES = (30, 100)
RATE = 0.5


def pauses(rng, p: np.ndarray, effect: bool) -> list:
    """One system's pause samples: a word starting anywhere in the window with chance p_i (+ 0.1 with `effect`)."""
    chance = np.clip(p + (0.1 if effect else 0.0), 0, 1)
    out = []
    for i in range(len(p)):
        start = [int(rng.uniform(0.5, 9.5) * US)] if rng.random() < chance[i] else []
        out.append(SimpleNamespace(word_start=np.array(start, np.int64),
                                   word_end=np.array([s + int(rng.uniform(0.2, 1.0) * US) for s in start], np.int64),
                                   pauses=np.array([[3 * US, 4 * US], [6 * US, 7 * US]], np.int64), T_us=10 * US))
    return out


def scored(name: str, samples: dict) -> System:
    """The system as `fdbu compare` reads it back: its rows and unified.json's subset entries."""
    rows, unified = {}, {"subsets": {}}
    for subset, module in MODULES.items():
        comps = (interruption.components(samples[subset], [s.segments for s in samples[subset]])
                 if module is interruption else module.components(samples[subset]))
        rows[subset] = [{"sample_id": f"{subset}/{i}", "subset": subset, "eligible": True, **r}
                        for i, r in enumerate(module.rows(samples[subset], comps))]
        unified["subsets"][subset] = {"coverage": 1.0, "metrics": {m.name: {} for m in tasks.metric_table(subset)}}
    return System(name, Path(name), unified, rows, {})


def systems(rng, n: int, effect: bool = False, rate: float = RATE) -> list[System]:
    """A, B and C on one dataset's samples (B with the effect, if any)."""
    latent = {"pauses": [draw(rng, n, rate)["p"] for _ in PAUSES], "turns": draw(rng, n, rate)}
    out = []
    for name in ("A", "B", "C"):
        more = effect and name == "B"
        samples = {subset: pauses(rng, p, more) for subset, p in zip(PAUSES, latent["pauses"])}
        samples.update(turn_and_interruption(rng, latent["turns"], more))
        out.append(scored(name, samples))
    return out


def marks(n: int, rng, boot: Bootstrap, alpha: float, effect: bool = False, rate: float = RATE
          ) -> dict[str, dict[str, set]]:
    """One dataset: per family option, the marked lines of B's row and of the board, as (pair, subset, metric)."""
    a, b, c = systems(rng, n, effect, rate)
    how = Pairing({}, boot, False, alpha)
    pairs = [{"a": a.name, "b": x.name, "subsets": {s: compare_pair(a, x, s, how) for s in SUBSETS}}
             for x in (b, c)]
    out: dict = {"p": {(s, name): line["p"] for s, e in pairs[0]["subsets"].items()
                       for name, line in e["metrics"].items() if line["p"] is not None}}  # B's printed p-values
    for family in HOLM_FAMILIES:
        decide(pairs, "baseline", alpha, family)
        board = {(p["b"], s, name) for p in pairs for s, e in p["subsets"].items()
                 for name, line in e["metrics"].items() if line["marker"]}
        out[family] = {"row": {m for m in board if m[0] == "B"}, "board": board}
    return out


def cell(n: int, datasets: int, seed: int, effect: bool = False, alpha: float = ALPHA, rate: float = RATE,
         boot: Bootstrap = Bootstrap()) -> dict:
    """Per option, the rate of datasets with any mark in B's row and on the board (fixed seed); `nested`: whether
    every dataset's leaderboard marks were among its pair marks and those among its subset marks (Holm over a
    larger family never marks more)."""
    rng = np.random.default_rng([seed, n, int(effect)] + ([] if rate == RATE else [round(rate * 100)]))
    counts = {f: {"row": 0, "board": 0} for f in HOLM_FAMILIES}
    printed: dict = {}  # (subset, metric) -> [datasets whose p was printed, of them p < alpha]
    nested = True
    for _ in range(datasets):
        got = marks(n, rng, boot, alpha, effect, rate)
        for line, p in got.pop("p").items():
            seen = printed.setdefault(line, [0, 0])
            seen[0] += 1
            seen[1] += p < alpha
        for family, where in got.items():
            for key, marked in where.items():
                counts[family][key] += bool(marked)
        nested &= got["leaderboard"]["board"] <= got["pair"]["board"] <= got["subset"]["board"]
    return {"n": n, "datasets": datasets, "bound": bound(alpha, datasets), "nested": nested,
            "rates": {f: {k: v / datasets for k, v in c.items()} for f, c in counts.items()},
            "printed_p": {line: (k, r / k, bound(alpha, k)) for line, (k, r) in printed.items()}}


DEGENERATE = ((8, 0.5), (30, 0.2))


def degenerate(r: dict, rate: float) -> list[str]:
    """A degenerate cell's rows (each option's row and board rates, the largest printed-p rate over lines printed in
    at least 20 datasets); what exceeds its bound."""
    shown = {line: g for line, g in r["printed_p"].items() if g[0] >= 20}
    worst = max(shown.items(), key=lambda x: x[1][1] - x[1][2], default=None)
    bad = [f"{line} printed p at n = {r['n']}, chance {rate}" for line, g in shown.items() if g[1] > g[2]]
    for family, got in r["rates"].items():
        held = {"subset": None, "pair": got["row"], "leaderboard": got["board"]}[family]
        ok = "per subset only" if held is None else ("yes" if held <= r["bound"] else "NO")
        bad += [f"{family} at n = {r['n']}, chance {rate}"] if ok == "NO" else []
        most = "-" if worst is None else f"{worst[1][1]:.4f} ({worst[0][1]}, {worst[1][0]}), bound {worst[1][2]:.4f}"
        print(f"| {r['n']}, {rate} | {family} | {got['row']:.4f} | {got['board']:.4f} | {r['bound']:.4f} | {ok} | "
              f"{most} |", flush=True)
    return bad + ([] if r["nested"] else [f"nesting at n = {r['n']}, chance {rate}"])


def main() -> None:
    args = arguments(__doc__)
    from .common import load as machine_load

    t0 = time.perf_counter()
    print(f"null: {args.datasets} datasets per cell, three systems (A the baseline, B, C) on the four scored v1.0 "
          f"subsets, speaking chance {RATE}, alpha {ALPHA}, bootstrap 2000 resamples; bound = alpha + 3 MC standard "
          "errors")
    print("| n | compare.family | any mark in B's summary row | any mark on the board (B, C) | bound | holds |")
    print("|---|---|---|---|---|---|")
    bad, cells = [], []
    for n in SIZES:
        r = cell(n, args.datasets, args.seed)
        for family, rate in r["rates"].items():
            # what each option promises: subset per subset only (no row claim), pair a row, leaderboard the board
            held = {"subset": None, "pair": rate["row"], "leaderboard": rate["board"]}[family]
            ok = "per subset only" if held is None else ("yes" if held <= r["bound"] else "NO")
            bad += [f"{family} at n = {n}"] if ok == "NO" else []
            print(f"| {n} | {family} | {rate['row']:.4f} | {rate['board']:.4f} | {r['bound']:.4f} | {ok} |", flush=True)
        if not r["nested"]:
            bad.append(f"nesting at n = {n}")
        cells.append(r)
    print("\nevery printed p (B against A, every metric with a test, headline or not): the share of the datasets "
          "where it was printed with p < alpha; bound alpha + 3 MC standard errors over those datasets")
    print("| subset | metric | " + " | ".join(f"n = {r['n']}: p < alpha (printed in) | bound" for r in cells)
          + " | ok |\n|---|---|" + "---|---|" * len(cells) + "---|")
    for line in cells[0]["printed_p"]:
        got = [r["printed_p"].get(line) for r in cells]
        ok = all(g is None or g[1] <= g[2] for g in got)
        bad += [f"{line} printed p"] if not ok else []
        print(f"| {line[0]} | {line[1]} | " + " | ".join("- | -" if g is None else f"{g[1]:.4f} ({g[0]}) | {g[2]:.4f}"
                                                         for g in got) + f" | {'yes' if ok else 'NO'} |", flush=True)
    print("\ndegenerate cells: few pairs (n = 8: most lines cannot decide) and a speaking chance of 0.2 (most latency "
          "medians not reached)")
    print("| n, chance | compare.family | row | board | bound | holds | largest printed-p rate (line, printed in) |")
    print("|---|---|---|---|---|---|---|")
    for n, rate in DEGENERATE:
        bad += degenerate(cell(n, args.datasets, args.seed, rate=rate), rate)
    null_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    print(f"\npower: {args.power_datasets} datasets per cell (B speaks 0.1 more often, 0.8 s sooner)")
    print("| n | compare.family | any mark in B's summary row |\n|---|---|---|")
    for n in SIZES:
        r = cell(n, args.power_datasets, args.seed, effect=True)
        for family, rate in r["rates"].items():
            print(f"| {n} | {family} | {rate['row']:.3f} |", flush=True)
    print(f"\nnull table {null_s:.0f} s, power {time.perf_counter() - t1:.0f} s; {machine_load()}")
    if bad:
        raise SystemExit("above the bound, or not nested: " + ", ".join(bad))


if __name__ == "__main__":
    main()
