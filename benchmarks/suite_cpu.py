"""Where the test suite's CPU goes, test by test (issue 78): a pytest plugin and its summary.

The suite is bound by its CPU on two cores (three workers), so a test's wall time measures the load beside it, not
the test; its CPU does not. Around each test this plugin reads `getrusage` of the worker (its threads, a figure's
drawing) and of the worker's waited children (every `fdbu` process, official script, forked run and SLURM client the
test started and reaped), and appends one JSON line per test (also the system part of that CPU, and when the test
began, to line the tests up against a sample of /proc/stat: where the cores sat idle, and what ran then):

    FDBU_SUITE_CPU=build/suite-cpu.jsonl pytest -q -p no:cacheprovider -p benchmarks.suite_cpu -n 3 --dist loadfile
    python -m benchmarks.suite_cpu build/suite-cpu.jsonl        # per file, then the 25 dearest tests

Not counted: a session fixture's work is the first test's that asks for it (the calibration, NeMo's imports);
daemons (slurmd's jobs, a browser a test leaves to its fixture) are nobody's children until reaped.
"""
from __future__ import annotations

import json
import os
import resource
import sys
import time
from collections import defaultdict

import pytest

OUT = "FDBU_SUITE_CPU"


def _usage() -> tuple[float, float, float]:
    """The worker's CPU, its waited children's, and the system part of both: each getrusage read once."""
    mine, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return mine.ru_utime + mine.ru_stime, kids.ru_utime + kids.ru_stime, mine.ru_stime + kids.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    before, start, began = _usage(), time.perf_counter(), time.time()
    yield
    after = _usage()
    row = {"test": item.nodeid, "self_s": round(after[0] - before[0], 3), "children_s": round(after[1] - before[1], 3),
           "wall_s": round(time.perf_counter() - start, 3), "sys_s": round(after[2] - before[2], 3),
           "began": round(began, 3), "worker": os.environ.get("PYTEST_XDIST_WORKER", "")}
    with open(os.environ.get(OUT, "build/suite-cpu.jsonl"), "a") as f:  # one short write a line: workers interleave
        f.write(json.dumps(row) + "\n")


def summary(path: str, top: int = 25) -> str:
    rows = [json.loads(line) for line in open(path)]
    files: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0])
    for r in rows:
        f = files[r["test"].split("::")[0]]
        f[0] += 1
        f[1] += r["self_s"]
        f[2] += r["children_s"]
    cpu = sum(r["self_s"] + r["children_s"] for r in rows)
    lines = [f"{len(rows)} tests, {cpu:.0f} s of CPU (worker {sum(r['self_s'] for r in rows):.0f} s, children "
             f"{sum(r['children_s'] for r in rows):.0f} s)", "", "CPU s  share  tests  file (worker + children)"]
    for name, (n, mine, kids) in sorted(files.items(), key=lambda kv: -(kv[1][1] + kv[1][2])):
        lines.append(f"{mine + kids:6.1f} {100 * (mine + kids) / cpu:5.1f}% {n:5d}  {name} ({mine:.1f} + {kids:.1f})")
    lines += ["", "CPU s  worker  children  wall  test"]
    for r in sorted(rows, key=lambda r: -(r["self_s"] + r["children_s"]))[:top]:
        lines.append(f"{r['self_s'] + r['children_s']:6.1f} {r['self_s']:6.1f} {r['children_s']:8.1f} "
                     f"{r['wall_s']:6.1f}  {r['test']}")
    return "\n".join(lines)


if __name__ == "__main__":
    print(summary(sys.argv[1] if len(sys.argv) > 1 else "build/suite-cpu.jsonl"))
