"""A run served from the cache pays no fixed cost it does not need (issue 36): a cached `fdbu score` loads neither
torch nor NeMo (nor silero-vad, torchaudio or scipy.stats), and what replaced asking torch gives torch's own
answers; Ctrl-C held while torch loads is delivered once it has loaded."""
from __future__ import annotations

import importlib.resources
import os
import re
import shutil
import signal
import subprocess
import sys

import pytest

from fdbu.vad.silero import model_path, torch_version

HEAVY = ("torch", "nemo", "silero_vad", "torchaudio", "scipy.stats", "lightning", "matplotlib")


def _score(tree, out, cache) -> subprocess.CompletedProcess:
    """`fdbu score` as a user runs it, listing on stderr the modules it loaded."""
    code = ("import sys\nfrom fdbu.cli import main\n"
            f"try:\n    main(['score', 'tree={tree}', 'out={out}', 'cache_dir={cache}', 'progress=false'])\n"
            "finally:\n    print('MODULES', ' '.join(sys.modules), file=sys.stderr)\n")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)


def _modules(run: subprocess.CompletedProcess) -> set[str]:
    line = [x for x in run.stderr.splitlines() if x.startswith("MODULES ")][-1]
    return set(line.split()[1:])


def test_a_cached_score_loads_no_torch(synth_tree, tmp_path):
    cache = tmp_path / "cache"
    first = _score(synth_tree, tmp_path / "a", cache)
    assert "torch" in _modules(first) and re.search(r"[1-9]\d* computed", first.stdout)
    again = _score(synth_tree, tmp_path / "b", cache)
    loaded = _modules(again)
    assert "fdbu.kernels" in loaded and "fdbu.pipeline" in loaded  # it did score
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))
    assert re.search(r"\b0 computed", again.stdout) and "no device started (the batched model computed nothing)" in again.stdout
    for name in ("unified.json", "unified-samples.jsonl"):  # the signature's torch version and model hash included
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_what_replaced_asking_torch_gives_torchs_answers():
    import torch

    assert torch_version() == torch.__version__  # the local build tag (+cu128, +cpu) included
    assert model_path() == importlib.resources.files("silero_vad.data").joinpath("silero_vad.jit")
    assert model_path().is_file()


@pytest.mark.skipif(sys.platform != "linux", reason="signals as Linux delivers them")
def test_ctrl_c_while_torch_loads_is_delivered_after_it():
    from fdbu.device import interrupts_held

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
