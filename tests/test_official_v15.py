"""Full-Duplex-Bench v1.5's timing script, run unchanged and offline, against fdbu's re-implementation
(`fdbu.official.timing`): latency_intervals.json byte for byte on synthetic sample folders with real synthetic
speech, and the script's own interval functions against fdbu's on random segment lists with the edge cases
(touching, nested, equal ends, empty)."""
import hashlib
import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import soundfile as sf

from fdbu.official import timing
from fdbu.official.runner import offline_hub, run_script
from fdbu.synth import SR, Capture
from official_scripts import OFFICIAL_V15, needs_official_v15

PINNED = "4f551da4194ab4d9584db964f4b27223914eecf98cbc312388ecf45eaf6f8a17"  # shared/official-v1.5/README.md


def conversation(rng, seconds: float) -> tuple[np.ndarray, np.ndarray]:
    """A user and a system taking turns with overlaps: words from synth's espeak bank, random gaps."""
    n = int(SR * seconds)
    user, system = Capture(n, rng), Capture(n, rng)
    t = 0.2
    while t < seconds - 1:
        t = user.say(t, words=int(rng.integers(1, 6))) + rng.uniform(0.05, 1.5)
    t = rng.uniform(0.0, 2.0)
    while t < seconds - 1:
        t = system.say(t, words=int(rng.integers(1, 5))) + rng.uniform(0.05, 1.2)
    return user.audio, system.audio


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("v15") / "root"
    root.mkdir()
    rng = np.random.default_rng(15)
    for i in range(8):
        user, system = conversation(rng, rng.uniform(6, 12))
        if i == 7:
            system[:] = 0  # a silent system: both lists empty
        folder = root / f"{i:03d}"
        folder.mkdir()
        sf.write(folder / "input.wav", user, SR, subtype="PCM_16")
        sf.write(folder / "output.wav", system, SR, subtype="PCM_16")
    return root


@pytest.mark.slow
@needs_official_v15
def test_the_official_timing_script_and_fdbu_write_the_same_bytes(folders, tmp_path):
    script = OFFICIAL_V15 / timing.SCRIPT
    assert hashlib.sha256(script.read_bytes()).hexdigest() == PINNED
    hub = offline_hub(tmp_path / "hub")
    status, out, err = run_script("timing", script, folders, tmp_path, str(hub))
    assert status == 0, err
    assert f"Using cache found in {hub}" in err  # the offline hub, not GitHub
    from fdbu.vad.silero import SileroVAD

    vad = SileroVAD(timing.SETTINGS)
    lists = 0
    for folder in sorted(folders.iterdir()):
        user, _ = sf.read(folder / "input.wav", dtype="float32")
        system, _ = sf.read(folder / "output.wav", dtype="float32")
        ours = timing.file_bytes(timing.intervals(vad.segment_samples(user), vad.segment_samples(system)))
        assert ours == (folder / timing.OUT_FILENAME).read_bytes(), folder.name
        data = json.loads(ours)
        lists += len(data["latency_stop_list"]) + len(data["latency_resp_list"])
    assert lists > 20  # the folders exercise both lists
    assert json.loads((folders / "007" / timing.OUT_FILENAME).read_text()) == {"latency_stop_list": [],
                                                                              "latency_resp_list": []}


def offline(hub) -> str:
    """The start of a child's program: torch.hub pointed at the offline hub, its network lookups refused."""
    return textwrap.dedent(f"""
        import torch.hub
        from urllib.error import URLError
        torch.hub.set_dir({str(hub)!r})
        def offline(*a, **k):
            raise URLError("offline")
        torch.hub.urlopen = offline
    """)


def random_segments(rng, k: int, grid: bool) -> list[tuple[int, int]]:
    """Sorted, disjoint segments in samples (as silero returns them); on a coarse grid, so ends coincide, segments
    touch and gaps fall exactly on the merge thresholds."""
    out, t = [], int(rng.integers(0, 3)) * 1600
    for _ in range(k):
        t += int(rng.integers(0, 12)) * 1600 if grid else int(rng.integers(1, 20000))
        length = int(rng.integers(1, 30)) * 1600 if grid else int(rng.integers(1, 40000))
        out.append((t, t + length))
        t += length
    return out


@pytest.mark.slow
@needs_official_v15
def test_the_scripts_own_functions_agree_with_fdbus_on_random_segments(tmp_path):
    """The script's `seg_sec` merge, `overlaps` and `response_gaps`, imported in a child process with the offline
    hub (importing it loads the model), on 400 random cases, against fdbu.official.timing."""
    rng = np.random.default_rng(5)
    cases = [[random_segments(rng, int(rng.integers(0, 9)), grid), random_segments(rng, int(rng.integers(0, 9)), grid)]
             for grid in (True, False) for _ in range(200)]
    cases += [[[], []], [[(0, 16000)], []], [[], [(0, 16000)]], [[(0, 16000)], [(0, 16000)]],
              [[(0, 16000), (25600, 32000)], [(16000, 25600)]]]  # touching and 0.6 s exactly
    hub = offline_hub(tmp_path / "hub")
    code = offline(hub) + textwrap.dedent(f"""
        import json, sys, importlib.util
        spec = importlib.util.spec_from_file_location("get_timing", {str(OFFICIAL_V15 / timing.SCRIPT)!r})
        m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
        out = []
        for user, model in json.load(sys.stdin):
            u = m._merge([(s / m.SR, e / m.SR) for s, e in user], m.USER_MERGE_GAP)
            s = m._merge([(s / m.SR, e / m.SR) for s, e in model], m.MODEL_MERGE_GAP)
            out.append({{"latency_stop_list": m.overlaps(u, s), "latency_resp_list": m.response_gaps(u, s)}})
        print(json.dumps(out))
    """)
    proc = subprocess.run([sys.executable, "-c", code], input=json.dumps(cases), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    theirs = json.loads(proc.stdout)
    ours = [timing.intervals([tuple(x) for x in u], [tuple(x) for x in m]) for u, m in cases]
    assert [json.dumps(o) for o in ours] == [json.dumps(t) for t in theirs]  # floats compared by their repr
    assert sum(bool(t["latency_stop_list"]) for t in theirs) > 100 and sum(bool(t["latency_resp_list"])
                                                                            for t in theirs) > 100


@pytest.mark.slow
def test_the_offline_hub_serves_the_installed_model(tmp_path):
    """torch.hub.load on the offline hub directory returns the installed package's model (its scripted weights
    give the packaged model's output) and never reaches for the network."""
    hub = offline_hub(tmp_path / "hub")
    code = offline(hub) + textwrap.dedent("""
        import torch
        model, utils = torch.hub.load("snakers4/silero-vad", model="silero_vad", trust_repo=True, onnx=False)
        from silero_vad import load_silero_vad
        x = torch.sin(torch.arange(512) / 7.0) * 0.3
        print(model(x, 16000).item() == load_silero_vad()(x, 16000).item(), utils[0].__module__)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True", "silero_vad.utils_vad"]
