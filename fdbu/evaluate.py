"""`fdbu evaluate`: the official rules on a reference tree, written to summary.json.

summary.json records the SHA-256 of the manifest.json and asr.json it was computed from;
`fdbu score` prints its numbers as the reference column only while both still match.
It is never used for scoring.
"""
from __future__ import annotations

import json
from pathlib import Path

from . import __version__
from . import official
from .atomic import sha256_bytes, write_json, write_text, written_by_fdbu
from .errors import FdbuError
from .tree import SCORED_SUBSETS, Tree, hashed, load_tree
from .vad import SileroVAD
from .vad.audio import read_wav

SUMMARY = "summary.json"
LEDGER = "judge-ledger.jsonl"


def _chunks(sample) -> list[dict]:
    """The transcript as the official scripts read it (raw chunks, nulls kept); hash-checked on loading."""
    return json.loads((sample.folder / "output.json").read_bytes())["chunks"]


def _reference_time(sample, file: str, index: int) -> float:
    """E or R exactly as the official scripts read it: the raw float of the annotation."""
    return json.loads((sample.folder / file).read_bytes())[0]["timestamp"][index]


def _backchannel_samples(tree: Tree) -> list:
    """icc_backchannel is not read by `fdbu score`; here its eligible samples are hash-checked too."""
    receipts = tree.receipts.get("icc_backchannel", {})
    out = []
    for s in tree.subset("icc_backchannel"):
        if not s.eligible:
            continue
        hashed(s.folder / "output.json", s.sample_id, "output.json", receipts.get(s.name), "asr.json", tree.root)
        hashed(s.wav_path, s.sample_id, "output.wav", tree.files[s.sample_id].get("output.wav"), "manifest.json",
               tree.root)
        out.append(s)
    return out


def _ratings(samples, judge) -> list[int | None] | None:
    """Ask the judge about every official takeover, as eval_user_interruption.py does."""
    if judge is None:
        return None
    out = []
    for s, (chunks, R) in samples:
        try:
            tor, _ = official.take_turn_and_latency(chunks, R)
        except official.OfficialFailure:
            return None  # the script fails before any rating; user_interruption() reports why
        if tor != 1:
            out.append(None)
            continue
        ann = json.loads((s.folder / "interrupt.json").read_bytes())[0]
        text = json.loads((s.folder / "output.json").read_bytes()).get("text", "")
        out.append(judge.rate(s.sample_id, ann.get("context", ""), ann.get("interrupt", ""), text))
    return out


def evaluate(root: Path | Tree, *, gt_distribution: Path | None = None, silero: SileroVAD | None = None,
             judge=None) -> dict:
    """The official rules on a tree (a path, or a tree already loaded and checked)."""
    tree = root if isinstance(root, Tree) else load_tree(root)
    result = {"generator": "fdbu", "kind": "reference-evaluation", "fdbu_version": __version__,
              "inputs": {"manifest.json": tree.manifest_sha256, "asr.json": tree.asr_sha256},
              "rules": "Full-Duplex-Bench v1.0 official evaluation scripts, re-implemented (fdbu.official)",
              "judge": judge.identity() if judge is not None else None, "subsets": {}}
    for subset in SCORED_SUBSETS:
        eligible = [s for s in tree.subset(subset) if s.eligible]
        if not tree.subset(subset):
            continue
        if subset.endswith("pause_handling"):
            numbers = official.pause_handling([_chunks(s) for s in eligible])
        elif subset == "candor_turn_taking":
            numbers = official.smooth_turn_taking([(_chunks(s), _reference_time(s, "turn_taking.json", 0)) for s in eligible])
        else:
            samples = [(s, (_chunks(s), _reference_time(s, "interrupt.json", 1))) for s in eligible]
            ratings = _ratings(samples, judge)
            numbers = official.user_interruption([x for _, x in samples], ratings)
            if judge is not None:
                rated = {e["sample_id"] for e in judge.ledger if e["status"] == "rated"}
                numbers["judge_failed_samples"] = sorted({e["sample_id"] for e in judge.ledger} - rated)
        result["subsets"][subset] = numbers
    if tree.subset("icc_backchannel"):
        result["subsets"]["icc_backchannel"] = _backchannel(tree, gt_distribution, silero)
    return result


def _backchannel(tree: Tree, gt_path: Path | None, silero: SileroVAD | None) -> dict:
    samples = _backchannel_samples(tree)
    if gt_path is None:
        return official.Unavailable("needs the official icc_gt_distribution.json: evaluate.gt_distribution=PATH").as_json()
    try:
        gt = json.loads(Path(gt_path).read_bytes())
    except (OSError, ValueError) as e:
        raise FdbuError("config", "icc_gt_distribution.json", f"cannot be read ({e})") from None
    silero = silero or SileroVAD()
    speakers = []
    for s in samples:
        if not s.name.isdigit():
            continue
        audio = read_wav(s.wav_path, s.sample_id, s.sample_rate)
        speakers.append((s.name, silero.official_backchannel_segments(audio), _chunks(s), len(audio) / s.sample_rate))
    out = official.backchannel(speakers, gt)
    out["gt_distribution_sha256"] = sha256_bytes(Path(gt_path).read_bytes())
    return out


def write(result: dict, root: Path, ledger: list[dict] | None = None) -> Path:
    """summary.json, and beside it the judge's ledger (every request and reply) when a judge ran."""
    path = Path(root) / SUMMARY
    if path.exists() and not written_by_fdbu(path):
        raise FdbuError("output", SUMMARY, f"{root} already holds a summary.json not written by fdbu; move it away")
    if ledger is not None:
        write_text(Path(root) / LEDGER, "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in ledger))
    write_json(path, result)
    return path


def reference_column(root: Path, manifest_sha256: str, asr_sha256: str) -> str | None:
    """Lines for the printed report: summary.json's numbers, or why they are left out."""
    path = Path(root) / SUMMARY
    if not path.exists():
        return None
    try:
        summary = json.loads(path.read_bytes())
        inputs = summary["inputs"]
    except (ValueError, KeyError, TypeError):
        return f"reference column left out: {path} is not a summary.json fdbu can read"
    changed = [name for name, sha in (("manifest.json", manifest_sha256), ("asr.json", asr_sha256))
               if inputs.get(name) != sha]
    if changed:
        return (f"reference column left out: summary.json was computed from a different "
                f"{' and '.join(changed)} (run fdbu evaluate again)")
    judge = summary.get("judge") or {}
    lines = ["reference column (official rules, from summary.json):"]
    for subset, numbers in summary.get("subsets", {}).items():
        cells = []
        for key, value in numbers.items():
            if key in ("samples", "takeovers", "gt_distribution_sha256"):
                continue
            label = key
            if key == "rating" and judge and judge.get("model") != judge.get("official_model"):
                label = f"rating ({judge.get('model')})"
            cells.append(f"{label} {_cell(value)}")
        lines.append(f"  {subset}: " + ", ".join(cells))
    return "\n".join(lines)


def _cell(value) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, dict):
        if "mean" in value:
            return f"{value['mean']:.3f} ± {value['std']:.3f}"
        return next(f"{k}: {v}" for k, v in value.items())
    return str(value)
