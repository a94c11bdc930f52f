"""Fixed costs: two fdbu versions doing the same work as whole processes, alternating, best of --runs.

    python -m benchmarks.startup --before "env PYTHONPATH=/path/to/old/checkout .venv/bin/python -m fdbu" \
        [--after .venv/bin/fdbu] [--runs 5] [--workdir DIR]

The tree is a full-size synthetic one (n=release: the v1.0 release's 727 samples, seed 0), written once. Timed:

- `fdbu score --help`;
- a cached `fdbu score`: every speech probability already in the cache (both versions share one cache_dir, filled
  by one untimed run), so the work left is start-up, reading and checking the tree, segments, metrics and writing;
  both runs' unified.json must be the same bytes;
- a shard's start-up: `fdbu vad shard=0 shards=N` with N the tree's files Silero runs on, so the shard computes one
  file, from a fresh cache holding only this machine's calibrations (each version's engine's): everything a shard pays before and around its
  first file (imports, config, the tree, the model, the guard).

Wall time, the process's CPU time (user + system) and its peak RSS are recorded: on a busy shared machine the CPU
time is what a quiet machine's wall time would be.
"""
from __future__ import annotations

import shlex
import shutil
import subprocess

from fdbu.synth import synthesize
from fdbu.vad import stage

from .common import load as machine_load, machine, measured, parse


def timed(cmd: list[str]) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, peak RSS MB) of one process."""
    run = measured(cmd)
    if run["returncode"] != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {run['stderr']}")
    return run["wall_s"], run["cpu_s"], run["rss_mb"]


def main() -> None:
    args, work = parse(__doc__, files=0, before=(str, None), after=(str, ".venv/bin/fdbu"), runs=(int, 5))
    if args.before is None:
        raise SystemExit("--before: the command of the version to compare against")
    ways = {"before": shlex.split(args.before), "after": shlex.split(args.after)}
    tree = work / "release"
    if not (tree / "manifest.json").exists():
        shutil.rmtree(tree, ignore_errors=True)
        synthesize(tree, n="release", seed=0)
    cache = work / "cache"
    score = {name: [*exe, "score", f"tree={tree}", f"out={work / name}", f"cache_dir={cache}", "progress=false"]
             for name, exe in ways.items()}
    subprocess.run(score["after"], check=True, stdout=subprocess.DEVNULL)  # fills the cache (untimed)
    for exe in ways.values():  # each version's engine calibrated, so that no timed shard calibrates (untimed)
        subprocess.run([*exe, "calibrate", f"cache_dir={cache}", "progress=false"], check=True, stdout=subprocess.DEVNULL)
    files = len(stage.jobs([tree]))
    calibration = cache / "vad-probs" / "calibration"

    def shard(name: str) -> list[str]:
        fresh = work / f"shard-cache-{name}"
        shutil.rmtree(fresh, ignore_errors=True)
        shutil.copytree(calibration, fresh / "vad-probs" / "calibration")
        return [*ways[name], "vad", f"tree={tree}", "shard=0", f"shards={files}", f"cache_dir={fresh}",
                "progress=false"]

    what = {"help": lambda name: [*ways[name], "score", "--help"], "score": lambda name: score[name], "shard": shard}
    best = {(name, w): (float("inf"),) * 3 for name in ways for w in what}
    for _ in range(args.runs):
        for name in ways:
            for w, cmd in what.items():
                best[name, w] = tuple(map(min, best[name, w], timed(cmd(name))))
    same = (work / "before" / "unified.json").read_bytes() == (work / "after" / "unified.json").read_bytes()
    print(f"{machine()}; {machine_load()}")
    print(f"full-size tree (727 samples, {files} files Silero runs on); best of {args.runs}; cached score's "
          f"unified.json identical: {same}")
    print("| work | before: wall / CPU / peak RSS | after: wall / CPU / peak RSS | ratio (wall / CPU) |\n"
          "|---|---:|---:|---:|")
    labels = {"help": "`fdbu score --help`", "score": "cached `fdbu score`, full size",
              "shard": f"a shard's start-up (`fdbu vad shard=0 shards={files}`: one file)"}
    for w, label in labels.items():
        (bw, bc, br), (aw, ac, ar) = best["before", w], best["after", w]
        print(f"| {label} | {bw:.2f} s / {bc:.2f} s / {br:.0f} MB | {aw:.2f} s / {ac:.2f} s / {ar:.0f} MB | "
              f"{bw / aw:.2f}x / {bc / ac:.2f}x |")


if __name__ == "__main__":
    main()
