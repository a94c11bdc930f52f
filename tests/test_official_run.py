"""evaluate.run_official: pins, disagreements and how a script's output is read. The real
scripts are run in test_official_scripts.py; here stand-ins (written here, not copied) make
a script disagree or crash on purpose."""
import importlib
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from builders import pause_ann, sample, turn_ann, write_tree
from fdbu.official import rules as official
from fdbu.official.runner import agrees, compare
from fdbu.official.child import pcm16_load
from official_scripts import OFFICIAL, needs_official

FDBU = str(Path(sys.executable).parent / "fdbu")

# Stand-ins with the official scripts' interface and result block.
PAUSE = '''
import argparse, json, os
p = argparse.ArgumentParser(); p.add_argument("--root_dir"); a = p.parse_args()
tors = []
for d in os.listdir(a.root_dir):
    c = json.load(open(os.path.join(a.root_dir, d, "output.json")))["chunks"]
    tors.append(0 if not c else 1)
print("---------------------------------------------------")
print("[Result]")
print("Average take turn: ", sum(tors) / len(tors) + OFFSET)
'''
TURN = '''
import argparse
p = argparse.ArgumentParser(); p.add_argument("--root_dir"); a = p.parse_args()
raise TypeError("unsupported operand type(s) for -: 'NoneType' and 'float'")
'''


def checkout(root: Path, offset: float) -> Path:
    ev = root / "v1_v1.5" / "evaluation"
    ev.mkdir(parents=True)
    (ev / "eval_pause_handling.py").write_text(PAUSE.replace("OFFSET", repr(offset)))
    (ev / "eval_smooth_turn_taking.py").write_text(TURN)
    (ev / "eval_backchannel.py").write_text("raise SystemExit('a stand-in never run: no ground truth given')\n")
    return root


@pytest.fixture()
def tree(tmp_path):
    return write_tree(tmp_path / "t", [
        sample("synthetic_pause_handling", 0, 10.0, [(5.0, 7.0)], pause_ann([(3.0, 3.5)])),
        sample("synthetic_pause_handling", 1, 10.0, [], pause_ann([(3.0, 3.5)])),
        sample("candor_turn_taking", 0, 10.0, [(6.0, 7.5)], turn_ann(5.0)),
        sample("icc_backchannel", 0, 2.0),
    ])


def run(tree, fdb, *extra):
    return subprocess.run([FDBU, "evaluate", f"tree={tree}", "evaluate.run_official=true",
                           f"evaluate.official_checkout={fdb}", *extra], capture_output=True, text=True)


@pytest.mark.slow
def test_unpinned_scripts_are_refused_by_name(tree, tmp_path):
    out = run(tree, checkout(tmp_path / "fdb", 0.0))
    assert out.returncode == 2 and not (tree / "summary.json").exists()
    assert out.stderr.strip().splitlines() == [
        "fdbu: error: official checkout: eval_backchannel.py, eval_pause_handling.py, eval_smooth_turn_taking.py: "
        "SHA-256 differs from "
        "fdbu's pins (evaluate.official_sha256); check out the pinned Full-Duplex-Bench revision, or pass "
        "evaluate.allow_unpinned=true to compare anyway"]


@pytest.mark.slow
def test_disagreement_and_a_crashing_script_exit_3(tree, tmp_path):
    out = run(tree, checkout(tmp_path / "fdb", 1e-6), "evaluate.allow_unpinned=true")
    assert out.returncode == 3
    assert "official eval_pause_handling.py on synthetic_pause_handling: differs: take_turn_rate official " \
           "0.500001, fdbu 0.5" in out.stdout
    assert "official eval_smooth_turn_taking.py on candor_turn_taking: differs (the script raised TypeError" in out.stdout
    assert "official eval_backchannel.py on icc_backchannel: could not run (needs icc_gt_distribution.json: " \
           "evaluate.gt_distribution=PATH)" in out.stdout
    assert "official scripts disagree with fdbu's rules:" in out.stderr
    run_ = json.loads((tree / "summary.json").read_text())["official_run"]
    assert run_["allow_unpinned"] is True and run_["files"]["eval_pause_handling.py"]["pinned"] is False
    assert run_["subsets"]["synthetic_pause_handling"]["numbers"]["take_turn_rate"] == {
        "official": "0.500001", "fdbu": 0.5, "bound": 1e-9, "agree": False}


def test_printed_precision_bounds():
    assert agrees("0.1235", 0.12345, rounded=True) == (True, 0.5e-4 + 1e-9)   # :.4f of 0.12345 may print 0.1235
    assert agrees("0.1235", 0.123449, rounded=True)[0] is False
    assert agrees("0.1235", 0.12345, rounded=False)[0] is False               # a repr float: 1e-9 only
    assert agrees("0.500000000001", 0.5, rounded=False) == (True, 1e-9)
    assert agrees("0.500000002", 0.5, rounded=False)[0] is False
    assert agrees("nan", "nan", rounded=True)[0] and not agrees("nan", 0.0, rounded=True)[0]
    assert not agrees("0.5", {"unavailable": "ZeroDivisionError: division by zero"}, rounded=False)[0]


TRACEBACK = "Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\n{}\n"


def test_reading_what_a_script_did():
    ours = {"take_turn_rate": {"unavailable": "ZeroDivisionError: division by zero"}}
    r = compare("synthetic_pause_handling", 1, "", "evaluate: 0it\n" + TRACEBACK.format("ZeroDivisionError: division by zero"), ours)
    assert r["status"] == "agreed" and r["official_raised"] == "ZeroDivisionError: division by zero"
    r = compare("synthetic_pause_handling", 1, "", TRACEBACK.format("KeyError: 'chunks'") + "\revaluate: 0it\n", ours)
    assert r["status"] == "differs" and r["official_raised"] == "KeyError: 'chunks'"
    r = compare("synthetic_user_interruption", 1, "", TRACEBACK.format("ModuleNotFoundError: No module named 'openai'"), {})
    assert r == {"script": "eval_user_interruption.py", "status": "could not run",
                 "why": "ModuleNotFoundError: No module named 'openai'"}
    r = compare("synthetic_user_interruption", 1, "", TRACEBACK.format("openai.APIConnectionError: Connection error."),
                {"rating": {"unavailable": "APIConnectionError: x"}, "take_turn_rate": {"unavailable": "APIConnectionError: x"},
                 "latency_s": {"unavailable": "APIConnectionError: x"}})
    assert r["status"] == "agreed" and r["official_raised"] == "APIConnectionError: Connection error."
    printed = "[Result]\nJSD - Mean: 0.5000 ± 0.1000\nTOR - Mean: nan ± nan\nFrequency - Mean: 0.0100 ± 0.0000\n" \
              "\n[Raw Counts]\nNumber of samples: 2\n"
    ours = {"jsd": {"mean": 0.50004, "std": 0.1}, "take_turn_rate": {"mean": "nan", "std": "nan"},
            "frequency_per_s": {"mean": 0.01, "std": 0.0}, "samples": 2}
    assert compare("icc_backchannel", 0, printed, "", ours)["status"] == "agreed"
    assert compare("icc_backchannel", 0, printed, "", {**ours, "samples": 3})["status"] == "differs"


def test_pcm16_loader_gives_torchaudio_loads_result(tmp_path):
    """torchaudio.load of a PCM16 WAV: float32 (channels, frames), the samples / 32768."""
    pcm = np.array([-32768, -1, 0, 1, 12345, 32767], np.int16)
    sf.write(tmp_path / "a.wav", pcm, 16000, subtype="PCM_16")
    wav, sr = pcm16_load(str(tmp_path / "a.wav"))
    assert sr == 16000 and wav.dtype.is_floating_point and str(wav.dtype) == "torch.float32"
    assert tuple(wav.shape) == (1, 6) and wav.numpy().tolist() == [(pcm.astype(np.float64) / 32768).tolist()]
    sf.write(tmp_path / "b.wav", pcm, 16000, subtype="PCM_24")
    with pytest.raises(NotImplementedError, match="PCM16 WAV only"):
        pcm16_load(str(tmp_path / "b.wav"))
    with pytest.raises(NotImplementedError):
        pcm16_load(str(tmp_path / "a.wav"), num_frames=3)


@pytest.mark.parametrize("subtype", ["PCM_16", "PCM_24", "FLOAT"])
def test_read_wav_gives_libsndfile_s_floats_for_every_value(tmp_path, subtype):
    """fdbu.common.audio.read_wav scales a PCM16 file's integers itself: every one of the 65,536 values comes out as
    libsndfile's float32 conversion (soundfile.read) gives it, bit for bit, and as value / 32768; the other
    encodings (24-bit, float) still go through libsndfile's conversion."""
    from fdbu.common.audio import read_wav

    values = np.arange(-32768, 32768, dtype=np.int64)
    if subtype == "PCM_16":
        data = values.astype(np.int16)
    else:
        data = np.random.default_rng(0).uniform(-1, 1, 70000).astype(np.float32)
    sf.write(tmp_path / "a.wav", data, 16000, subtype=subtype)
    got = read_wav(tmp_path / "a.wav", "x/1")
    want = sf.read(str(tmp_path / "a.wav"), dtype="float32")[0]
    assert got.dtype == np.float32 and got.shape == want.shape
    assert got.view(np.int32).tolist() == want.view(np.int32).tolist()  # the bits
    if subtype == "PCM_16":
        assert got.tolist() == (values / 32768).tolist()


@pytest.mark.slow
def test_pcm16_loader_equals_torchaudio_load_where_torchcodec_is_installed(tmp_path):
    try:
        importlib.import_module("torchcodec.decoders")  # loads the FFmpeg libraries
    except (ImportError, RuntimeError, OSError) as e:
        pytest.skip(f"TorchCodec or the FFmpeg libraries are missing (make system-tools): torchaudio.load cannot run: {e}")
    import torch
    import torchaudio

    pcm = np.concatenate([[-32768, -1, 0, 1, 32767], np.random.default_rng(0).integers(-32768, 32768, 50000)])
    sf.write(tmp_path / "a.wav", pcm.astype(np.int16), 16000, subtype="PCM_16")
    (want, want_sr), (got, got_sr) = torchaudio.load(str(tmp_path / "a.wav")), pcm16_load(str(tmp_path / "a.wav"))
    assert torch.equal(want, got) and want_sr == got_sr


def shipped_readme_pins(folder: Path) -> dict[str, str]:
    text = (folder / "README.md").read_text()
    return {name: digest for digest, name in re.findall(r"^\s*([0-9a-f]{64})\s+(\S+)\s*$", text, re.M)}


@needs_official
def test_the_shipped_pins_are_the_official_files():
    """v1.0's files are pinned as shared/official's README lists them, and v1.5's timing script as
    shared/official-v1.5's does (both folders are the same upstream evaluation folder at one commit)."""
    from official_scripts import OFFICIAL_V15

    from official_scripts import OFFICIAL_V2

    pins = official.shipped_pins()
    v15 = {official.TIMING_SCRIPT, official.BEHAVIOR_SCRIPT, official.BEHAVIOR_PROMPT}
    v2 = {official.JUDGE_SCORE_SCRIPT, official.JUDGE_TIME_SCRIPT, official.JUDGE_V2_SCRIPT, official.JUDGE_V2_PROMPTS,
          official.JUDGE_V2_TASKS, official.JUDGE_V2_PARSE}
    assert set(pins) == set(official.OFFICIAL_FILES) | v15 | v2
    for name, _digest in pins.items():
        folder = OFFICIAL_V15 if name in v15 else OFFICIAL_V2 if name in v2 else OFFICIAL
        if folder is None:
            continue
        assert official.file_report(official.script_path(folder, name), name, pins)["pinned"], name
    if (OFFICIAL / "README.md").is_file():  # shared/official's README lists them
        assert shipped_readme_pins(OFFICIAL) == {k: v for k, v in pins.items() if k not in v15 | v2}
    if OFFICIAL_V15 is not None and (OFFICIAL_V15 / "README.md").is_file():
        listed = shipped_readme_pins(OFFICIAL_V15)
        assert {k: listed[k] for k in v15} == {k: pins[k] for k in v15}
    if OFFICIAL_V2 is not None and (OFFICIAL_V2 / "README.md").is_file():  # v2's own folder, its own README
        listed = shipped_readme_pins(OFFICIAL_V2)
        assert {k: listed[k] for k in v2} == {k: pins[k] for k in v2}


EACH = '''
import argparse, os, sys
p = argparse.ArgumentParser(); p.add_argument("--root_dir"); a = p.parse_args()
name = os.path.basename(a.root_dir)
print("on", name); print("err", name, file=sys.stderr)
if name == "raises":
    raise KeyError("no_such_key")
if name == "exits":
    sys.exit(2)
if name == "says":
    sys.exit("a message")
if name == "dies":
    sys.stdout.flush(); os._exit(3)
'''


@pytest.mark.slow
def test_each_timing_run_keeps_its_own_status_and_output(tmp_path):
    """get_timing.py's runs in one process (run_each_timing): each root's exit status as its own process would have
    it (a raise 1 with its traceback, sys.exit(2) 2, sys.exit(text) 1 with the text on stderr), its output apart
    from the others'; a run the process does not survive, and every run after it, run again alone."""
    from fdbu.official.runner import run_each_timing

    script = tmp_path / "get_timing.py"
    script.write_text(EACH)
    names = ["fine", "raises", "exits", "says", "dies", "after"]
    for n in names:
        (tmp_path / n).mkdir()
    runs = dict(zip(names, run_each_timing(script, tmp_path / "hub", [tmp_path / n for n in names], tmp_path)))
    assert runs["fine"] == (0, "on fine\n", "err fine\n")
    assert runs["raises"][0] == 1 and runs["raises"][2].endswith("KeyError: 'no_such_key'\n")
    assert runs["raises"][1] == "on raises\n" and runs["raises"][2].startswith("err raises\nTraceback")
    assert runs["exits"] == (2, "on exits\n", "err exits\n")
    assert runs["says"] == (1, "on says\n", "err says\na message\n")
    assert runs["dies"][:2] == (3, "on dies\n") and runs["after"] == (0, "on after\n", "err after\n")


@pytest.mark.parametrize("mode,name,call", [
    ("interruption", "eval_user_interruption.py", "def eval_user_interruption(root_dir, client):\n    print('ran')\n"),
    ("behavior", "eval_behavior.py", "def eval_behavior_all(root_dir, client, task):\n    return {'ran': task}\n")])
def test_a_script_imported_from_the_official_checkout_leaves_no_bytecode_there(tmp_path, mode, name, call):
    """The child imports these two scripts as modules (the others run as __main__, which Python never caches): where
    Python writes bytecode (PYTHONDONTWRITEBYTECODE unset, as on most machines), it would write __pycache__ into the
    user's official checkout, a folder fdbu only reads."""
    import os

    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / name).write_text(call)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    out = subprocess.run([sys.executable, "-m", "fdbu.official.child", mode, str(checkout / name), str(tmp_path),
                          "http://127.0.0.1:9"], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0 and "ran" in out.stdout, out.stderr
    assert sorted(p.name for p in checkout.iterdir()) == [name]
