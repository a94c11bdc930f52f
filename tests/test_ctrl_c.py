"""Ctrl-C in the middle of every command's work, on a pseudo-terminal as a person meets it (issue 56, item 3): one
line, exit 130, no bar drawn again after it, and where the command keeps what it did (speech probabilities in the
cache, transcripts in the tree) the line says how many and that the same command resumes from them, which the
rerun then does. The Ctrl-C is delivered at a named step inside the command's loop (`FDBU_INTERRUPT_AT`,
fdbu.common.faults), not timed; how soon the line follows a real key is measured in `benchmarks/ctrl_c.py` (RESULTS.md)."""
import os
import re
import shutil
import time
import sys
from pathlib import Path

import pytest

from benchmarks.first_output import demo, first_output
from builders import fdbu_main, needs_nemo

FDBU = str(Path(sys.executable).parent / "fdbu")
RESUMES = re.compile(r"the (speech probabilities|transcripts) of (\d+) (of \d+ )?files? .*: the same command "
                     r"resumes from them$")


def stoppable() -> list[str]:
    """The commands the registry says how to stop (`Command.stop`): each that writes files or loads torch declares
    one, a plugin's too (tests/made_up_plugin.py); one that does neither finishes before a key could stop it."""
    import fdbu.config.store  # noqa: F401  (attaches each command's config, which the tests read)
    from fdbu.registry import COMMANDS

    missing = [c.name for c in COMMANDS.values() if c.stop is None and (c.writes or c.loads_torch)]
    assert missing == [], f"{missing}: declare how the tests stop them (fdbu.registry.Stop)"
    return sorted(c.name for c in COMMANDS.values() if c.stop is not None)


def caches(command: str) -> bool:
    """Whether `command` keeps something in a cache (its config takes cache_dir= and does not refuse it)."""
    from dataclasses import fields

    from fdbu.registry import COMMANDS

    cfg = COMMANDS[command].config
    return "cache_dir" in {f.name for f in fields(cfg)} and getattr(cfg, "CACHES", True)


def demo_args(command: str) -> list[str]:
    """`command`'s Ctrl-C run (its `Stop`) on the demo's trees, run from the demo's folder."""
    from fdbu.registry import COMMANDS

    stop = COMMANDS[command].stop
    assert stop is not None
    names = {"mixed": "mixed", "prompt": "prompt", "untranscribed": "untranscribed", "official": "official",
             "out": f"o/{command}"}
    return [arg.format(**names) for arg in stop.args]


def screen(printed: str) -> list[str]:
    """The lines a terminal shows for `printed`: each line's characters as carriage returns overwrite them (a bar's
    redraws, a cleared bar's spaces) and an erase to the line's end (ESC [K) clears them, other escape sequences
    dropped."""
    out = []
    for line in printed.split("\n"):
        cells: list[str] = []
        col = 0
        for part in re.split(r"(\x1b\[[0-9;?]*[A-Za-z])", line):
            if part == "\x1b[K":
                del cells[col:]
                continue
            if part.startswith("\x1b["):
                continue
            for ch in part:
                if ch == "\r":
                    col = 0
                    continue
                cells[col:col + 1] = [ch]
                col += 1
        out.append("".join(cells).rstrip())
    return [line for line in out if line]


def test_the_screen_model_overwrites_as_a_terminal_does():
    assert screen("a 10%|x\r" + " " * 9 + "\rfdbu: error: interrupted\n") == ["fdbu: error: interrupted"]
    assert screen("a 10%|x\rb 50%|xx\n") == ["b 50%|xx"]


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    root = tmp_path_factory.mktemp("ctrl-c")
    demo(root, n=2)
    return root


@pytest.mark.slow
@pytest.mark.parametrize("command", stoppable())
def test_ctrl_c_is_one_line_with_no_bar_after_it_and_says_what_the_rerun_resumes_from(work, tmp_path, command,
                                                                                       calibrated, monkeypatch, built):
    from fdbu.common.cachedir import cache_root
    from fdbu.registry import COMMANDS

    c = COMMANDS[command]
    assert c.stop is not None
    argv, step, keeps = demo_args(command), c.stop.at, c.stop.keeps
    cache = tmp_path / "cache"  # empty but for this machine's calibration (calibrate computes its own)
    if command != "calibrate":
        shutil.copytree(cache_root() / "vad-probs" / "calibration", cache / "vad-probs" / "calibration")
    cwd = tmp_path / "work"
    shutil.copytree(work, cwd, symlinks=True)
    extra = [f"cache_dir={cache}"] if caches(command) else []
    if command == "asr":
        needs_nemo()
        extra.append(f"asr.checkpoint={built('rnnt')[0]}")  # the session's (this file runs on NeMo's worker)
    # asr in a forked copy of this worker (NeMo's, which has NeMo loaded: a fresh process spent about 9 s of CPU
    # importing it before its loop), every other command in a fresh process as a person starts it
    ran = first_output([FDBU, command, *argv, *extra], cwd, {**os.environ, "FDBU_INTERRUPT_AT": step},
                       forked=command == "asr")
    code, printed = ran["returncode"], ran["output"].decode(errors="replace")
    assert code == 130 and "Traceback" not in printed, printed
    frames = [f.strip() for f in re.split(r"[\r\n]+", printed)]
    said = [k for k, f in enumerate(frames) if f.startswith("fdbu: error: interrupted (Ctrl-C)")]
    assert len(said) == 1, printed
    assert not any(frames[said[0] + 1:]), printed  # nothing drawn after the line: no bar redrawn under it
    # stopped inside its bar's loop (evaluate on v1.0 has none: it is done in about a second)
    assert any(re.search(r"\d+%\|", f) for f in frames[:said[0]]) == (command != "evaluate"), printed
    # the screen a person is left with (each line as carriage returns overwrite it): no bar stopped short of 100%
    # above the line (the interrupted loop's bar is cleared, not left at its last count)
    stale = [line for line in screen(printed) if (m := re.search(r"(\d+)%\|", line)) and int(m[1]) < 100]
    assert stale == [], printed
    kept = RESUMES.search(frames[said[0]])
    assert bool(kept) == keeps, frames[said[0]]
    assert keeps or frames[said[0]].endswith("nothing was kept yet: the same command starts again"), frames[said[0]]
    if keeps:
        done = int(kept[2])
        assert done > 0, frames[said[0]]
        monkeypatch.chdir(cwd)  # the rerun in this process: its process boundary is not what is tested here
        again = fdbu_main(command, *argv, *extra, "progress=false")
        assert again.returncode == 0, again.stderr
        resumed = f"{done} kept" if command == "asr" else f" {done} from cache"
        assert resumed in again.stdout + again.stderr, again.stdout + again.stderr


def test_a_ctrl_c_ends_the_running_workers_work_not_only_the_work_waiting():
    """Ctrl-C while a pool's workers compute (the calibration's batches, the guard's files) ended only the work not
    started: the line came after every running file was done, 7-8 s later. Now the running loops see the pool's work
    abandoned (`vad.silero.abandoned`, every 256 steps of the real loops) and stop within a step here: a worker
    that would run 20,000 steps runs a few."""
    import contextlib
    import threading

    from fdbu.vad.silero import STOPPING, Abandoned, abandoned, one_thread_workers

    steps = [0, 0]
    running = threading.Barrier(3)

    def work(k: int) -> None:
        running.wait()
        for _ in range(20_000):  # about 20 s unless abandoned
            abandoned()
            steps[k] += 1
            time.sleep(0.001)

    with pytest.raises(KeyboardInterrupt):
        with one_thread_workers(2, "test", contextlib.nullcontext) as pool:
            futures = [pool.submit(work, k) for k in range(2)]
            running.wait()
            while min(steps) < 5:  # both well into their work, as when the key comes
                time.sleep(0.001)
            raise KeyboardInterrupt  # what the main thread, waiting on their results, gets from a Ctrl-C
    assert all(f.done() for f in futures) and max(steps) < 1_000, steps
    assert all(isinstance(f.exception(), Abandoned) for f in futures)
    assert not STOPPING.is_set()  # the next pool's work runs whole
    with one_thread_workers(1, "test", contextlib.nullcontext) as pool:
        assert pool.submit(lambda: [abandoned() for _ in range(3)] and "whole").result() == "whole"
