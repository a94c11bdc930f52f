"""The seconds each test file took (setup, call and teardown summed), read from a pytest run's `--durations=0`
report into tests/durations.json, which conftest orders the files by: `make test` hands whole files to its
workers, and the longest first leaves no long file to run alone at the end (longest processing time first).

    python -m pytest -n 3 --dist loadfile --no-loadscope-reorder --durations=0 > run.log; python tests/durations.py run.log

A stale or missing entry costs only time: a file it does not name counts as the median file."""
from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).with_name("durations.json")
LINE = re.compile(r"\s*([\d.]+)s (?:call|setup|teardown)\s+(tests/[^:\s]+\.py)::")


def parse(text: str) -> dict[str, float]:
    seconds: Counter[str] = Counter()
    for line in text.splitlines():
        if m := LINE.match(line):
            seconds[m.group(2)] += float(m.group(1))
    return {name: round(s, 1) for name, s in sorted(seconds.items())}


def main(argv: list[str]) -> None:
    if len(argv) != 1:
        sys.exit("usage: python tests/durations.py PYTEST_LOG (a run with --durations=0)")
    seconds = parse(Path(argv[0]).read_text())
    if not seconds:
        sys.exit(f"{argv[0]}: no --durations=0 lines in it")
    HERE.write_text(json.dumps(seconds, indent=0) + "\n")
    print(f"{HERE}: {len(seconds)} files, {sum(seconds.values()):.0f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
