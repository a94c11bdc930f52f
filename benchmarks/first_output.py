"""How long each command leaves a terminal silent: the time from its start to its first output on a pseudo-terminal
(issue 56, item 1: never more than 2 s).

    python -m benchmarks.first_output [--runs 3] [--workdir DIR]

On the demo's sizes (synth n=8 seed=0, mixed and prompt, each scored; the same samples as official per-task
folders; a copy of mixed without transcripts), every command runs as a user types it, in a fresh process on a
pseudo-terminal of 100 x 24 (a terminal's size: tqdm draws no bar on one of 0 columns), `--runs` times; recorded:
the first output's time (best and median), the longest silence after it (worst run), the whole command's, and what
the first output was; with ../shared/official beside the checkout, also evaluate running the official scripts. Where
a first output came, or a silence lasted, more than 2 s in the best run, the benchmark exits non-zero.
"""
from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path
from typing import NoReturn

LIMIT_S = 2.0


def first_output(argv: list[str], cwd: Path, env: dict | None = None, limit_s: float = 300.0,
                 stop_at_first: bool = False, key_after: "re.Pattern | None" = None, key_delay_s: float = 0.0,
                 columns: int = 100, forked: bool = False) -> dict:
    """Run `argv` on a pseudo-terminal: seconds to its first visible output, the longest silence after it (`gap_s`),
    seconds to its end, everything it printed (bytes) and its exit status; `stop_at_first`: killed (its whole session) once it has said something.
    `key_after`: Ctrl-C (SIGINT to its session, as a terminal sends it) `key_delay_s` after its output first matches
    the pattern; then also `key_s` (when) and `message_s` (seconds from the key to its "interrupted" line). The
    terminal is 24 rows of `columns`. `forked`: `fdbu ARGV[1:]` in a forked copy of this process (`Forked`), not
    a fresh one: a test of what a command shows once it runs, paying no interpreter's imports again."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    t0 = time.perf_counter()
    if forked:
        proc: "subprocess.Popen | Forked" = Forked(argv[1:], slave, master, cwd, env)
    else:  # a background job inherits SIGINT ignored; Ctrl-C at a terminal reaches a foreground one
        proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, cwd=cwd, env=env, close_fds=True,
                                start_new_session=True,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    os.close(slave)
    first, out, matched, key, message, last, gap = None, b"", None, None, None, None, 0.0
    try:
        while time.perf_counter() - t0 < limit_s:
            ready, _, _ = select.select([master], [], [], 0.01)
            now = time.perf_counter() - t0
            if key_after is not None and matched is None and key_after.search(out.decode(errors="replace")):
                matched = now
            if matched is not None and key is None and now >= matched + key_delay_s:
                os.killpg(proc.pid, signal.SIGINT)
                key, mark = now, len(out)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # the child closed its end: everything is read
                    break
                if not chunk:
                    break
                if first is None and chunk.strip():
                    first = time.perf_counter() - t0
                if chunk.strip():  # the longest silence between two things it showed
                    seen = time.perf_counter() - t0
                    gap, last = max(gap, seen - last) if last is not None else gap, seen
                out += chunk
                if key is not None and message is None and b"interrupted" in out[mark:]:
                    message = time.perf_counter() - t0 - key
                if stop_at_first and first is not None:
                    break
            elif proc.poll() is not None:
                break
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        os.close(master)
    code = proc.wait()
    return {"first_s": first, "total_s": time.perf_counter() - t0, "output": out, "returncode": code, "key_s": key,
            "message_s": message, "gap_s": gap}


class Forked:
    """`fdbu ARGS` (fdbu.cli.main) in a forked copy of this process, on the terminal `slave`, in its own session, as
    Popen starts a command: what the command draws is the same; its imports are this process's, already done. Has
    Popen's pid, poll and wait."""

    def __init__(self, args: list[str], slave: int, master: int, cwd: Path, env: dict | None):
        self.returncode: int | None = None
        self.pid = os.fork()
        if self.pid:
            return

        def terminal() -> None:
            os.setsid()
            os.close(master)
            for fd in (0, 1, 2):
                os.dup2(slave, fd)
            os.chdir(cwd)
            if env is not None:
                os.environ.clear()
                os.environ.update(env)
            signal.signal(signal.SIGINT, signal.default_int_handler)  # a fresh interpreter's, as Popen's child gets
            sys.stdin = open(0, closefd=False)

        fdbu_in_this_child(args, terminal)

    def poll(self) -> int | None:
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self) -> int:
        if self.returncode is None:
            self.returncode = os.waitstatus_to_exitcode(os.waitpid(self.pid, 0)[1])
        return self.returncode


def fdbu_in_this_child(args: list[str], setup) -> NoReturn:
    """A forked child's whole life: `setup()` (its files, terminal, environment), then `fdbu ARGS` (fdbu.cli.main)
    printing to fds 1 and 2, torch on one thread (GNU OpenMP's thread pool does not survive fork(), and a child that
    asks it for more threads hangs), then `os._exit` with its status: it never returns into its caller, nor runs the
    caller's exit handlers."""
    code = 1
    try:
        setup()
        sys.stdout = open(1, "w", buffering=1, closefd=False)
        sys.stderr = open(2, "w", buffering=1, closefd=False)
        if "torch" in sys.modules:
            sys.modules["torch"].set_num_threads(1)
        from fdbu.cli.main import main

        code = main(list(args)) or 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def first_line(output: bytes) -> str:
    """The first thing a person saw: the first non-blank line or bar frame (carriage returns split bar frames)."""
    for part in output.decode(errors="replace").replace("\r", "\n").split("\n"):
        if part.strip():
            return part.strip()
    return ""


def demo(work: Path, n: int = 8) -> dict[str, list[str]]:
    """The demo's trees in `work` (`n` samples per subset), and each command's arguments on them (run from
    `work`)."""
    from fdbu.metrics.stats import Bootstrap
    from fdbu.scoring.pipeline import score_path
    from fdbu.synth import synthesize
    from fdbu.scoring.unified import write
    from fdbu.vad import SpeechDetector

    from .common import untranscribed

    if not (work / "prompt" / "unified.json").is_file():
        shutil.rmtree(work, ignore_errors=True)
        for system in ("mixed", "prompt"):
            tree = synthesize(work / system, n=n, seed=0, system=system, progress=False)
            write(score_path(tree, SpeechDetector(backend="batched", device="cpu"), Bootstrap()), tree)
        synthesize(work / "official", n=n, seed=0, layout="official", progress=False)
        untranscribed(work / "mixed", work / "untranscribed")
    return {"score": ["tree=mixed"], "sweep": ["tree=mixed", "out=out/sweep"],
            "compare": ["trees=[mixed,prompt]", "out=out/compare"],
            "report": ["trees=[mixed,prompt]", "out=out/report"], "evaluate": ["tree=mixed"],
            "export": ["dataset=official", "out=out/export"], "asr": ["tree=untranscribed"],
            "vad": ["tree=mixed"], "synth": ["out=out/synth", "n=8"], "calibrate": []}


def main() -> None:
    from .common import load as machine_load, machine, parse, verdict

    args, work = parse(__doc__, files=0, runs=(int, 3))
    fdbu = str(Path(sys.executable).parent / "fdbu")
    commands = dict(demo(work / "demo"))
    official = Path(__file__).resolve().parents[2] / "shared" / "official"
    if official.is_dir():  # the official scripts run after the reference column: each said as it runs
        commands["evaluate (official scripts)"] = ["tree=mixed", "evaluate.run_official=true",
                                                   f"evaluate.official_checkout={official}"]
    print(f"{machine()}; {machine_load()}; {args.runs} runs per command, each a fresh process on a 100 x 24 pty")
    print("| command | first output, best (s) | median (s) | longest silence after it, worst (s) | "
          "whole command, median (s) | first output |")
    print("|---|---:|---:|---:|---:|---|")
    late = []
    for name, argv in commands.items():
        command = name.split()[0]
        runs = []
        for _ in range(args.runs):
            shutil.rmtree(work / "demo" / "out", ignore_errors=True)
            runs.append(first_output([fdbu, command, *argv], work / "demo"))
        firsts = [r["first_s"] if r["first_s"] is not None else float("inf") for r in runs]
        said = first_line(runs[0]["output"])
        shown = " ".join(a if len(a) < 40 else a[:20] + "..." for a in argv)
        print(f"| fdbu {command} {shown} | {min(firsts):.2f} | {statistics.median(firsts):.2f} | "
              f"{max(r['gap_s'] for r in runs):.2f} | {statistics.median(r['total_s'] for r in runs):.2f} | "
              f"{said[:70]} |", flush=True)
        if min(firsts) > LIMIT_S or min(r["gap_s"] for r in runs) > LIMIT_S:
            late.append(name)
    verdict(late, f"silent for more than {LIMIT_S:g} s")


if __name__ == "__main__":
    main()
