"""Start-up: two fdbu installations (before and after issue 21) doing the same work, whole processes.

    python -m benchmarks.startup --before /work/main/.venv/bin/fdbu --after .venv/bin/fdbu [--files 200]

Timed, alternating the two executables, best of --runs: `fdbu score --help`, and `fdbu score` of a
tree of --files interruption captures whose speech probabilities are already in the cache (both
share one cache_dir, filled by one untimed run), so the work left is start-up, reading the tree,
segments, metrics and writing. Both runs' unified.json must be the same bytes. Wall time and the
process's CPU time (user + system) are both recorded: on a busy shared machine the CPU time is what
a quiet machine's wall time would be.
"""
from __future__ import annotations

import resource
import subprocess
import time

from .common import captures, load as machine_load, machine, parse


def timed(cmd: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the child process)."""
    def cpu():
        r = resource.getrusage(resource.RUSAGE_CHILDREN)
        return r.ru_utime + r.ru_stime

    c0, t0 = cpu(), time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0, cpu() - c0


def main() -> None:
    args, work = parse(__doc__, files=200, before=(str, None), after=(str, ".venv/bin/fdbu"), runs=(int, 5))
    ways = {"before": args.before, "after": args.after}
    tree = captures(work, args.files)
    cache = work / "cache"
    score = {name: [exe, "score", f"tree={tree}", f"out={work / name}", f"cache_dir={cache}", "progress=false",
                    "vad.backend=batched", f"device={args.device}"] for name, exe in ways.items()}
    subprocess.run(score["after"], check=True, stdout=subprocess.DEVNULL)  # fills the cache (untimed)
    best = {(name, what): (float("inf"), float("inf")) for name in ways for what in ("help", "score")}
    for _ in range(args.runs):
        for name, exe in ways.items():
            for what, cmd in (("help", [exe, "score", "--help"]), ("score", score[name])):
                best[name, what] = tuple(map(min, best[name, what], timed(cmd)))
    same = (work / "before" / "unified.json").read_bytes() == (work / "after" / "unified.json").read_bytes()
    print(f"{machine()}; {machine_load()}")
    print(f"cached score of {args.files} captures: unified.json identical: {same}")
    print("| work | before: wall / CPU | after: wall / CPU | ratio (wall / CPU) |\n|---|---:|---:|---:|")
    for what, label in (("help", "`fdbu score --help`"), ("score", f"cached `fdbu score`, {args.files} captures")):
        (bw, bc), (aw, ac) = best["before", what], best["after", what]
        print(f"| {label} | {bw:.2f} s / {bc:.2f} s | {aw:.2f} s / {ac:.2f} s | {bw / aw:.1f}x / {bc / ac:.1f}x |")


if __name__ == "__main__":
    main()
