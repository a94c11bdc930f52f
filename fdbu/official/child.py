"""The child process of `evaluate.run_official` for the scripts that cannot run from a plain
`python SCRIPT --root_dir DIR`; each still runs unchanged, from the user's checkout.

    python -m fdbu.official.child interruption SCRIPT ROOT_DIR JUDGE_URL
    python -m fdbu.official.child backchannel SCRIPT ROOT_DIR
    python -m fdbu.official.child timing SCRIPT ROOT_DIR HUB_DIR
    python -m fdbu.official.child timing_each SCRIPT HUB_DIR ROOT_DIR...
    python -m fdbu.official.child behavior SCRIPT ROOT_DIR JUDGE_URL

interruption: eval_user_interruption.py's `__main__` passes no client, so the module is
imported and `eval_user_interruption(root_dir, client)` called with an `openai.OpenAI`
client on JUDGE_URL (fdbu's stub judge on loopback).

backchannel: eval_backchannel.py calls `torchaudio.load`, which under torchaudio 2.9 needs
TorchCodec (and FFmpeg). Before the script runs, `torchaudio.load` is replaced by
`pcm16_load`, which returns what torchaudio.load returns for a PCM16 WAV: a float32 tensor
of shape (channels, frames) holding the samples / 32768, and the sample rate. The script is
then run as `python eval_backchannel.py --root_dir ROOT_DIR` runs it (`runpy`, `__main__`),
in the working directory the caller chose (it opens ./icc_gt_distribution.json).

timing: v1.5's get_timing.py loads Silero with `torch.hub.load("snakers4/silero-vad", ...)`, which asks GitHub
for the repository's default branch and downloads it unless the hub directory has it. Before the script runs,
the hub directory is HUB_DIR (made by `offline_hub` below: a hubconf.py that serves the
installed, pinned silero-vad package's model), torch.hub's `urlopen` raises URLError (so the lookup falls
back to that directory, as torch.hub does offline, and nothing is fetched), `torchaudio.load` is `pcm16_load`,
and torch computes on one thread, as fdbu's reference path does (`fdbu.vad.silero`). The script then runs as
`python get_timing.py --root_dir ROOT_DIR`. timing_each does the same set-up once, then runs the script on each
ROOT_DIR in turn, printing a line `[fdbu-run] ` + JSON (the root, the exit status, stdout, stderr) after each
(and `{"ready": true}` once the set-up is done).

gemini: v2's eval_single_item.py, run as `python eval_single_item.py ARGS...` (runpy, `__main__`), the key in
GEMINI_API_KEY as the script reads it. Its requests go where the script sends them
(https://generativelanguage.googleapis.com) unless BASE_URL is another root (a gateway, or fdbu's stub judge on
loopback): then `requests.post` sends the same request to BASE_URL + the same path. Every response is appended to
LEDGER as a JSON line (the URL without the key, the request's JSON body, the status and the reply's text; headers,
which hold the key, are not written).

    python -m fdbu.official.child gemini SCRIPT BASE_URL LEDGER ARGS...

behavior: v1.5's eval_behavior.py is imported and `eval_behavior_all(root_dir, client, task="behavior")` called,
as its evaluate.py does, with an `openai.OpenAI` client on JUDGE_URL (fdbu's stub judge on loopback), in the
working directory the caller chose (it opens ./instruction/behavior.txt); `time.sleep` is a no-op (the script
waits 5 s before asking again), and the printed dict is written as `[fdbu] ` and its JSON on the last line.

Only this module is imported before the script, so the script's own imports are its own.
"""
from __future__ import annotations

import runpy
import sys
from pathlib import Path
from typing import TYPE_CHECKING, cast


# the hub repository get_timing.py's torch.hub.load("snakers4/silero-vad", model="silero_vad", ...) finds: the
# installed silero-vad package's model and functions, as the repository's own hubconf.py returns them
HUBCONF = '''"""fdbu's offline stand-in for github.com/snakers4/silero-vad: the installed, pinned silero-vad package."""
dependencies = ["torch"]


def silero_vad(onnx=False, force_onnx_cpu=False, opset_version=16):
    from silero_vad import (VADIterator, collect_chunks, get_speech_timestamps, load_silero_vad, read_audio,
                            save_audio)

    model = load_silero_vad(onnx=onnx, opset_version=opset_version)
    return model, (get_speech_timestamps, save_audio, read_audio, VADIterator, collect_chunks)
'''
HUB_REPO = "snakers4_silero-vad_master"  # torch.hub's folder name for the repository's master branch
HUB = ("torch.hub.load('snakers4/silero-vad', ...) served offline from a hub directory holding the installed "
       "silero-vad package (fdbu.official.child.offline_hub); torch.hub's urlopen refused; one torch thread")


def offline_hub(dest: Path) -> Path:
    """A torch.hub directory holding the silero-vad repository as the installed package (this module's `timing`
    mode points torch.hub at it; fdbu.official.runner makes it)."""
    repo = dest / HUB_REPO
    repo.mkdir(parents=True)
    (repo / "hubconf.py").write_text(HUBCONF)
    return dest


if TYPE_CHECKING:
    from importlib.abc import Loader
    from importlib.machinery import ModuleSpec

LOADER = ("fdbu.official.child.pcm16_load in place of torchaudio.load: soundfile.read(dtype='float32') "
          "of a PCM16 WAV (samples / 32768) as a (channels, frames) float32 tensor, and the sample rate; "
          "any other file or argument raises")


def pcm16_load(uri, frame_offset=0, num_frames=-1, normalize=True, channels_first=True, format=None,
               buffer_size=4096, backend=None):
    """torchaudio.load's result for a PCM16 WAV, with torchaudio.load's signature; refuses the
    cases where it would not be that (other encodings, non-default arguments)."""
    import numpy as np
    import soundfile as sf
    import torch

    if (frame_offset, num_frames, normalize, channels_first, format, backend) != (0, -1, True, True, None, None):
        raise NotImplementedError("fdbu's PCM16 loader reproduces torchaudio.load(path) with default arguments only")
    info = sf.info(str(uri))
    if (info.format, info.subtype) != ("WAV", "PCM_16"):
        raise NotImplementedError(f"fdbu's loader reads PCM16 WAV only, not {info.format}/{info.subtype} ({uri})")
    data, sr = sf.read(str(uri), dtype="float32", always_2d=True)
    return torch.from_numpy(np.ascontiguousarray(data.T)), sr


def _as_main(script: str, root_dir: str) -> None:
    """What `python SCRIPT --root_dir ROOT_DIR` does: argv, the script's folder first on the path (once, however
    many runs)."""
    sys.argv = [script, "--root_dir", root_dir]
    folder = str(Path(script).resolve().parent)
    if sys.path[0] != folder:
        sys.path.insert(0, folder)
    runpy.run_path(script, run_name="__main__")


def interruption(script: str, root_dir: str, url: str) -> None:
    import importlib.util

    import openai

    sys.path.insert(0, str(Path(script).resolve().parent))
    # the script is a .py file: it has a spec, with a source loader
    spec = cast("ModuleSpec", importlib.util.spec_from_file_location("eval_user_interruption", script))
    module = importlib.util.module_from_spec(spec)
    cast("Loader", spec.loader).exec_module(module)
    module.eval_user_interruption(root_dir, openai.OpenAI(base_url=url, api_key="fdbu-stub-judge"))


def backchannel(script: str, root_dir: str) -> None:
    import torchaudio

    torchaudio.load = pcm16_load
    _as_main(script, root_dir)


def behavior(script: str, root_dir: str, url: str) -> None:
    import importlib.util
    import json
    import time

    import openai

    time.sleep = lambda seconds: None
    sys.path.insert(0, str(Path(script).resolve().parent))
    spec = cast("ModuleSpec", importlib.util.spec_from_file_location("eval_behavior", script))
    module = importlib.util.module_from_spec(spec)
    cast("Loader", spec.loader).exec_module(module)
    out = module.eval_behavior_all(root_dir, openai.OpenAI(base_url=url, api_key="fdbu-stub-judge"), task="behavior")
    print("[fdbu] " + json.dumps(out))


GEMINI = "https://generativelanguage.googleapis.com"  # eval_single_item.py's `base`
LEDGER_REPLY_CHARS = 1 << 20  # of a reply's text kept in the judge's ledger


def gemini(script: str, base_url: str, ledger: str, *args: str) -> None:
    import json

    import requests

    real = requests.post

    def post(url, *a, **kw):
        if base_url.rstrip("/") != GEMINI and url.startswith(GEMINI + "/"):
            url = base_url.rstrip("/") + url[len(GEMINI):]
        resp = real(url, *a, **kw)
        text = resp.text  # the script reads the whole reply; the ledger keeps its first MiB (an 80 MB reply grew the
        kept = text[:LEDGER_REPLY_CHARS]  # ledger to hundreds of MB) and says how much it left out
        with open(ledger, "a", encoding="utf-8") as f:
            f.write(json.dumps({"url": url, "request": kw.get("json"), "status": resp.status_code, "reply": kept,
                                **({"reply_cut_chars": len(text) - len(kept)} if len(kept) < len(text) else {})},
                               ensure_ascii=False) + "\n")
        return resp

    requests.post = post
    sys.argv = [script, *args]
    sys.path.insert(0, str(Path(script).resolve().parent))
    runpy.run_path(script, run_name="__main__")


def _offline_timing(hub_dir: str) -> None:
    """What get_timing.py runs under: torch.hub served from `hub_dir` (the installed silero-vad), its urlopen
    refused, one torch thread, torchaudio.load as fdbu's PCM16 loader."""
    from urllib.error import URLError

    import torch
    import torch.hub
    import torchaudio

    def offline(*args, **kwargs):
        raise URLError("fdbu runs get_timing.py offline: torch.hub serves the installed silero-vad")

    torch.set_num_threads(1)
    torch.hub.set_dir(hub_dir)
    torch.hub.urlopen = offline
    torchaudio.load = pcm16_load


def timing(script: str, root_dir: str, hub_dir: str) -> None:
    _offline_timing(hub_dir)
    _as_main(script, root_dir)


RUN = "[fdbu-run] "  # a line of `timing_each`'s stdout after each run: its root, exit status, stdout and stderr


def exit_status(code) -> int:
    """The exit status a process ending with SystemExit(code) has: None is 0, an integer modulo 256, anything else 1
    (printed to stderr, as Python does)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def timing_each(script: str, hub_dir: str, *root_dirs: str) -> None:
    """`python get_timing.py --root_dir ROOT` for each root in turn, in this one process (torch and the hub set up
    once; the script executed afresh each time, as __main__, with its folder first on the path): after each run,
    one JSON line of its exit status (1 where it raised, its traceback on its stderr as Python prints it), stdout
    and stderr, flushed, so a run the process does not survive leaves those before it reported. Ctrl-C stops."""
    import contextlib
    import io
    import json
    import traceback

    _offline_timing(hub_dir)
    print(RUN + json.dumps({"ready": True}), flush=True)  # torch and the hub set up: the runs start
    for root in root_dirs:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                _as_main(script, root)
                rc = 0
            except SystemExit as e:
                rc = exit_status(e.code)
            except Exception:
                traceback.print_exc()
                rc = 1
        print(RUN + json.dumps({"root": root, "rc": rc, "stdout": out.getvalue(), "stderr": err.getvalue()}),
              flush=True)


if __name__ == "__main__":
    # the official checkout is the user's: importing a script from it (interruption, behavior) would write its
    # __pycache__ there, wherever Python writes bytecode (PYTHONDONTWRITEBYTECODE unset, as on most machines)
    sys.dont_write_bytecode = True
    mode, *args = sys.argv[1:]
    globals()[mode](*args)  # the function a task's `Official.runner` names (fdbu.tasks)
