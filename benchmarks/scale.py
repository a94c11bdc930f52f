"""Ten thousand captures in one job: every stage as the process a user runs, at 1,000, 3,000 and 10,000 captures.

    python -m benchmarks.scale [--sizes 1000,3000,10000] [--workdir DIR] [--stages score,compare,report,sweep]
                               [--before "COMMAND OF ANOTHER FDBU"]

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

With --before (the command that runs another fdbu version, e.g. `env PYTHONPATH=OLD_CHECKOUT python -P -m fdbu`),
every stage runs with that version and with this one, alternating stage by stage, each version with its own cache
and output folders (score still writes into the tree: both versions must write the same bytes, which is checked),
and the table gains the ratios.
"""
from __future__ import annotations

import hashlib
import json
import shlex
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


VERSION = [sys.executable, "-m", "fdbu"]  # this checkout's fdbu; --before sets another beside it


def fdbu() -> list[str]:
    return VERSION


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


def one_size(work: Path, n: int, stages: tuple[str, ...], calibration: Path, versions: dict[str, list[str]]
             ) -> list[dict]:
    root = work / f"n{n}"
    trees = synth(root, n)
    plans = {name: plan(root, name, trees, exe, calibration) for name, exe in versions.items()}
    rows = []
    for stage in plans["after"]:
        if stage.split()[0] not in stages:
            continue
        for version, cmds in plans.items():
            cmd, out, cache, runs = cmds[stage]
            before = tree_bytes(cache) + tree_bytes(out)
            row = run(cmd, runs / f"{stage.replace(' ', '-')}.log")
            row.update(n=n, stage=stage, version=version, disk_mb=(tree_bytes(out) + tree_bytes(cache) - before) / 1e6)
            if stage.startswith("score"):
                row["unified_sha256"] = hashlib.sha256((out / "unified.json").read_bytes()).hexdigest()
            rows.append(row)
            print(f"  {n} {stage} ({version}): {row['wall_s']:.1f} s wall, {row['cpu_s']:.1f} s CPU, "
                  f"{row['rss_mb']:.0f} MB, {row['disk_mb']:.1f} MB written", flush=True)
    return rows


def plan(root: Path, version: str, trees: list[Path], exe: list[str], calibration: Path) -> dict:
    """stage -> (command, the folder it writes, its cache, its log folder) for one version."""
    cache = root / ("cache" if version == "after" else f"cache-{version}")
    shutil.rmtree(cache, ignore_errors=True)
    shutil.copytree(calibration, cache / "vad-probs" / "calibration")
    runs = root / ("runs" if version == "after" else f"runs-{version}")
    shutil.rmtree(runs, ignore_errors=True)
    runs.mkdir()
    for t in trees:  # score writes into the tree, where compare and report read it
        for name in ("unified.json", "unified-samples.jsonl"):
            (t / name).unlink(missing_ok=True)
    names = f"names=[{','.join(SYSTEMS)}]"
    listed = f"trees=[{','.join(map(str, trees))}]"
    cmds = {
        **{f"score {s}": ([*exe, "score", f"tree={t}", f"cache_dir={cache}", "progress=false"], t)
           for s, t in zip(SYSTEMS, trees)},
        "compare": ([*exe, "compare", listed, names, f"out={runs / 'compare'}", "progress=false"], runs / "compare"),
        "report": ([*exe, "report", listed, names, f"out={runs / 'report'}", f"report.compare={runs / 'compare'}",
                    "progress=false"], runs / "report"),
        "sweep": ([*exe, "sweep", f"tree={trees[0]}", f"out={runs / 'sweep'}", f"cache_dir={cache}",
                   "progress=false"], runs / "sweep"),
    }
    return {stage: (cmd, out, cache, runs) for stage, (cmd, out) in cmds.items()}


def slope(xs: list[float], ys: list[float]) -> float:
    """Least-squares slope of ys over xs."""
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / den if den else float("nan")


def versus(rows: list[dict]) -> str:
    """Each stage of each size, the other version against this one."""
    out = ["| captures | stage | before: wall / CPU / peak RSS | after: wall / CPU / peak RSS | ratio (wall / CPU) |",
           "|---:|---|---:|---:|---:|"]
    after = {(r["n"], r["stage"]): r for r in rows if r["version"] == "after"}
    for b in (r for r in rows if r["version"] == "before"):
        a = after[b["n"], b["stage"]]
        out.append(f"| {b['n']:,} | {b['stage']} | {b['wall_s']:.1f} s / {b['cpu_s']:.1f} s / {b['rss_mb']:.0f} MB | "
                   f"{a['wall_s']:.1f} s / {a['cpu_s']:.1f} s / {a['rss_mb']:.0f} MB | "
                   f"{b['wall_s'] / a['wall_s']:.2f}x / {b['cpu_s'] / a['cpu_s']:.2f}x |")
    same = all(b.get("unified_sha256") == after[b["n"], b["stage"]].get("unified_sha256")
               for b in rows if b["version"] == "before")
    return "\n".join(out + ["", f"unified.json the same bytes from both versions: {same}"])


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
    args, work = parse(__doc__, files=0, sizes=(str, "1000,3000,10000"), stages=(str, ",".join(STAGES)),
                       before=(str, None))
    sizes = [int(s) for s in args.sizes.split(",")]
    stages = tuple(args.stages.split(","))
    print(f"before: {machine_load()}", flush=True)
    calibration = calibrated(work)
    rows: list[dict] = []
    versions = {**({"before": shlex.split(args.before)} if args.before else {}), "after": VERSION}
    for n in sizes:
        rows += one_size(work, n, stages, calibration, versions)
        (work / "scale.json").write_text(json.dumps(rows, indent=1))
    mine = [r for r in rows if r["version"] == "after"]
    print(f"after: {machine_load()}\n{machine()}\n\n{table(mine)}")
    if args.before:
        print("\n" + versus(rows))


if __name__ == "__main__":
    main()
