"""`fdbu report report.compare=DIR`: the figures fdbu compare drew taken as they are, against drawn again.

    python -m benchmarks.report_compare [--runs 5] [--workdir DIR]

The demo's trees (synth n=8 seed=0, mixed and prompt), scored and compared once (`fdbu compare ... out=DIR`, not
timed). Then, each a fresh `fdbu report` process as a user runs it, alternating: the report given DIR (compare.json
records its figures, so they are taken) and the report given a copy of DIR whose compare.json lacks that record (as
an older compare.json: the report draws the figures again). Both write the same site, byte for byte (checked). The
medians of wall and CPU seconds, and their ratio, in one run on one machine.
"""
from __future__ import annotations

import json
import shutil
import statistics
import sys
from pathlib import Path

from .common import load, machine, measured, parse


def _ok(cmd: list[str]) -> None:
    ran = measured(cmd)
    if ran["returncode"] != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {ran['stderr'][-2000:]}")


def main() -> None:
    args, work = parse(__doc__, files=0, runs=(int, 5))
    fdbu = str(Path(sys.executable).parent / "fdbu")
    trees = [work / "mixed", work / "prompt"]
    for tree in trees:
        if not (tree / "unified.json").is_file():
            shutil.rmtree(tree, ignore_errors=True)
            _ok([fdbu, "synth", f"out={tree}", "n=8", "seed=0", f"system={tree.name}", "progress=false"])
            _ok([fdbu, "score", f"tree={tree}", "progress=false"])
    given = {"taken": work / "compared", "drawn": work / "compared-older"}
    shutil.rmtree(given["taken"], ignore_errors=True)
    shutil.rmtree(given["drawn"], ignore_errors=True)
    _ok([fdbu, "compare", f"trees=[{trees[0]},{trees[1]}]", "names=[mixed,prompt]", f"out={given['taken']}",
         "progress=false"])
    shutil.copytree(given["taken"], given["drawn"])
    older = json.loads((given["drawn"] / "compare.json").read_text())
    del older["figures"]
    (given["drawn"] / "compare.json").write_text(json.dumps(older, indent=2) + "\n")
    print(f"# {machine()}; {load()} at the start")
    times: dict[str, list[dict]] = {"taken": [], "drawn": []}
    sites: dict[str, dict[str, bytes]] = {}
    for k in range(args.runs):
        for way in ("taken", "drawn"):
            out = work / f"site-{way}-{k}"
            shutil.rmtree(out, ignore_errors=True)
            ran = measured([fdbu, "report", f"trees=[{trees[0]},{trees[1]}]", "names=[mixed,prompt]", f"out={out}",
                            f"report.compare={given[way]}", "progress=false"])
            if ran["returncode"] != 0:
                raise SystemExit(f"report ({way}) failed: {ran['stderr'][-2000:]}")
            times[way].append(ran)
            sites[way] = {p.name: p.read_bytes() for p in out.iterdir() if p.suffix in (".png", ".pdf")}
    if sites["taken"] != sites["drawn"]:
        raise SystemExit("the taken figures differ from the ones drawn again")
    print(f"# {load()} at the end; {args.runs} runs of each, alternating")
    print("| report.compare given | wall s (median) | CPU s (median) |")
    print("|---|---:|---:|")
    med = {way: (statistics.median(r["wall_s"] for r in rs), statistics.median(r["cpu_s"] for r in rs))
           for way, rs in times.items()}
    for way, words in (("drawn", "compare.json without the record (drawn again)"),
                       ("taken", "compare.json recording its figures (taken)")):
        print(f"| {words} | {med[way][0]:.2f} | {med[way][1]:.2f} |")
    print(f"ratio drawn / taken: wall {med['drawn'][0] / med['taken'][0]:.2f}, CPU {med['drawn'][1] / med['taken'][1]:.2f}")


if __name__ == "__main__":
    main()
