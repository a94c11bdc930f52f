"""A run pays no fixed cost it does not need (issue 36): a cached `fdbu score` loads neither torch nor NeMo (nor
silero-vad, torchaudio or scipy.stats), a shard computing on a CPU loads no torch, and what replaced asking torch
gives torch's own answers; Ctrl-C held while torch loads is delivered once it has loaded."""
from __future__ import annotations

import importlib.resources
import json
import os
import re
import shutil
import signal
import subprocess
import sys

import pytest

from fdbu.vad.silero import model_path, torch_version

HEAVY = ("torch", "nemo", "silero_vad", "torchaudio", "scipy.stats", "lightning", "matplotlib", "numba")


def _score(tree, out, cache) -> subprocess.CompletedProcess:
    """`fdbu score` as a user runs it, listing on stderr the modules it loaded."""
    code = ("import sys\nfrom fdbu.cli.main import main\n"
            f"try:\n    main(['score', 'tree={tree}', 'out={out}', 'cache_dir={cache}', 'progress=false'])\n"
            "finally:\n    print('MODULES', ' '.join(sys.modules), file=sys.stderr)\n")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)


def _modules(run: subprocess.CompletedProcess) -> set[str]:
    line = [x for x in run.stderr.splitlines() if x.startswith("MODULES ")][-1]
    return set(line.split()[1:])


@pytest.mark.slow
def test_a_cached_score_loads_no_torch(synth_tree, tmp_path):
    cache = tmp_path / "cache"
    first = _score(synth_tree, tmp_path / "a", cache)
    assert "torch" in _modules(first) and re.search(r"[1-9]\d* computed", first.stdout)
    again = _score(synth_tree, tmp_path / "b", cache)
    loaded = _modules(again)
    assert "fdbu.kernels" in loaded and "fdbu.scoring.pipeline" in loaded  # it did score
    heavy = set(HEAVY) - (set() if _built() else {"numba"})  # numba too where the kernels are compiled ahead
    assert not loaded & heavy, sorted(loaded & heavy)
    assert re.search(r"\b0 computed", again.stdout) and "no device started (the batched model computed nothing)" in again.stdout
    for name in ("unified.json", "unified-samples.jsonl"):  # the signature's torch version and model hash included
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_a_shard_computing_on_a_cpu_loads_no_torch(tmp_path, calibrated):
    """`fdbu vad shard=0 shards=N` on a CPU (device=auto as a user runs it, on a machine where torch could see no
    GPU; device=cpu elsewhere), its cache holding only this machine's
    calibration: the numpy engine computes its file, and neither torch nor silero-vad is imported. The tree is a
    silent system's (digital silence, whose window probabilities are 0.0017-0.0089 on the reference path): no
    comparison lies within any accepted device's margin (at most 8 x 1e-3) of a threshold, so on any CPU the guard
    sends nothing to the reference path, which would need torch."""
    from fdbu.common.cachedir import CALIBRATION, VAD_PROBS, cache_root
    from fdbu.synth import synthesize
    from fdbu.vad import stage

    from fdbu.common.device import no_gpu

    tree = synthesize(tmp_path / "silent", n=2, seed=0, system="silent", ineligible=0.0)
    cache = tmp_path / "cache"
    shutil.copytree(cache_root() / VAD_PROBS / CALIBRATION, cache / VAD_PROBS / CALIBRATION)
    files = len(stage.jobs([tree]))
    code = ("import sys\nfrom fdbu.cli.main import main\n"
            f"try:\n    main(['vad', 'tree={tree}', 'shard=0', 'shards={files}', 'cache_dir={cache}', 'vad.threads=1', "
            f"'device={'auto' if no_gpu() else 'cpu'}', "
            "'progress=false'])\nfinally:\n    print('MODULES', ' '.join(sys.modules), file=sys.stderr)\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "shard 0/" in run.stdout and " 1 computed, 0 already cached, 0 recomputed by the guard" in run.stdout
    assert "calibrating" not in run.stderr and "numpy" in run.stdout  # this machine's calibration, the numpy engine
    loaded = _modules(run)
    assert "fdbu.vad.batched_numpy" in loaded and not loaded & {"torch", "silero_vad", "torchaudio", "nemo"}


def test_no_gpu_is_told_only_where_torch_could_see_none(monkeypatch, tmp_path):
    """`device=auto` answers cpu without torch only when torch is built for neither CUDA nor ROCm, or the machine
    has no NVIDIA or AMD GPU on its PCI bus and no GPU driver's file; otherwise it asks torch."""
    import fnmatch

    from fdbu.common import device

    build = {"cuda": "12.8", "hip": None}
    monkeypatch.setattr(device, "torch_literal", lambda name: build[name])
    files: set[str] = set()
    monkeypatch.setattr(device.os.path, "exists", lambda f: f in files)
    monkeypatch.setattr(device.glob, "glob", lambda pattern: sorted(fnmatch.filter(files, pattern)))
    monkeypatch.setattr(device, "PCI", tmp_path / "pci")
    (tmp_path / "pci").mkdir()

    def pci(name, vendor, cls):
        (tmp_path / "pci" / name).mkdir()
        (tmp_path / "pci" / name / "vendor").write_text(vendor + "\n")
        (tmp_path / "pci" / name / "class").write_text(cls + "\n")

    pci("0000:00:01.0", "0x1af4", "0x020000")  # a virtio network card
    pci("0000:00:02.0", "0x10de", "0x0c0330")  # NVIDIA, but a USB controller
    assert device.no_gpu()  # a CUDA build on a machine without a GPU
    for present in ("/dev/nvidiactl", "/dev/nvidia3", "/proc/driver/nvidia", "/dev/nvgpu/igpu0", "/dev/nvmap",
                    "/dev/dxg", "/dev/kfd"):
        files = {present}
        assert not device.no_gpu(), present
    files = set()
    pci("0000:00:03.0", "0x10de", "0x030200")  # an NVIDIA 3D controller whose device files are not made yet
    assert not device.no_gpu()
    monkeypatch.setattr(device, "PCI", tmp_path / "no-such-bus")
    assert not device.no_gpu()  # a bus that cannot be read: perhaps
    build = {"cuda": None, "hip": None}
    assert device.no_gpu()  # a CPU build, whatever the machine has
    build = {"cuda": None, "hip": "6.2"}
    assert not device.no_gpu()


def test_what_replaced_asking_torch_gives_torchs_answers():
    import torch

    from fdbu.common.device import no_gpu, torch_literal

    assert torch_version() == torch.__version__  # the local build tag (+cu128, +cpu) included
    assert (torch_literal("cuda"), torch_literal("hip")) == (torch.version.cuda, torch.version.hip)
    assert not (no_gpu() and torch.cuda.is_available())  # never "no GPU" where torch sees one
    assert model_path() == importlib.resources.files("silero_vad.data").joinpath("silero_vad.jit")
    assert model_path().is_file()


@pytest.mark.skipif(sys.platform != "linux", reason="signals as Linux delivers them")
def test_ctrl_c_while_torch_loads_is_delivered_after_it():
    from fdbu.common.device import interrupts_held

    # a suite started as a shell's background job inherits SIGINT ignored (Python then installs no handler): the
    # test is of interrupts_held, so it starts from the disposition a foreground process has
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        _held_then_delivered(interrupts_held)
    finally:
        signal.signal(signal.SIGINT, previous)


def _held_then_delivered(interrupts_held) -> None:
    reached = []
    with pytest.raises(KeyboardInterrupt):
        with interrupts_held():
            os.kill(os.getpid(), signal.SIGINT)
            reached.append("after the signal")  # the block is not unwound by it
        reached.append("never")
    assert reached == ["after the signal"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    with interrupts_held():  # nothing held: nothing delivered
        pass


def _peak_rss_mb(cmd: list[str]) -> float:
    """Peak resident set of the process alone, in MB (forked from a fresh interpreter: a child of this test process,
    which may hold torch, would count torch's pages as its own)."""
    from benchmarks.common import measured

    run = measured(cmd)
    assert run["returncode"] == 0, run["stderr"]
    return run["rss_mb"]


@pytest.mark.slow
def test_a_scores_memory_does_not_grow_with_the_captures(tmp_path):
    """Peak RSS of `fdbu score` on 2,000 captures within 20 MB of its peak on 500 (one subset, so the bootstrap's
    resamples x samples are largest). What grows is the tree's samples and the rows written (about 8 MB per 1,000
    captures as Python objects: +12 MB here); resample indices held whole would add 8 B x 2,000 resamples x 1,500
    captures = 24 MB more, and did before issue 36 (benchmarks/scale.py measures 1,000 to 10,000 captures)."""
    from fdbu.synth import synthesize

    peak = {}
    for n in (500, 2000):
        tree = synthesize(tmp_path / f"t{n}", n={"candor_turn_taking": n}, seed=0, ineligible=0.0)
        peak[n] = _peak_rss_mb([sys.executable, "-m", "fdbu", "score", f"tree={tree}", f"cache_dir={tmp_path / 'c'}",
                                "progress=false"])
        shutil.rmtree(tree)
    assert peak[2000] - peak[500] < 20, peak


# ---- the kernels compiled ahead of time (kernels/aot.py, fdbu/common/compile_kernels.py) -----------------------------------

def _built() -> bool:
    import fdbu.kernels

    return fdbu.kernels._COMPILED is not None


def test_the_dispatch_key_is_numbas_own_type_name():
    """A call goes to an export only when every argument's type is the one numba would type it as."""
    import numba
    import numpy as np

    from fdbu.kernels.aot import key

    values = [np.arange(5), np.arange(6).reshape(2, 3), np.arange(6).reshape(2, 3).T, np.arange(10)[::2],
              np.zeros(3, np.float32), np.zeros(4, np.bool_), np.zeros(2, np.int32), np.frombuffer(b"\0" * 16, "<i8"),
              np.zeros(0), 3, -7, 2.5, True, np.int64(4), np.float64(1.5), np.float32(2.0), np.bool_(False)]
    for x in values:
        assert key(x) == str(numba.typeof(x)), (x, key(x), numba.typeof(x))
    assert key("text") is None and key(np.zeros(2, np.complex128)) is None and key(2**70) is None
    other_order = np.zeros(2, np.dtype(np.int64).newbyteorder())  # numba types no such array: the JIT kernel says so
    assert key(other_order) is None


@pytest.mark.slow
@pytest.mark.skipif(not _built(), reason="the kernels are not compiled ahead here (make install builds them)")
def test_the_compiled_kernels_write_the_jit_kernels_bytes(tmp_path, calibrated):
    """score (with both views) and compare of v1.0 and v1.5 trees, every kernel, through the compiled kernels and
    through numba's JIT kernels (FDBU_KERNELS=jit): the same bytes, the compiled runs import no numba, and --help
    imports none either way. Each way
    is one process running every command in turn (the CLI's own main), so it loads numba (or not) once."""
    from fdbu.synth import synthesize

    trees = {}
    for family, other in (("v1.0", "prompt"), ("v1.5", "yields")):
        trees[family] = [synthesize(tmp_path / f"{family}-{s}", n=3, seed=1, system=s, family=family, ineligible=0.0)
                         for s in ("mixed", other)]
    outputs = {}
    for way, env in (("aot", {}), ("jit", {"FDBU_KERNELS": "jit"})):
        env = {**os.environ, **env}
        runs = []
        for family, (a, b) in trees.items():
            out = tmp_path / way / family
            runs += [["score", f"tree={t}", f"out={out / t.name}", "views=[fdbench,videofdb]", "progress=false",
                      "vad.threads=1"]  # calibrated by the session (the default, the cores free now, may not be)
                     for t in (a, b)]
            # compare reads scored trees: the unified files beside the tree's samples
            runs.append(["copy", *(f"{out / t.name}|{t}" for t in (a, b))])
            runs.append(["compare", f"trees=[{a},{b}]", f"out={out / 'compare'}", "progress=false", "plot=false"])
        code = ("import contextlib, io, json, shutil, sys\nfrom fdbu.cli.main import main\n"
                "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n"
                "    main(['score', '--help'])\n"
                "print('HELP', 'NUMBA' if 'numba' in sys.modules else 'NO NUMBA', file=sys.stderr)\n"
                "for run in json.loads(sys.argv[1]):\n"
                "    if run[0] == 'copy':\n"
                "        for pair in run[1:]:\n"
                "            src, dst = pair.split('|')\n"
                "            for name in ('unified.json', 'unified-samples.jsonl'):\n"
                "                shutil.copy(f'{src}/{name}', f'{dst}/{name}')\n"
                "        continue\n"
                "    try:\n        main(run)\n    except SystemExit as e:\n        assert not e.code, (run, e.code)\n"
                "print('NUMBA' if 'numba' in sys.modules else 'NO NUMBA', file=sys.stderr)\n")
        done = subprocess.run([sys.executable, "-c", code, json.dumps(runs)], env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        loaded = done.stderr.strip().splitlines()[-1]
        assert "HELP NO NUMBA" in done.stderr.splitlines(), done.stderr  # --help imports no numba, either way
        outputs[way] = {p.relative_to(tmp_path / way): p.read_bytes() for p in (tmp_path / way).rglob("*")
                        if p.is_file() and p.suffix in (".json", ".jsonl", ".csv")}
        assert loaded == ("NO NUMBA" if way == "aot" else "NUMBA"), loaded
    assert outputs["aot"].keys() == outputs["jit"].keys() and len(outputs["aot"]) >= 10
    assert [k for k in outputs["aot"] if outputs["aot"][k] != outputs["jit"][k]] == []


@pytest.mark.skipif(not _built(), reason="the kernels are not compiled ahead here (make install builds them)")
def test_a_damaged_kernels_record_falls_back_to_the_jit_kernels_in_a_note(tmp_path, monkeypatch):
    """kernels/_compiled.json not as fdbu.common.compile_kernels writes it (a list, no exports, exports a list, an export
    the module lacks, a kernel that is none): the JIT kernels, and a note naming the file and what is wrong; the
    real record loads; a stale or unreadable one falls back quietly."""
    import json
    import logging

    from fdbu.kernels import aot

    notes: list = []
    catch = logging.Handler(logging.WARNING)
    catch.emit = lambda record: notes.append(record.getMessage())  # type: ignore[method-assign]
    monkeypatch.setattr(logging.getLogger("fdbu"), "handlers", [*logging.getLogger("fdbu").handlers, catch])
    real = json.loads(aot.RECORD.read_text())
    one_more = {**real["exports"], "ranked": real["exports"]["ranked"] + [["int64"]]}
    cases = {"list": ([], "it is not a JSON object"), "no exports": ({"sources": real["sources"]}, "its exports are not a mapping"),
             "exports a list": ({**real, "exports": []}, "its exports are not a mapping"),
             "one export more": ({**real, "exports": one_more}, f"ranked's export {len(one_more['ranked']) - 1} is not"),
             "no kernel": ({**real, "exports": {"rm": [["int64"]]}}, "'rm' is no kernel"),
             "types not text": ({**real, "exports": {"ranked": [[1]]}}, "ranked's exports are not lists of type names"),
             "stale": ({**real, "sources": "0" * 64}, None)}
    for case, (record, said) in cases.items():
        path = tmp_path / f"{case}.json"
        path.write_text(json.dumps(record))
        notes.clear()
        assert aot.load(path) is None, case
        assert notes == ([] if said is None else [notes[0]]) and (said is None or said in notes[0]), (case, notes)
        assert said is None or f"{path} is damaged" in notes[0]
    (tmp_path / "bytes.json").write_bytes(b"\xff\xfe{")
    assert aot.load(tmp_path / "bytes.json") is None and notes == []
    assert aot.load() is not None and notes == []
