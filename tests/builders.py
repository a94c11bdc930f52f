"""Build small reference trees on disk from compact descriptions, for the tests."""
from __future__ import annotations

import hashlib
import io
import json
import shutil
import wave
from pathlib import Path

import numpy as np

from fdbu.tasks import SUBSETS
from fdbu.tree.load import MANIFEST_KIND

SR = 16000


def wav_bytes(audio: np.ndarray, sr: int = SR, channels: int = 1) -> bytes:
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(2)
        w.setframerate(sr)
        w.writeframes(np.asarray(audio, "<i2").tobytes())
    return buf.getvalue()


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def transcript(words) -> dict:
    """words: [(start, end_or_None), ...] -> output.json."""
    return {"text": " ".join(f"w{i}" for i in range(len(words))),
            "chunks": [{"text": f"w{i}", "timestamp": [s, e]} for i, (s, e) in enumerate(words)]}


def pause_ann(pauses) -> list:
    return [{"text": "[PAUSE]", "timestamp": [a, b]} for a, b in pauses]


def turn_ann(E) -> list:
    return [{"text": "[TURN-TAKING]", "timestamp": [E, None]}]


def interrupt_ann(S, R) -> list:
    return [{"context": "c", "interrupt": "i", "timestamp": [S, R]}]


def sample(subset: str, name, T: float, words=(), annotation=None, *, audio=None, eligible=True, reasons=None,
           raw_transcript: bytes | None = None, raw_annotation: bytes | None = None) -> dict:
    return dict(subset=subset, name=str(name), T=T, words=list(words), annotation=annotation, audio=audio,
                eligible=eligible, reasons=reasons or ([] if eligible else ["capture failed"]),
                raw_transcript=raw_transcript, raw_annotation=raw_annotation)


def write_tree(root: Path, samples: list[dict], declared: dict | None = None) -> Path:
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    rows, transcripts = [], {}
    for s in samples:
        subset, name = s["subset"], s["name"]
        row = {"sample_id": f"{subset}/{name}", "subset": subset, "task": SUBSETS[subset].task.name}
        if not s["eligible"]:
            rows.append({**row, "eligible": False, "reasons": s["reasons"]})
            continue
        n = int(round(s["T"] * SR))
        folder = root / subset / name
        folder.mkdir(parents=True, exist_ok=True)
        files = {}
        audio = s["audio"] if s["audio"] is not None else np.zeros(n, np.int16)
        data = wav_bytes(audio)
        (folder / "output.wav").write_bytes(data)
        files["output.wav"] = sha(data)
        ann_name = SUBSETS[subset].task.annotation
        if ann_name:
            data = s["raw_annotation"] if s["raw_annotation"] is not None else json.dumps(s["annotation"]).encode()
            (folder / ann_name).write_bytes(data)
            files[ann_name] = sha(data)
        data = s["raw_transcript"] if s["raw_transcript"] is not None else json.dumps(transcript(s["words"])).encode()
        (folder / "output.json").write_bytes(data)
        transcripts.setdefault(subset, {})[name] = sha(data)
        rows.append({**row, "sample_rate": SR, "input_samples": n, "input_s": n / SR, "eligible": True,
                     "reasons": [], "files": files})
    used = {s["subset"] for s in samples}
    manifest = {"schema_version": 1, "kind": MANIFEST_KIND,
                "declared": declared or {s: max(10, sum(x["subset"] == s for x in samples)) for s in used},
                "samples": rows}
    asr = {"config": {"model_id": "test"},
           "subsets": {s: {"task": SUBSETS[s].task.asr_task, "transcripts": transcripts.get(s, {})} for s in used}}
    (root / "manifest.json").write_text(json.dumps(manifest, indent=1))
    (root / "asr.json").write_text(json.dumps(asr, indent=1))
    return root


def speech(T: float, utterances, seed: int = 0) -> np.ndarray:
    """int16 audio of T seconds: for each (start_s, k), k words of the synth bank (real speech,
    50 ms apart, so Silero hears one segment per utterance) from start_s on."""
    from fdbu.synth import Capture

    cap = Capture(int(round(T * SR)), np.random.default_rng(seed))
    for start, k in utterances:
        cap.say(start, words=k)
    return cap.audio


def fdbu_main(*args: str):
    """`fdbu ARGS` in this process (the same `main` the console script runs), for speed: torch,
    Silero and the compiled kernels load once. Returns a CompletedProcess with the exit status
    and what it printed. What a process's end would take with it is put back, as it was before the
    command: the SIGINT handler (a Ctrl-C's line ignores a second one), the environment (Hydra's
    HYDRA_FULL_ERROR, the Hugging Face offline switches set before NeMo loads a local checkpoint, NeMo's
    TOKENIZERS_PARALLELISM), sys.argv and the `fdbu` logger's console (tests/leaks.py checks)."""
    import contextlib
    import logging
    import os
    import subprocess
    import sys

    from fdbu.cli.main import main

    import signal

    out, err = io.StringIO(), io.StringIO()
    saved = sys.argv[:]
    handler = signal.getsignal(signal.SIGINT)
    environ = dict(os.environ)
    notes = logging.getLogger("fdbu")
    logger = notes.level, notes.handlers[:], notes.propagate, notes.disabled
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 1
        finally:
            sys.argv = saved
            signal.signal(signal.SIGINT, handler)
            if os.environ != environ:
                os.environ.clear()
                os.environ.update(environ)
            notes.setLevel(logger[0])
            notes.handlers[:], notes.propagate, notes.disabled = logger[1:]
    return subprocess.CompletedProcess(["fdbu", *args], code, out.getvalue(), err.getvalue())


def fdbu_forked(*args: str, env: dict[str, str] | None = None, timeout: float = 600):
    """`fdbu ARGS` in a forked copy of this process, with `env` added: a run meant to be stopped (FDBU_KILL_AT
    SIGKILLs its own process) that costs no fresh interpreter's imports (NeMo's alone are about 10 s of CPU). What
    it prints goes to files, so a killed run's output up to the kill is kept. torch computes on one thread in the
    child: GNU OpenMP's thread pool does not survive fork(), and a child that asks it for more threads hangs.
    Returns a CompletedProcess whose returncode is -N for a run ended by signal N."""
    import os
    import subprocess
    import tempfile
    import time

    from benchmarks.first_output import fdbu_in_this_child

    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        pid = os.fork()
        if pid == 0:  # the child: never returns into pytest
            def files() -> None:
                os.dup2(out.fileno(), 1)
                os.dup2(err.fileno(), 2)
                os.environ.update(env or {})

            fdbu_in_this_child(list(args), files)
        deadline = time.monotonic() + timeout
        try:
            while True:
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    break
                if time.monotonic() > deadline:
                    raise subprocess.TimeoutExpired(["fdbu", *args], timeout)
                time.sleep(0.02)
        except BaseException:  # run past the time, or the test interrupted: the child does not go on in its folders
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            raise
        code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        out.seek(0)
        err.seek(0)
        return subprocess.CompletedProcess(["fdbu", *args], code, out.read(), err.read())


def release_dataset(tree: Path, dest: Path) -> Path:
    """A folder in the Full-Duplex-Bench v1.0 release layout from a (synthetic) tree: each eligible
    sample's input.wav (its output reversed: the same length T) and annotation, with the system's
    output.wav beside them, as many harnesses leave them."""
    import shutil

    from fdbu.tasks import SUBSETS as REGISTRY

    for folder in sorted(Path(tree).glob("*/*/output.wav")):
        subset, name = folder.parent.parent.name, folder.parent.name
        src = Path(dest) / subset / name
        src.mkdir(parents=True)
        audio = np.frombuffer(folder.read_bytes()[44:], "<i2")
        (src / "input.wav").write_bytes(wav_bytes(audio[::-1]))
        shutil.copy(folder, src / "output.wav")
        ann = REGISTRY[subset].task.annotation
        if ann:
            shutil.copy(folder.parent / ann, src / ann)
    return Path(dest)


def untranscribed(tree: Path, dest: Path | None = None) -> Path:
    """A tree as fdbu export leaves it, before the ASR stage: no asr.json, no output.json. A copy
    of `tree` at `dest`, or `tree` itself without `dest`."""
    if dest is not None:
        shutil.copytree(tree, dest)
        tree = dest
    (tree / "asr.json").unlink()
    for p in tree.glob("*/*/output.json"):
        p.unlink()
    return tree


def needs_nemo() -> None:
    """Skip where the asr extra is not installed, found without importing it (importing NeMo takes about 10 s of CPU,
    which a test that runs fdbu asr in a process of its own would pay again in the worker for nothing)."""
    import importlib.util

    import pytest

    if importlib.util.find_spec("nemo.collections.asr") is None:
        pytest.skip("the asr extra is not installed")


def recording_bar(log: list, positions: bool = False):
    """A Bar class (fdbu.common.progress.Bar, never drawn) that appends each bar made to `log` as (its keyword
    arguments, the steps of its updates; with `positions`, where it stood at each redraw instead: a bar moved by
    setting its position, as the figure bars are): a test patches it where a module makes its bars and reads what
    moved."""
    from fdbu.common.progress import Bar

    class Recorded(Bar):
        def __init__(self, *a, **kw):
            self.steps: list[float] = []
            self.at: list[float] = []
            log.append((kw, self.at if positions else self.steps))
            super().__init__(*a, **{**kw, "disable": True})

        def update(self, n=1):
            self.steps.append(n)
            return super().update(n)

        def refresh(self, *a, **kw):
            self.at.append(self.n)
            return super().refresh(*a, **kw)
    return Recorded
