"""Never a silent screen (issue 56, item 1): on a pseudo-terminal, every command's first output says what it is doing
(`fdbu.cli.consoles.ANNOUNCE`, score's own line) or is a bar, before the imports and reading that take its first
seconds. How soon is measured in `benchmarks/first_output.py` (RESULTS.md), not here: a timed test would measure
the machine."""
import re
import subprocess
import sys
import textwrap
import time
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


@pytest.fixture(scope="module")
def torch_s() -> float:
    """The longest step a command may take with nothing new on screen, once it has said what it is doing: loading
    torch (announced by its first line), timed here in a fresh interpreter, at this machine's speed and load now
    (once for this file's three tests, which one worker runs one after the other: 1.5 s of CPU each time)."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import torch"], check=True)
    return time.perf_counter() - start


def on_a_terminal(argv: list[str], cwd: Path, torch_s: float, stop_at_first: bool = False,
                  forked: bool = False) -> dict:
    """`fdbu ARGS` to its end on an 80-column pseudo-terminal: what first_output measures, the lines the terminal
    shows, and the silence it may keep (`bound_s`: its own start-up to its first output, then 2 x `torch_s`,
    torch's import as the `torch_s` fixture timed it; the work itself must draw: a bar's step or a line).
    `forked`: in a forked copy of this process, its imports done (what is drawn once the command runs)."""
    from test_ctrl_c import screen

    ran = first_output([FDBU, *argv], cwd, stop_at_first=stop_at_first, limit_s=120, columns=COLUMNS, forked=forked)
    ran["screen"] = screen(ran["output"].decode(errors="replace"))
    ran["bound_s"] = (ran["first_s"] or 0.0) + 2 * torch_s
    return ran


COLUMNS = 80


def check_terminal(name: str, ran: dict) -> None:
    # wider than the terminal where it could have been wrapped at a space (a path longer than a line is one word)
    wide = [line for line in ran["screen"] if len(line) > COLUMNS and
            len(textwrap.wrap(line, COLUMNS, break_long_words=False, break_on_hyphens=False)) > 1]
    assert not wide, (name, wide)
    assert ran["gap_s"] <= ran["bound_s"], (name, f"silent {ran['gap_s']:.2f} s > {ran['bound_s']:.2f} s",
                                            ran["output"][-2000:])


@pytest.mark.slow
def test_every_command_on_a_terminal_says_first_what_it_is_doing_never_goes_silent_and_fits_80_columns(work,
                                                                                                      tmp_path,
                                                                                                      calibrated,
                                                                                                      torch_s):
    """Every command that takes time (the registry's `Stop`: those that write files or load torch, a plugin's too),
    run to its end on an 80-column terminal (asr and calibrate to their first line: the demo has no model on this
    machine, and calibrate's work is the calibration's bar; test_ctrl_c runs both on a terminal into their loops,
    asr with a small model) with a cache of its own (this machine's
    calibration copied in: the work is the command's, not the calibration's again): says first what it is doing, its own line or its bar; after that nothing longer
    than its bound without something new on screen (issue 77, item 1); and no line wider than 80 (item 2)."""
    from test_ctrl_c import caches, demo_args, stoppable
    from test_shards import fresh_cache

    root, commands = work, {c: demo_args(c) for c in stoppable()}
    assert {"score", "asr", "report"} <= set(commands)
    seen, said = {}, {}
    for command, argv in commands.items():
        cache = [f"cache_dir={fresh_cache(tmp_path / command)}"] if caches(command) else []
        first_only = command in ("asr", "calibrate")
        ran = on_a_terminal([command, *argv, *cache], root, torch_s, stop_at_first=first_only)
        seen[command], said[command] = first_line(ran["output"]), " ".join(" ".join(ran["screen"][:3]).split())
        assert seen[command].startswith(f"fdbu {command}: ") or BAR.match(seen[command]), (command, seen[command])
        assert ran["returncode"] == 0 or first_only, (command, ran["output"][-2000:])
        check_terminal(command, ran)
    assert BAR.match(seen["compare"]) and seen["score"].startswith("fdbu score: loading the VAD")
    assert seen["report"].startswith("fdbu report: reading mixed, prompt; then the comparison, the figures")
    # the line says the command's own work, with what it was given
    assert "mixed over 25 settings, then the heatmaps" in said["sweep"] and "official" in said["export"]


# each release's second system (compare and report take two) and the seed of its trees
RELEASES = {"v1.5": ("talks_through", "1"), "v2": ("eager", "3")}
SMALLER = {"sweep": ["sweep.threshold=[0.4,0.5]", "sweep.min_silence_duration_ms=[100]"]}  # its steps, fewer of them


@pytest.mark.slow
@pytest.mark.parametrize("family", sorted(RELEASES))
def test_every_command_on_a_v15_and_a_v2_tree_on_a_terminal(tmp_path, family, calibrated, torch_s):
    """Every registered command again, on another release's trees (v1.5's stop curves and two runs, v2's sessions and
    judge): its two systems' scored trees, its official layout, a tree without transcripts, as on the demo's; synth
    writes the release's own samples and is run here on the terminal too. calibrate is left out: it reads no tree.
    Each runs in a forked copy of this process (`first_output(forked=True)`): what a command draws once it runs is
    what this test reads; what a fresh process shows before its imports is the demo's test's (the same code for
    every release), and a fresh interpreter's imports a command would cost about 1.7 s of CPU (issue 78)."""
    from builders import fdbu_main, untranscribed
    from test_ctrl_c import caches, stoppable
    from test_shards import fresh_cache

    from fdbu.registry import COMMANDS

    other, seed = RELEASES[family]
    common = [f"family={family}", "n=2", f"seed={seed}", "ineligible=0", "progress=false"]
    for name, more in (("prompt", [f"system={other}"]), ("official", ["layout=official"])):
        made = fdbu_main("synth", *common, *more, f"out={tmp_path / name}")
        assert made.returncode == 0, made.stderr
    ran = on_a_terminal(["synth", *common[:-1], "out=mixed"], tmp_path, torch_s, forked=True)
    assert ran["returncode"] == 0, ran["output"][-2000:]
    check_terminal(f"{family} synth", ran)
    untranscribed(tmp_path / "mixed", tmp_path / "untranscribed")
    for tree in ("mixed", "prompt"):
        scored = fdbu_main("score", f"tree={tmp_path / tree}", "progress=false")
        assert scored.returncode == 0, scored.stderr
    names = {"mixed": "mixed", "prompt": "prompt", "untranscribed": "untranscribed", "official": "official"}
    for command in stoppable():
        if command in ("synth", "calibrate"):
            continue
        stop = COMMANDS[command].stop
        assert stop is not None
        cache = [f"cache_dir={fresh_cache(tmp_path / 'caches' / command)}"] if caches(command) else []
        argv = [command, *(a.format(**names, out=f"o/{command}") for a in stop.args), *cache, *SMALLER.get(command, [])]
        ran = on_a_terminal(argv, tmp_path, torch_s, stop_at_first=command == "asr", forked=True)
        assert ran["returncode"] == 0 or command == "asr", (family, command, ran["output"][-2000:])
        check_terminal(f"{family} {command}", ran)


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
        assert (" ".join(err.split()) == f"fdbu synth: writing {out}") if said else err == "", (out, err)
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
