"""Ten thousand captures in one job: every stage as the process a user runs, at 1,000, 3,000 and 10,000 captures.

    python -m benchmarks.scale [--sizes 1000,3000,10000] [--workdir DIR] [--stages score,compare,report,sweep]

For each size N, two synthetic systems (system=mixed and system=prompt, seed 0: the same samples) are written to
disk with every v1.0 subset in the release's proportions (the release's 727 samples scaled to N; real synthetic
speech from the word bank), untimed and kept in --workdir. Then, each as its own `fdbu` process, timed:

- `fdbu score` of each system (batched VAD, default device; a cold probability cache per size, into which this
  machine's calibration is copied first, as a node pays it once, not per job),
- `fdbu compare` of the two, `fdbu report` of the two (reading compare's output, as `make demo` does),
- a default `fdbu sweep` of the first system (its probabilities from score's cache, as a user runs it after score).

Recorded per stage: wall time, CPU time (user + system of the process and its children), peak RSS (the largest
resident set of the process or any child, forked from a fresh interpreter so that
the benchmark's own memory is not counted: `common.measured`), and disk written (the bytes of its outputs, plus
the probability cache it filled). The table ends with the peak RSS slope per 1,000 captures (least squares over
the sizes) and wall time per 1,000 captures, and the machine's load before and after.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from fdbu import tasks

from .common import load as machine_load, machine, measured, parse

SYSTEMS = ("mixed", "prompt")
STAGES = ("score", "compare", "report", "sweep")


def sizes_for(n: int) -> dict[str, int]:
    """Each v1.0 subset's size when the release's 727 samples are scaled to n (largest remainders, summing to n)."""
    release = tasks.release_sizes("v1.0")
    total = sum(release.values())
    exact = {k: v * n / total for k, v in release.items()}
    out = {k: int(x) for k, x in exact.items()}
    for k in sorted(exact, key=lambda k: (out[k] - exact[k], k))[:n - sum(out.values())]:
        out[k] += 1
    return out


def fdbu() -> list[str]:
    return [sys.executable, "-m", "fdbu"]


def tree_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


def run(cmd: list[str], log: Path) -> dict:
    """One process: wall seconds, CPU seconds (itself and its children) and peak RSS in MB (`common.measured`)."""
    with open(log, "w") as out:
        row = measured(cmd, stdout=out, stderr=subprocess.STDOUT)
    if row.pop("returncode") != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: see {log}")
    row.pop("stderr")
    return row


def synth(root: Path, n: int) -> list[Path]:
    trees = []
    for system in SYSTEMS:
        tree = root / f"tree-{system}"
        if not (tree / "manifest.json").exists():
            shutil.rmtree(tree, ignore_errors=True)
            subprocess.run([*fdbu(), "synth", f"out={tree}", "n={" + ",".join(f"{k}:{v}" for k, v in sizes_for(n).items()) + "}", "seed=0",
                            f"system={system}", "progress=false"], check=True, stdout=subprocess.DEVNULL)
        trees.append(tree)
    return trees


def calibrated(work: Path) -> Path:
    """This machine's calibration of the batched backend, measured once (untimed) and copied into each size's cache."""
    cache = work / "calibration-cache"
    if not (cache / "vad-probs" / "calibration").exists():
        subprocess.run([*fdbu(), "calibrate", f"cache_dir={cache}", "progress=false"], check=True,
                       stdout=subprocess.DEVNULL)
    return cache / "vad-probs" / "calibration"


def one_size(work: Path, n: int, stages: tuple[str, ...], calibration: Path) -> list[dict]:
    root = work / f"n{n}"
    trees = synth(root, n)
    cache = root / "cache"
    shutil.rmtree(cache, ignore_errors=True)
    shutil.copytree(calibration, cache / "vad-probs" / "calibration")
    runs = root / "runs"
    shutil.rmtree(runs, ignore_errors=True)
    runs.mkdir()
    for t in trees:  # score writes into the tree, where compare and report read it
        for name in ("unified.json", "unified-samples.jsonl"):
            (t / name).unlink(missing_ok=True)
    names = f"names=[{','.join(SYSTEMS)}]"
    listed = f"trees=[{','.join(map(str, trees))}]"
    cmds = {
        **{f"score {s}": ([*fdbu(), "score", f"tree={t}", f"cache_dir={cache}", "progress=false"], t)
           for s, t in zip(SYSTEMS, trees)},
        "compare": ([*fdbu(), "compare", listed, names, f"out={runs / 'compare'}", "progress=false"], runs / "compare"),
        "report": ([*fdbu(), "report", listed, names, f"out={runs / 'report'}", f"report.compare={runs / 'compare'}",
                    "progress=false"], runs / "report"),
        "sweep": ([*fdbu(), "sweep", f"tree={trees[0]}", f"out={runs / 'sweep'}", f"cache_dir={cache}",
                   "progress=false"], runs / "sweep"),
    }
    rows = []
    for stage, (cmd, out) in cmds.items():
        if stage.split()[0] not in stages:
            continue
        before = tree_bytes(cache) + tree_bytes(out)
        row = run(cmd, runs / f"{stage.replace(' ', '-')}.log")
        row.update(n=n, stage=stage, disk_mb=(tree_bytes(out) + tree_bytes(cache) - before) / 1e6)
        rows.append(row)
        print(f"  {n} {stage}: {row['wall_s']:.1f} s wall, {row['cpu_s']:.1f} s CPU, {row['rss_mb']:.0f} MB, "
              f"{row['disk_mb']:.1f} MB written", flush=True)
    return rows


def slope(xs: list[float], ys: list[float]) -> float:
    """Least-squares slope of ys over xs."""
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / den if den else float("nan")


def table(rows: list[dict]) -> str:
    out = ["| captures | stage | wall | CPU | peak RSS | disk written |", "|---:|---|---:|---:|---:|---:|"]
    out += [f"| {r['n']:,} | {r['stage']} | {r['wall_s']:.1f} s | {r['cpu_s']:.1f} s | {r['rss_mb']:.0f} MB | "
            f"{r['disk_mb']:.1f} MB |" for r in rows]
    sizes = sorted({r["n"] for r in rows})
    if len(sizes) > 1:
        out += ["", "| stage | peak RSS slope per 1,000 captures | wall per 1,000 captures (largest size) |",
                "|---|---:|---:|"]
        for stage in dict.fromkeys(r["stage"] for r in rows):
            mine = [r for r in rows if r["stage"] == stage]
            rss = slope([r["n"] / 1000 for r in mine], [r["rss_mb"] for r in mine])
            big = max(mine, key=lambda r: r["n"])
            out.append(f"| {stage} | {rss:+.1f} MB | {big['wall_s'] / big['n'] * 1000:.1f} s |")
    return "\n".join(out)


def main() -> None:
    args, work = parse(__doc__, files=0, sizes=(str, "1000,3000,10000"), stages=(str, ",".join(STAGES)))
    sizes = [int(s) for s in args.sizes.split(",")]
    stages = tuple(args.stages.split(","))
    print(f"before: {machine_load()}", flush=True)
    calibration = calibrated(work)
    rows: list[dict] = []
    for n in sizes:
        rows += one_size(work, n, stages, calibration)
        (work / "scale.json").write_text(json.dumps(rows, indent=1))
    print(f"after: {machine_load()}\n{machine()}\n\n{table(rows)}")


if __name__ == "__main__":
    main()
