"""Two systems' matched controls compared (`fdbu compare` on v1.5, docs: Definitions 87-90) under the null, and
its power: how often a line is marked when the two systems' reactions to the event do not differ.

    python -m benchmarks.control_compare_calibration [--datasets 2000] [--power-datasets 500] [--seed 0]
        [--synth-seeds 5]

Every dataset is n samples in both systems' matched controls, decided by the code `fdbu compare` runs
(`fdbu.families.v1_5.control_pairs.compare_components`: the exact sign-flip test of the per-sample differences of the
event-attributable outcomes, the paired bootstrap of the stop latency shifts' difference), Holm over the two
headline lines (compare's family also holds the subset's other headline lines, so its markers are rarer still).
Sample i has its own stop-time scale s_i ~ U(0.2, 3) s; system S's clean run stops after m_S s_i Exp(1) s after
o_s (never, +infinity, for a share q = 0.2 of runs: the answer runs to the end); in its event run the system reacts
with chance r_S, stopping U(0, 0.5) s after o_s, and otherwise stops as the run's own draw says:

- same: both systems m = 1, r = 0.3, the event run's own draw independent of the clean run's (so a sample can stop
  within 1 s in the clean run and not in the event run: outcomes -1, 0, 1): the two systems exchangeable;
- clean runs differ: A's answers end on their own sooner (m_A = 1) than B's (m_B = 3), each reacting with the chance
  that makes the event-attributable rate within 1 s the same (r_S P(clean stop > 1 s) = 0.25), the event run
  otherwise the clean run's stop: each run's stop rate differs between the systems (a comparison of the event runs
  alone marks it: the column "event run alone"), the stops the event causes do not; the pairs are not exchangeable;
- outcomes spread differently: A's outcome is +1 with chance 0.25, else 0; B's +1 with chance 0.35, -1 with 0.10,
  else 0 (the same mean, 0.25; differences of -2 to 2; the pairs not exchangeable; a null of the attributable line);
- shift, clean runs differ: the event run is its own draw of the clean run's law, stopped 0.5 s sooner
  (max(0, e - 0.5 s)), m_A = 1, m_B = 3: the same median shift (-0.5 s) over clean runs that differ (a null of the
  shift line only).

Each cell reports each line's rejection rate where the line is null (raw p < alpha with a reason-free test: what
compare would put in the Holm family) and the family-wise rate of a marker on the lines that are null, and for the
event-attributable line how often its 95% interval leaves out 0 and how often that disagrees with p < alpha; the bound is
alpha + 3 sqrt(alpha (1 - alpha) / D), three Monte Carlo standard errors over D datasets. Power: A yields (r = 0.9)
against B talking through (r = 0), and r = 0.5 against r = 0.2.

Then, through the command line as a user runs it, `fdbu synth family=v1.5 n=30` for several seeds, each seed's
systems scored and compared: yields against talks_through (they differ only in how they react to the event),
against same_stop (the event runs alike, the clean runs not: same_stop's answers end there anyway) and against
clean_silent (the event runs alike, silent clean runs: no control, nothing compared).
"""
from __future__ import annotations

import time

import numpy as np

from fdbu.kernels import INF
from fdbu.families.v1_5 import control_pairs
from fdbu.families.v1_5.control import HEADLINE, SHIFT
from fdbu.metrics.paired import ALPHA, holm, mcnemar_exact
from fdbu.metrics.stats import Bootstrap

from .calibration import arguments, bound
from .control_calibration import components

US = 1_000_000
SIZES = (8, 30, 100)
NEVER = 0.2


def _clean(rng, scale: np.ndarray, m: float) -> np.ndarray:
    n = len(scale)
    return np.where(rng.random(n) < NEVER, INF, np.round(m * scale * rng.exponential(1.0, n) * US).astype(np.int64))


def system(rng, scale: np.ndarray, scenario: str, m: float, r: float) -> tuple[np.ndarray, np.ndarray]:
    """(event run's, clean run's) stop latencies of one system on the samples, as the docstring says."""
    n = len(scale)
    clean = _clean(rng, scale, m)
    if scenario == "spread":  # m, r read as the chances of the outcomes +1 and -1
        u = rng.random(n)
        late = np.round(rng.uniform(1.5, 5.0, n) * US).astype(np.int64)
        early = np.round(rng.uniform(0.1, 0.9, n) * US).astype(np.int64)
        both = np.where(rng.random(n) < 0.5, early, late)  # outcome 0: the two runs on the same side of 1 s
        event = np.where(u < m, early, np.where(u < m + r, late, both))
        return event, np.where(u < m, late, np.where(u < m + r, early, both))
    if scenario == "shift":
        own = _clean(rng, scale, m)
        return np.where(own == INF, INF, np.maximum(0, own - US // 2)), clean
    own = _clean(rng, scale, m) if scenario == "same" else clean
    react = rng.random(n) < r
    return np.where(react, np.round(rng.uniform(0.0, 0.5, n) * US).astype(np.int64), own), clean


def react_for(m: float, rate: float = 0.25, draws: int = 2_000_000, seed: int = 99) -> float:
    """The reaction chance r with r P(clean stop > 1 s) = rate for clean runs m s Exp(1), s ~ U(0.2, 3), never 0.2."""
    rng = np.random.default_rng(seed)
    stop = m * rng.uniform(0.2, 3.0, draws) * rng.exponential(1.0, draws)
    beyond = NEVER + (1 - NEVER) * float(np.mean(stop > 1.0))
    return rate / beyond


SCENARIOS = {  # name -> ((m_A, r_A), (m_B, r_B)), the lines it is a null of
    "same": (((1.0, 0.3), (1.0, 0.3)), (HEADLINE, SHIFT)),
    "clean runs differ": (((1.0, None), (3.0, None)), (HEADLINE,)),
    "shift, clean runs differ": (((1.0, 0.0), (3.0, 0.0)), (SHIFT,)),
    "outcomes spread differently": (((0.25, 0.0), (0.35, 0.10)), (HEADLINE,)),
}
POWER = {"yields vs talks through": ((1.0, 0.9), (1.0, 0.0)), "r 0.5 vs 0.2": ((1.0, 0.5), (1.0, 0.2))}


def cell(n: int, scenario: str, datasets: int, seed: int, resamples: int = 2000, alpha: float = ALPHA,
         params=None) -> dict:
    """Each headline line's rejection rate, the family-wise marker rate on the null lines, and the event runs'
    own comparison (exact McNemar of "stopped within 1 s" in the event runs), over `datasets` datasets."""
    kind = "shift" if scenario.startswith("shift") else "same" if scenario == "same" else \
        "spread" if scenario.startswith("outcomes") else "clean"
    if params is None:
        (a, b), null = SCENARIOS[scenario]
        a, b = [(m, react_for(m) if r is None else r) for m, r in (a, b)]  # (+1, -1 chances where "spread")
    else:
        (a, b), null = params, ()
    rng = np.random.default_rng([seed, n, sum(map(ord, scenario))])
    rejected = {HEADLINE: 0, SHIFT: 0}
    family = naive = excludes = disagree = 0
    for k in range(datasets):
        scale = rng.uniform(0.2, 3.0, n)
        ca, cb = (components(*system(rng, scale, kind, m, r)) for m, r in (a, b))
        out = control_pairs.compare_components(ca, cb, "user_interruption", None, Bootstrap(resamples, k), alpha)
        lines = {name: out["metrics"][name] for name in (HEADLINE, SHIFT)}
        decidable = {name: line for name, line in lines.items() if line["p"] is not None and line["reason"] is None}
        for name, line in decidable.items():
            rejected[name] += line["p"] < alpha
        head = lines[HEADLINE]  # its interval against its test, whether the test can decide or not
        if head["p"] is not None:
            excludes += bool(head["difference"]["excludes_zero"])
            disagree += bool(head["difference"]["excludes_zero"]) != (head["p"] < alpha)
        adjusted = dict(zip(decidable, holm([line["p"] for line in decidable.values()])))
        family += any(adjusted[name] < alpha for name in adjusted if name in null or not null)
        ev_a, ev_b = (c.event.stop_us <= US for c in (ca, cb))
        naive += mcnemar_exact(int(np.count_nonzero(ev_a & ~ev_b)), int(np.count_nonzero(~ev_a & ev_b))) < alpha
    return {"n": n, "scenario": scenario, "datasets": datasets, "null": null,
            **{name: v / datasets for name, v in rejected.items()}, "family": family / datasets,
            "naive": naive / datasets, "excludes": excludes / datasets, "disagree": disagree / datasets,
            "bound": bound(alpha, datasets)}


def synthetic(seeds: int, work) -> list[dict]:
    """Per seed and v1.5 subset, the compared controls of yields against each other system (fdbu synth, score and
    compare run as commands, n = 30 per subset)."""
    import json
    import subprocess
    import sys

    def fdbu(*argv: str) -> None:
        done = subprocess.run([sys.executable, "-m", "fdbu", *argv, "progress=false"], capture_output=True, text=True)
        if done.returncode:
            raise SystemExit(f"fdbu {' '.join(argv)}: {done.stderr.strip()}")

    others = ("talks_through", "same_stop", "clean_silent")
    out = []
    for seed in range(seeds):
        trees = []
        for name in ("yields", *others):
            tree = work / f"s{seed}" / name
            fdbu("synth", f"out={tree}", "n=30", f"seed={seed}", f"system={name}", "family=v1.5", "ineligible=0")
            fdbu("score", f"tree={tree}", "vad.threads=2", "vad.cache=false")
            trees.append(str(tree))
        fdbu("compare", f"trees=[{','.join(trees)}]", f"names=[yields,{','.join(others)}]", f"out={work / f's{seed}' / 'cmp'}",
             "plot=false")
        doc = json.loads((work / f"s{seed}" / "cmp" / "compare.json").read_text())
        for pair in doc["pairs"]:
            for subset, section in pair["entries"]["control"].items():
                line = section["metrics"][HEADLINE]
                out.append({"seed": seed, "b": pair["b"], "subset": subset, "n": line["n"], "marker": line["marker"],
                            "diff": line["difference"]["value"],
                            "per_run": pair["subsets"][subset]["metrics"]["stop_rate_1s"]["marker"]})
    return out


def main() -> None:
    import argparse
    import sys

    extra = argparse.ArgumentParser(add_help=False)
    extra.add_argument("--synth-seeds", type=int, default=5)
    known, rest = extra.parse_known_args()
    sys.argv = [sys.argv[0], *rest]
    args = arguments(__doc__)
    from .common import load as machine_load

    print(machine_load())
    t0 = time.perf_counter()
    print(f"null: {args.datasets} datasets per cell, alpha {ALPHA}, bootstrap 2000 resamples; a line's rate: raw p < "
          "alpha where its test can decide; family: a Holm marker on a null line; bound: alpha + 3 MC s.e.")
    print("| scenario | n | attributable stop 1 s | stop latency shift | family | event run alone | bound | ok | "
          "interval excludes 0 | interval and p disagree |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    bad = []
    for scenario, (_, null) in SCENARIOS.items():
        for n in SIZES:
            r = cell(n, scenario, args.datasets, args.seed)
            shown = {name: f"{r[name]:.4f}" if name in null else f"({r[name]:.3f})" for name in (HEADLINE, SHIFT)}
            ok = all(r[name] <= r["bound"] for name in null) and r["family"] <= r["bound"]
            bad += [] if ok else [(scenario, n)]
            print(f"| {scenario} | {n} | {shown[HEADLINE]} | {shown[SHIFT]} | {r['family']:.4f} | {r['naive']:.3f} "
                  f"| {r['bound']:.4f} | {'yes' if ok else 'NO'} | {r['excludes']:.4f} | {r['disagree']:.4f} |",
                  flush=True)
    null_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    print(f"\npower: {args.power_datasets} datasets per cell (same clean runs, m = 1; rates in parentheses: the line "
          "is not null there)")
    print("| systems | n | attributable stop 1 s | any marker |")
    print("|---|---|---|---|")
    for name, params in POWER.items():
        for n in (8, 30, 100):
            r = cell(n, "same", args.power_datasets, args.seed, params=params)
            print(f"| {name} | {n} | {r[HEADLINE]:.3f} | {r['family']:.3f} |", flush=True)
    print(f"\nnull table {null_s:.0f} s, power {time.perf_counter() - t1:.0f} s; {machine_load()}")
    if known.synth_seeds:
        synthetic_table(known.synth_seeds)
    if bad:
        raise SystemExit(f"a null cell is above its bound: {bad}")


def synthetic_table(seeds: int) -> None:
    """`synthetic` over `seeds` seeds, printed as RESULTS.md's table."""
    import tempfile
    from pathlib import Path

    from .common import load as machine_load

    t2 = time.perf_counter()
    with tempfile.TemporaryDirectory() as work:
        rows = synthetic(seeds, Path(work))
        print(f"\nfdbu synth family=v1.5 n=30, seeds 0..{seeds - 1}, scored and compared: yields against "
              "each; datasets (seed x subset) whose event_attributable_stop_rate_1s line is marked, and whose per-run "
              "stop_rate_1s is")
        print("| b | datasets | n in both controls | b - a (median) | compared controls marked | per-run stop rate marked |")
        print("|---|---|---|---|---|---|")
        for b in ("talks_through", "same_stop", "clean_silent"):
            mine = [r for r in rows if r["b"] == b]
            diffs = sorted(r["diff"] for r in mine if r["diff"] is not None)
            median = f"{diffs[(len(diffs) - 1) // 2]:+.3f}" if diffs else "n/a"
            print(f"| {b} | {len(mine)} | {min(r['n'] for r in mine)}-{max(r['n'] for r in mine)} | {median} | "
                  f"{sum(r['marker'] for r in mine)} | {sum(r['per_run'] for r in mine)} |")
        print(f"\nsynthetic {time.perf_counter() - t2:.0f} s; {machine_load()}")


if __name__ == "__main__":
    main()
