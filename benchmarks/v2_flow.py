"""The whole Full-Duplex-Bench v2 flow at the release's size: 200 sessions of about 120 s (4 splits of 50), two systems,
each step as a user runs it (one `fdbu` process per command), timed with its peak memory.

    python -m benchmarks.v2_flow [--n release] [--turns 14 18] [--work DIR]

Steps per system: synth layout=official (upstream's layout and a stub judge), export with export.judge and
export.transcripts=adopt, evaluate (score.py's and score_time.py's rows), score (Silero on both channels, 2 x 200 x
~120 s of audio, from an empty speech cache); then compare and report over the two. The speech cache is a fresh
folder (cache_dir=), so score computes every probability. What the user would run instead is upstream's pipeline,
which has no timing at all: there is no second way to time; the ratio that matters is score's audio seconds per
wall second, against the real-time a recording takes.
"""
from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from .common import load, machine
from .scale import fdbu as fdbu_command, run

SYSTEMS = ("attentive", "hesitant")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", default="release")
    ap.add_argument("--turns", type=int, nargs=2, default=[14, 18])
    ap.add_argument("--work", type=Path, default=None)
    args = ap.parse_args()
    print(load())
    work = args.work or Path(tempfile.mkdtemp(prefix="fdbu-v2-flow-"))
    work.mkdir(parents=True, exist_ok=True)
    cache = work / "cache"
    fdbu = fdbu_command()
    rows = []

    def step(name: str, *argv: str) -> dict:
        row = {"step": name, **run([*fdbu, *argv, f"cache_dir={cache}"] if argv[0] in ("score", "evaluate")
                                   else [*fdbu, *argv], work / f"{name.replace(' ', '-')}.log")}
        rows.append(row)
        print(f"| {name} | {row['wall_s']:.1f} | {row['cpu_s']:.1f} | {row['rss_mb']:.0f} |", flush=True)
        return row

    print("| step | wall s | CPU s | peak RSS MB |\n|---|---|---|---|")
    for system in SYSTEMS:
        runs, tree = work / f"run-{system}", work / f"tree-{system}"
        step(f"synth {system}", "synth", f"out={runs}", "family=v2", "layout=official", f"n={args.n}",
             f"system={system}", "ineligible=0", f"session_turns=[{args.turns[0]},{args.turns[1]}]", "progress=false")
        step(f"export {system}", "export", f"dataset={runs}", f"out={tree}", "export.transcripts=adopt",
             f"export.judge={runs / 'eval_results'}", "progress=false")
        step(f"evaluate {system}", "evaluate", f"tree={tree}")
        step(f"score {system}", "score", f"tree={tree}", "progress=false")
    trees = ",".join(str(work / f"tree-{s}") for s in SYSTEMS)
    step("compare", "compare", f"trees=[{trees}]", f"out={work / 'compare'}")
    step("report", "report", f"trees=[{trees}]", f"out={work / 'report'}")
    manifest = json.loads((work / f"tree-{SYSTEMS[0]}" / "manifest.json").read_text())
    audio_s = sum(r["input_s"] for r in manifest["samples"] if r["eligible"]) * 2  # both channels
    score = next(r for r in rows if r["step"] == f"score {SYSTEMS[0]}")
    print(f"\n{len(manifest['samples'])} sessions per system, {audio_s / len(manifest['samples']) / 2:.1f} s each, "
          f"{audio_s:.0f} s of audio per system; score: {audio_s / score['wall_s']:.0f} audio s per wall s")
    print(f"total {sum(r['wall_s'] for r in rows):.0f} s; {machine()}; {load()}; work folder {work}")


if __name__ == "__main__":
    main()
