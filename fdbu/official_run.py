"""`evaluate.run_official=true`: run the official scripts unchanged and compare with fdbu's rules.

Each script gets a temporary copy of the tree laid out the way it reads it
(`<root_dir>/<id>/output.json` plus the annotation, eligible samples only), runs with this
Python from the user's checkout, and its printed `[Result]` block is parsed. Numbers that
differ from fdbu's re-implementation by more than 1e-9 are disagreements.
"""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from .official import script_path
from .tree import SUBSETS, Tree

TOLERANCE = 1e-9
SCRIPTS = {  # subset -> (script, {printed label: summary key})
    "synthetic_pause_handling": ("eval_pause_handling.py", {"Average take turn": "take_turn_rate"}),
    "candor_pause_handling": ("eval_pause_handling.py", {"Average take turn": "take_turn_rate"}),
    "candor_turn_taking": ("eval_smooth_turn_taking.py", {"Average take turn": "take_turn_rate",
                                                          "Average latency": "latency_s"}),
}
NOT_RUN = {"synthetic_user_interruption": "eval_user_interruption.py needs an API client object; its take-turn "
                                          "rate and latency are compared only through fdbu's rules",
           "icc_backchannel": "eval_backchannel.py needs loguru and its own working directory"}


def _layout(tree: Tree, subset: str, dest: Path) -> None:
    ann = SUBSETS[subset][1]
    for s in tree.subset(subset):
        if s.eligible:
            (dest / s.name).mkdir(parents=True)
            for f in ("output.json", ann):
                shutil.copyfile(s.folder / f, dest / s.name / f)


def parse_result(stdout: str, labels: dict[str, str]) -> dict[str, float]:
    block = stdout.split("[Result]", 1)[-1]
    out = {}
    for label, key in labels.items():
        m = re.search(re.escape(label) + r":\s+(\S+)", block)
        if m:
            out[key] = float(m.group(1))
    return out


def run_official(tree: Tree, checkout: Path, result: dict) -> tuple[dict, list[str]]:
    """Returns ({subset: {key: {official, fdbu, agree}}}, disagreement lines)."""
    report, disagreements = {}, []
    with tempfile.TemporaryDirectory(prefix="fdbu-official-") as tmp:
        for subset, (script, labels) in SCRIPTS.items():
            if not tree.subset(subset) or subset not in result["subsets"]:
                continue
            root = Path(tmp) / subset
            root.mkdir()
            _layout(tree, subset, root)
            proc = subprocess.run([sys.executable, str(checkout / script_path(checkout, script)), "--root_dir", str(root)],
                                  capture_output=True, text=True, cwd=tmp)
            if proc.returncode != 0:
                report[subset] = {"official_failed": (proc.stderr.strip().splitlines() or ["(no output)"])[-1]}
                ours = result["subsets"][subset]
                if not any(isinstance(v, dict) and "unavailable" in v for v in ours.values()):
                    disagreements.append(f"{subset}: the official {script} failed but fdbu computed numbers")
                continue
            printed = parse_result(proc.stdout, labels)
            report[subset] = {}
            for key, official in printed.items():
                ours = result["subsets"][subset].get(key)
                agree = isinstance(ours, (int, float)) and abs(ours - official) <= TOLERANCE
                report[subset][key] = {"official": official, "fdbu": ours, "agree": agree}
                if not agree:
                    disagreements.append(f"{subset} {key}: official {official!r}, fdbu {ours!r}")
    for subset, why in NOT_RUN.items():
        if tree.subset(subset):
            report[subset] = {"not_run": why}
    return report, disagreements
