"""Never a silent screen (issue 56, item 1): on a pseudo-terminal, every command's first output says what it is doing
(`fdbu.consoles.ANNOUNCE`, score's own line) or is a bar, before the imports and reading that take its first
seconds. How soon is measured in `benchmarks/first_output.py` (RESULTS.md), not here: a timed test would measure
the machine."""
import re
import sys
from pathlib import Path

import pytest

from benchmarks.first_output import demo, first_line, first_output

FDBU = str(Path(sys.executable).parent / "fdbu")
BAR = re.compile(r"^[\w -]+: +\d+%\|")  # a tqdm bar's first frame


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    root = tmp_path_factory.mktemp("first-output")
    return root, demo(root, n=2)


@pytest.mark.slow
def test_every_command_says_first_what_it_is_doing(work, tmp_path):
    from fdbu.registry import COMMANDS

    root, commands = work
    assert set(commands) == set(COMMANDS)  # every command, a new one too
    seen = {}
    for command, argv in commands.items():
        cache = [f"cache_dir={tmp_path / command}"] if command not in ("compare", "report", "synth", "export", "evaluate") else []
        ran = first_output([FDBU, command, *argv, *cache], root, stop_at_first=True, limit_s=120)
        seen[command] = first_line(ran["output"])
        assert seen[command].startswith(f"fdbu {command}: ") or BAR.match(seen[command]), (command, seen[command])
    assert BAR.match(seen["compare"]) and seen["score"].startswith("fdbu score: loading the VAD")
    # the line says the command's own work, with what it was given
    assert "mixed over 25 settings, then the heatmaps" in seen["sweep"] and "official" in seen["export"]


@pytest.mark.slow
def test_a_pipe_gets_no_announcement(work):
    """Into a pipe or a file, nothing but the command's own output (the line is for a person at a terminal)."""
    import subprocess

    root, commands = work
    out = subprocess.run([FDBU, "synth", "out=piped", "n=2"], cwd=root, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "fdbu synth: writing" not in out.stderr + out.stdout, out.stderr
