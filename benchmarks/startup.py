"""Start-up: two fdbu installations (before and after issue 21) doing the same work, whole processes.

    python -m benchmarks.startup --before /work/main/.venv/bin/fdbu --after .venv/bin/fdbu [--files 200]

Timed, alternating the two executables, best of --runs: `fdbu score --help`, and `fdbu score` of a
tree of --files interruption captures whose speech probabilities are already in the cache (both
share one cache_dir, filled by one untimed run), so the work left is start-up, reading the tree,
segments, metrics and writing. Both runs' unified.json must be the same bytes.
"""
from __future__ import annotations

import subprocess
import time

from .common import captures, load as machine_load, machine, parse


def timed(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main() -> None:
    args, work = parse(__doc__, files=200, before=(str, None), after=(str, ".venv/bin/fdbu"), runs=(int, 5))
    ways = {"before": args.before, "after": args.after}
    tree = captures(work, args.files)
    cache = work / "cache"
    score = {name: [exe, "score", f"tree={tree}", f"out={work / name}", f"cache_dir={cache}", "progress=false",
                    "vad.backend=batched", f"device={args.device}"] for name, exe in ways.items()}
    subprocess.run(score["after"], check=True, stdout=subprocess.DEVNULL)  # fills the cache (untimed)
    best = {(name, what): float("inf") for name in ways for what in ("help", "score")}
    for _ in range(args.runs):
        for name, exe in ways.items():
            best[name, "help"] = min(best[name, "help"], timed([exe, "score", "--help"]))
            best[name, "score"] = min(best[name, "score"], timed(score[name]))
    same = (work / "before" / "unified.json").read_bytes() == (work / "after" / "unified.json").read_bytes()
    print(f"{machine()}; {machine_load()}")
    print(f"cached score of {args.files} captures: unified.json identical: {same}")
    print("| work | before | after | ratio |\n|---|---:|---:|---:|")
    for what, label in (("help", "`fdbu score --help`"), ("score", f"cached `fdbu score`, {args.files} captures")):
        b, a = best["before", what], best["after", what]
        print(f"| {label} | {b:.2f} s | {a:.2f} s | {b / a:.1f}x |")


if __name__ == "__main__":
    main()
