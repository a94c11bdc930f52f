"""Each figure step a user waits for, on the demo's trees: compare's figures, the report's, the sweep's heatmaps.

    python -m benchmarks.figures [--runs 3] [--workdir DIR]

The demo's trees (synth n=8 seed=0, mixed and prompt, scored: `benchmarks.first_output.demo`), the comparison and
the default 5 x 5 sweep of mixed computed once; then each figure step in this process (PNG and PDF bytes, as the
commands write them), best of `--runs` after one warm-up (matplotlib's imports and font cache outside the timing).
"""
from __future__ import annotations

import time

from fdbu.comparison.files import figures as compare_figures
from fdbu.metrics.stats import Bootstrap
from fdbu.comparison.pairwise import compare
from fdbu.figures.sweep import sweep_heatmaps
from fdbu.reporting.site import figures as report_figures
from fdbu.scoring.sweep import SPEC, grid, sweep
from fdbu.comparison.systems import load
from fdbu.vad import SpeechDetector

from .common import load as machine_load, machine, parse
from .first_output import demo


def best(step, runs: int) -> float:
    step()
    out = float("inf")
    for _ in range(runs):
        t0 = time.perf_counter()
        step()
        out = min(out, time.perf_counter() - t0)
    return out


def main() -> None:
    args, work = parse(__doc__, files=0, runs=(int, 3))
    root = work / "demo"
    demo(root)
    systems = [load(root / name, name) for name in ("mixed", "prompt")]
    result = compare(systems)
    swept = sweep([root / "mixed"], SpeechDetector(backend="batched", device="cpu"), Bootstrap(),
                  grid([0.3, 0.4, 0.5, 0.6, 0.7], [50, 100, 200, 300, 500]))
    print(f"{machine()}; {machine_load()}; best of {args.runs}")
    print("| figure step | seconds |\n|---|---:|")
    for name, step in (("compare: latency curves + forest (PNG + PDF)", lambda: compare_figures(result, systems)),
                       ("report: its figures", lambda: report_figures(systems, result, "page")),
                       ("sweep: the heatmaps", lambda: sweep_heatmaps(swept, SPEC))):
        print(f"| {name} | {best(step, args.runs):.2f} |", flush=True)
    print(f"\n{machine_load()}")


if __name__ == "__main__":
    main()
