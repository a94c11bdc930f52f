"""evaluate.run_official: the official scripts' printed numbers against fdbu's rules."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

FDBU = str(Path(sys.executable).parent / "fdbu")

# Stand-ins with the official scripts' interface and result block (written here, not copied).
PAUSE = '''
import argparse, json, os
p = argparse.ArgumentParser(); p.add_argument("--root_dir"); a = p.parse_args()
tors = []
for d in os.listdir(a.root_dir):
    c = json.load(open(os.path.join(a.root_dir, d, "output.json")))["chunks"]
    if not c:
        tors.append(0); continue
    end = c[-1]["timestamp"][0] if c[-1]["timestamp"][-1] is None else c[-1]["timestamp"][-1]
    tors.append(0 if end - c[0]["timestamp"][0] < 1 and len(c) <= 3 else 1)
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
    return root


def run(tree, fdb):
    return subprocess.run([FDBU, "evaluate", f"tree={tree}", "evaluate.run_official=true",
                           f"evaluate.official_checkout={fdb}"], capture_output=True, text=True)


def test_agreement_and_a_crashing_script(synth_tree, tmp_path):
    tree = tmp_path / "t"
    shutil.copytree(synth_tree, tree)
    out = run(tree, checkout(tmp_path / "fdb", 0.0))
    summary = json.loads((tree / "summary.json").read_text())
    report = summary["official_run"]
    assert report["candor_pause_handling"]["take_turn_rate"]["agree"] is True
    assert report["candor_pause_handling"]["take_turn_rate"]["official"] == \
        summary["subsets"]["candor_pause_handling"]["take_turn_rate"]
    assert report["candor_turn_taking"]["official_failed"].startswith("TypeError")
    assert "not_run" in report["synthetic_user_interruption"]
    # the turn-taking stand-in crashed while fdbu's rules gave numbers: that is a disagreement
    assert out.returncode == 3 and "candor_turn_taking: the official eval_smooth_turn_taking.py failed" in out.stderr


def test_a_different_number_is_a_disagreement(synth_tree, tmp_path):
    tree = tmp_path / "t"
    shutil.copytree(synth_tree, tree)
    out = run(tree, checkout(tmp_path / "fdb", 1e-6))
    assert out.returncode == 3
    assert "synthetic_pause_handling take_turn_rate: official" in out.stderr
    assert json.loads((tree / "summary.json").read_text())["official_run"]["synthetic_pause_handling"][
        "take_turn_rate"]["agree"] is False


@pytest.mark.skipif(not os.environ.get("FDB_OFFICIAL"), reason="set FDB_OFFICIAL to a Full-Duplex-Bench checkout")
def test_real_official_scripts_agree(synth_tree, tmp_path):
    tree = tmp_path / "t"
    shutil.copytree(synth_tree, tree)
    out = run(tree, os.environ["FDB_OFFICIAL"])
    assert out.returncode == 0, out.stderr
