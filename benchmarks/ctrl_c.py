"""How soon Ctrl-C is answered: on a pseudo-terminal, each command is sent a real SIGINT (as a terminal sends it to
its foreground job) in the middle of its work, and the time from the key to its one "interrupted" line is measured
(issue 56, item 3: within 1 s in every command).

    python -m benchmarks.ctrl_c [--runs 3] [--workdir DIR] [--checkpoint NEMO]

On the demo's trees at N = 40 samples per subset (`benchmarks.first_output.demo`: synth n=40 seed=0, mixed and
prompt scored, the official folders, a copy of mixed without transcripts: at the demo's 8 the work is over before
a key can come), each command runs as a user types it, with a fresh cache (this
machine's VAD calibration copied in, as a node pays it once) so that speech detection and ASR really work; the key
comes `DELAY_S` after the command's first bar frame (evaluate on v1.0 draws none: after its first line), `LATER_S`
where the command keeps what it did (so that its line has something to count). asr uses
--checkpoint, or the tests' tiny random-weight model (tests/tiny_asr.py; the stop is in its decoding loop either
way). Recorded: when the key came, the seconds to the line (best and worst of --runs), whether a bar was drawn
after the line, and the line. Exits non-zero when a line came later than 1 s in any run that was interrupted, or in none.
"""
from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

from .first_output import demo, first_output

LIMIT_S = 1.0
DELAY_S = 0.1
# later where the command keeps what it did, so that the line has something to count
LATER_S = {"score": 0.3, "sweep": 0.3, "vad": 0.3, "asr": 9.0}  # asr: NeMo loads its weights under the bar
N = 40
BAR = re.compile(r"\d+%\|")
ARGS = {"score": ["vad.batch_seconds=10"], "sweep": ["vad.batch_seconds=10"], "vad": ["vad.batch_seconds=10"],
        "asr": ["asr.batch_size=1", "device=cpu"], "synth": ["n=200"]}  # several batches: work to stop in
CACHED = ("score", "sweep", "vad", "asr", "evaluate", "calibrate")  # the commands with cache_dir


def after_the_line(output: bytes) -> bool:
    """Whether anything was drawn after the "interrupted" line (a bar redrawn under it)."""
    text = output.decode(errors="replace")
    at = text.find("fdbu: error: interrupted")
    return at >= 0 and bool(re.sub(r"[\r\n]+", "", text[at:].split("\n", 1)[1] if "\n" in text[at:] else "").strip())


def main() -> None:
    from fdbu.common.cachedir import cache_root

    from .asr_throughput import checkpoint_for
    from .common import load as machine_load, machine, parse, verdict

    args, work = parse(__doc__, files=0, runs=(int, 3), checkpoint=(str, None), model=(str, "tiny"))
    fdbu = str(Path(sys.executable).parent / "fdbu")
    commands = demo(work / "demo", n=N)
    checkpoint = checkpoint_for(args, work)
    print(f"{machine()}; {machine_load()}; {args.runs} runs per command, each a fresh process on a 100 x 24 pty, "
          f"Ctrl-C {DELAY_S} s after its first bar frame ({', '.join(f'{c} {t} s' for c, t in LATER_S.items())})")
    print("| command | key at (s), run 1 | key to line, best (s) | worst (s) | bar after it | the line, run 1 |")
    print("|---|---:|---:|---:|---|---|")
    late = []
    for command, argv in commands.items():
        runs = []
        for k in range(args.runs):
            shutil.rmtree(work / "demo" / "out", ignore_errors=True)
            cache = work / "caches" / f"{command}-{k}"
            shutil.rmtree(cache, ignore_errors=True)
            if command != "calibrate":
                shutil.copytree(cache_root() / "vad-probs" / "calibration", cache / "vad-probs" / "calibration")
            extra = ARGS.get(command, []) + ([f"cache_dir={cache}"] if command in CACHED else []) + \
                ([f"asr.checkpoint={checkpoint}"] if command == "asr" else [])
            if command == "asr":
                shutil.rmtree(work / "demo" / "untranscribed", ignore_errors=True)
                from .common import untranscribed
                untranscribed(work / "demo" / "mixed", work / "demo" / "untranscribed")
            when = re.compile(r"fdbu evaluate: ") if command == "evaluate" else BAR
            runs.append(first_output([fdbu, command, *argv, *extra], work / "demo", key_after=when,
                                     key_delay_s=LATER_S.get(command, DELAY_S)))
        waits = [r["message_s"] for r in runs if r["message_s"] is not None]
        finished = sum(r["message_s"] is None for r in runs)  # over before the key came
        text = runs[0]["output"].decode(errors="replace")
        line = next((x.strip() for x in re.split(r"[\r\n]+", text) if "interrupted" in x), "(none: it had finished)")
        bar_after = any(after_the_line(r["output"]) for r in runs)
        worst = f"{max(waits):.3f}" if waits else "-"
        worst += f" ({finished} of {len(runs)} runs were over before the key)" if finished else ""
        print(f"| fdbu {command} | {runs[0]['key_s'] or float('nan'):.2f} | "
              f"{min(waits) if waits else float('inf'):.3f} | {worst} | {'yes' if bar_after else 'no'} | "
              f"{line[:140]} |", flush=True)
        if not waits or max(waits) > LIMIT_S or bar_after:
            late.append(command)
    verdict(late, f"later than {LIMIT_S:g} s, or a bar after the line")


if __name__ == "__main__":
    main()
