"""A 25-point VAD sweep against one scoring pass, and against 25 separate reference runs.

    python -m benchmarks.sweep [--files 200] [--device cpu] [--workdir DIR] [--reference 0] [--runs 3] [--commands 1]

On the same tree of N interruption captures (20-30 s), cache off: one `fdbu score` pass
with batched VAD; the default 5 x 5 sweep (thresholds x minimum silences); and one
scoring pass with the reference backend, which 25 separate reference runs would repeat
25 times (one run is measured; the 25-run figure is 25 times it).

The pass and the sweep alternate `--runs` times and each is its best: on a shared machine one
run of either can be a third slower than the next.

With `--commands 1` (the default), then the commands as users run them, each a fresh process, alternating: `fdbu
score tree=T vad.cache=false`, `fdbu sweep tree=T out=O vad.cache=false` (its figures drawn, the default) and the
same sweep with `plot=false`; the sweep with its figures must stay within 1.5x the scoring command (exit 1 if not).
"""
from __future__ import annotations


from fdbu.metrics.stats import Bootstrap
from fdbu.scoring.pipeline import score_path
from fdbu.scoring.sweep import grid, sweep
from fdbu.vad import SpeechDetector

from .common import Timer, captures, load as machine_load, machine, parse, verdict

BOUND = 1.5  # the sweep as run, figures drawn, against one scoring command


def commands(tree, work, runs: int, device: str) -> None:
    """The scoring command and the sweep command (figures on, then off) as a user runs them, best of `runs`."""
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    fdbu = str(Path(sys.executable).parent / "fdbu")
    common = ["vad.cache=false", "progress=false", f"device={device}"]
    lines = {"fdbu score tree=T vad.cache=false": [fdbu, "score", f"tree={tree}", *common],
             "fdbu sweep tree=T out=O vad.cache=false": [fdbu, "sweep", f"tree={tree}", f"out={work / 'sw'}", *common],
             "the same sweep, plot=false": [fdbu, "sweep", f"tree={tree}", f"out={work / 'sw'}", *common, "plot=false"]}
    best = dict.fromkeys(lines, float("inf"))
    for _ in range(runs):
        for name, argv in lines.items():
            shutil.rmtree(work / "sw", ignore_errors=True)
            with Timer() as t:
                done = subprocess.run(argv, capture_output=True, text=True)
            if done.returncode:
                raise SystemExit(f"{name}: exit {done.returncode}: {done.stderr.strip()[-400:]}")
            best[name] = min(best[name], t.s)
    score = best["fdbu score tree=T vad.cache=false"]
    print(f"\nthe commands as run (fresh processes, best of {runs}):\n| command | seconds | x the score command |")
    print("|---|---:|---:|")
    for name, s in best.items():
        print(f"| {name} | {s:.2f} | {s / score:.2f}x |")
    ratio = best["fdbu sweep tree=T out=O vad.cache=false"] / score
    verdict([f"the sweep with its figures at {ratio:.2f}x"] if ratio > BOUND else [],
            f"over {BOUND}x one scoring command")


def main() -> None:
    args, work = parse(__doc__, files=200, reference=(int, 1), runs=(int, 3), commands=(int, 1))
    tree = captures(work, args.files)
    boot = Bootstrap()
    points = grid([0.3, 0.4, 0.5, 0.6, 0.7], [50, 100, 200, 300, 500])
    _ = SpeechDetector(backend="batched", device=args.device, cache=False).batched  # load outside the timing
    score_path(tree, SpeechDetector(backend="batched", device=args.device, cache=False), boot)  # warm caches, jit
    best = {"pass": float("inf"), "sweep": float("inf")}
    for _ in range(args.runs):
        with Timer() as one:
            score_path(tree, SpeechDetector(backend="batched", device=args.device, cache=False), boot)
        det = SpeechDetector(backend="batched", device=args.device, cache=False)
        with Timer() as sw:
            sweep([tree], det, boot, points)
        best = {"pass": min(best["pass"], one.s), "sweep": min(best["sweep"], sw.s)}
    print(f"machine: {machine()}; device {args.device}; {args.files} interruption captures; {machine_load()}")
    print(f"  one scoring pass, batched VAD:   {best['pass']:.2f} s (best of {args.runs})")
    print(f"  25-point sweep, batched VAD:     {best['sweep']:.2f} s = {best['sweep'] / best['pass']:.2f}x one scoring "
          f"pass ({det.stats.recomputed} files recomputed by the guard over the grid)")
    if args.reference:
        with Timer() as ref:
            score_path(tree, SpeechDetector(backend="reference", cache=False), boot)
        print(f"  one scoring pass, reference VAD: {ref.s:.2f} s; 25 such runs: {25 * ref.s:.0f} s "
              f"= {25 * ref.s / best['sweep']:.0f}x the sweep")
    if args.commands:
        commands(tree, work, args.runs, args.device)


if __name__ == "__main__":
    main()
