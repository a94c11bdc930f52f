"""Never a silent screen (issue 56, item 1): on a pseudo-terminal, every command's first output says what it is doing
(`fdbu.cli.consoles.ANNOUNCE`, score's own line) or is a bar, before the imports and reading that take its first
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
    demo(root, n=2)
    return root


@pytest.mark.slow
def test_every_command_says_first_what_it_is_doing(work, tmp_path):
    """Every command that takes time (the registry's `Stop`: those that write files or load torch, a plugin's too)
    says first, on a terminal, what it is doing: its own line, or its bar."""
    from test_ctrl_c import caches, demo_args, stoppable

    root, commands = work, {c: demo_args(c) for c in stoppable()}
    assert {"score", "asr", "report"} <= set(commands)
    seen = {}
    for command, argv in commands.items():
        cache = [f"cache_dir={tmp_path / command}"] if caches(command) else []
        ran = first_output([FDBU, command, *argv, *cache], root, stop_at_first=True, limit_s=120)
        seen[command] = first_line(ran["output"])
        assert seen[command].startswith(f"fdbu {command}: ") or BAR.match(seen[command]), (command, seen[command])
    assert BAR.match(seen["compare"]) and seen["score"].startswith("fdbu score: loading the VAD")
    assert seen["report"] == "fdbu report: reading mixed, prompt; then the comparison, the figures and the site"
    # the line says the command's own work, with what it was given
    assert "mixed over 25 settings, then the heatmaps" in seen["sweep"] and "official" in seen["export"]


@pytest.mark.parametrize("tty,progress", [(True, True), (True, False), (False, True), (False, False)])
def test_the_line_is_for_a_person_at_a_terminal_and_never_before_a_refusal(tmp_path, monkeypatch, capsys, tty,
                                                                           progress):
    """Into a pipe or a file, or with progress=false, nothing but the command's own output; on a terminal the line,
    unless the command is about to refuse its input (a tree that is not one, an out= that exists): the refusal is
    then its one line."""
    from types import SimpleNamespace

    from fdbu.config.store import CONFIGS
    from fdbu.cli.consoles import ANNOUNCE, announce

    from test_ctrl_c import stoppable

    # each command that takes time: its line, or its bar first (score, compare and report)
    assert set(ANNOUNCE) | {"score", "compare", "report"} == set(stoppable()) and set(stoppable()) <= set(CONFIGS)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: tty)
    (tmp_path / "exists").mkdir()
    for out, said in ((tmp_path / "new", tty and progress), (tmp_path / "exists", False)):
        announce("synth", SimpleNamespace(out=str(out), progress=progress))
        err = capsys.readouterr().err
        assert (err == f"fdbu synth: writing {out}\n") if said else err == "", (out, err)
    announce("evaluate", SimpleNamespace(tree=str(tmp_path / "nope"), progress=progress,
                                         evaluate=SimpleNamespace(run_official=False)))
    assert capsys.readouterr().err == ""  # not a tree: the command's refusal comes alone


@pytest.mark.parametrize("tty,progress", [(True, True), (True, False), (False, True)])
def test_an_official_script_is_said_on_a_terminal_only(monkeypatch, capsys, tty, progress):
    """The steps that draw no bar (an official script running) are told on a terminal with progress on; into a pipe,
    a file or with progress=false nothing is added to the command's output."""
    from fdbu.cli.terminal import teller

    monkeypatch.setattr(sys.stderr, "isatty", lambda: tty)
    say = teller("evaluate", progress)
    assert (say is None) == (not (tty and progress))
    if say is not None:
        say("official get_timing.py on user_interruption ...")
        assert capsys.readouterr().err == "fdbu evaluate: official get_timing.py on user_interruption ...\n"
