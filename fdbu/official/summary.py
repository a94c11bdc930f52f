"""summary.json read back and shown: the official rules' numbers (the reference column) as `fdbu evaluate` prints
them, as `fdbu score` prints them beside the unified metrics (only while summary.json was computed from the same
manifest.json and asr.json), and as the report's cells take them. Reading never raises: a stray or broken
summary.json cannot change what score or report does."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SUMMARY = "summary.json"
# what a reader of summary.json checks (all it needs): the inputs it was computed from, which must be the tree's as
# it is now, and an object of official numbers per subset; the docs' schema page lists them
INPUTS = ("manifest.json", "asr.json")


def read_summary(root: Path, manifest_sha256: str, asr_sha256: str) -> tuple[dict | None, str]:
    """(summary.json, "") while it was computed from these inputs, else (None, why it is left out). Never an
    error: a stray or broken summary.json cannot change what `fdbu score` or `fdbu report` does."""
    path = Path(root) / SUMMARY
    if not path.is_file():
        return None, "no summary.json (fdbu evaluate has not run on this tree)"
    try:
        summary = json.loads(path.read_bytes())
        inputs = summary["inputs"]
        changed = [name for name, sha in zip(INPUTS, (manifest_sha256, asr_sha256)) if inputs.get(name) != sha]
        if changed:
            return None, (f"summary.json was computed from a different {' and '.join(changed)} (run fdbu evaluate "
                          "again)")
        if not isinstance(summary.get("subsets"), dict) or not all(isinstance(v, dict)
                                                                      for v in summary["subsets"].values()):
            raise TypeError("subsets")
        return summary, ""
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return None, f"{path} is not a summary.json fdbu can read"


def reference_column(root: Path, manifest_sha256: str, asr_sha256: str) -> str | None:
    """Lines for the printed report: summary.json's numbers, or why they are left out."""
    if not (Path(root) / SUMMARY).is_file():
        return None
    summary, why = read_summary(root, manifest_sha256, asr_sha256)
    if summary is None:
        return f"reference column left out: {why}"
    try:
        return "\n".join(["reference column (official rules, from summary.json):", *_lines(summary)])
    except (KeyError, TypeError, AttributeError, StopIteration, ValueError):
        return f"reference column left out: {Path(root) / SUMMARY} is not a summary.json fdbu can read"


def official_numbers(summary: dict) -> dict[str, list[tuple[str, Any]]]:
    """Per subset of summary.json, its official numbers as (label, value) in the printed order: a float, a
    {"mean", "std"} (backchannel's), or a state's text where the script gives no number (unavailable, waiting,
    pending: `_cell`). v1.5's scripts print lists per sample, no aggregate: their counts and behaviour tags."""
    judge = summary.get("judge") or {}
    out: dict[str, list[tuple[str, Any]]] = {}
    for subset, numbers in summary.get("subsets", {}).items():
        if set(numbers) & set(STATES):
            out[subset] = [("state", number_text(numbers))]
        elif "mean_of_sessions" in numbers:  # v2: the judge's scores per session; fdbu's mean of them
            out[subset] = [("judged sessions", numbers["judged"]),
                           *((f"{k} (mean of sessions)", v) for k, v in numbers["mean_of_sessions"].items()
                             if v is not None)]
        elif "latency_intervals" in numbers:
            b = numbers.get("behaviour", {})
            out[subset] = [("samples with a stop interval", numbers["with_stop_interval"]),
                           ("samples with a response interval", numbers["with_response_interval"]),
                           *((f"behaviour {tag}", v) for tag, v in b.get("printed", {}).items()),
                           *([("behaviour", number_text(b))] if set(b) & set(STATES) else [])]
        else:
            out[subset] = _numbers(numbers, judge)
    return out


def _numbers(numbers: dict, judge: dict) -> list[tuple[str, Any]]:
    """A v1.0 subset's numbers: the rating labelled with the judge's model where it is not the official one. Each
    value a number, a {"mean", "std"} of numbers or texts, or a state's text; anything else is refused (ValueError),
    so a hand-edited summary.json is said to be unreadable, never shown half."""
    out = []
    for key in (k for k in NUMBERS if k in numbers):
        value = numbers[key]
        if isinstance(value, dict) and "mean" in value:
            if set(value) != {"mean", "std"} or not all(_plain(v) for v in value.values()):
                raise ValueError(f"{key}: a mean and std of numbers")
        elif isinstance(value, dict) and set(value) & set(STATES):
            value = number_text(value)  # a state (unavailable, waiting, pending) in words
        elif not _plain(value):
            raise ValueError(f"{key}: not a number, a mean and std, or a state")
        label = f"rating ({judge.get('model')})" if key == "rating" and judge and \
            judge.get("model") != judge.get("official_model") else key
        out.append((label, value))
    return out


def _plain(value) -> bool:
    return isinstance(value, (int, float, str)) and not isinstance(value, bool)


def table(result: dict) -> str:
    """`fdbu evaluate`'s console table: the official rules' numbers per subset."""
    return "\n".join(["reference column (fdbu's re-implementation of the pinned official scripts):", *_lines(result)])


def _lines(summary: dict) -> list[str]:
    judge = summary.get("judge") or {}
    lines = []
    for subset, numbers in summary.get("subsets", {}).items():
        if "latency_intervals" in numbers:  # v1.5: lists per sample, no aggregate
            odd = {k: len(v["samples"]) for k, v in numbers.get("originals", {}).items()}
            lines.append(f"  {subset}: {numbers['script']} on {numbers['samples']} samples: "
                         f"{numbers['with_stop_interval']} with an overlap (stop) interval, "
                         f"{numbers['with_response_interval']} with a response interval (each sample's lists: "
                         "summary.json)" + (f"; originals not 16 kHz mono, where the script on your folder would "
                                            f"differ: {odd.get('resampled', 0)} resampled, {odd.get('not_mono', 0)} "
                                            "with several channels (summary.json originals)" if odd else ""))
            b = numbers.get("behaviour", {})
            shown = ", ".join(f"{tag} {v:.2f}" for tag, v in b["printed"].items()) if "printed" in b else \
                number_text(b) if set(b) & set(STATES) else "none"
            judged = f" over {b['judged']} judged samples" if "judged" in b else ""
            skipped = f", {len(b['skipped'])} skipped (a transcript missing)" if b.get("skipped") else ""
            lines.append(f"  {subset}: behaviour tags (eval_behavior.py){judged}{skipped}: {shown}")
            continue
        if set(numbers) & set(STATES):
            lines.append(f"  {subset}: {number_text(numbers)}")
            continue
        if "mean_of_sessions" in numbers:  # v2: score.py's rows per session (and score_time.py's by 15 s)
            shown = ", ".join(f"{k} {number_text(v)}" for k, v in numbers["mean_of_sessions"].items() if v is not None)
            unjudged = f", {len(numbers['not_judged'])} not judged" if numbers["not_judged"] else ""
            run = numbers.get("judge_run")  # the judge ran in this evaluate: which one, and the sessions it failed
            now = f" ({run['model']}, run now)" if run else ""
            lines.append(f"  {subset}: the judge{now} over {numbers['judged']} sessions{unjudged} (score.py's row per "
                         f"session, score_time.py's per 15 s: summary.json); mean of the sessions: {shown or 'none'}")
            for name, why in (run or {}).get("failed", {}).items():
                lines.append(f"    {name}: not judged: {why}")
            continue
        lines.append(f"  {subset}: " + ", ".join(f"{label} {number_text(v)}" for label, v in _numbers(numbers, judge)))
    return lines


NUMBERS = ("take_turn_rate", "latency_s", "rating", "jsd", "frequency_per_s")
# a number's place held by why there is none: the script raises (unavailable), it would still be
# asking its judge (waiting), or fdbu lacks an input to compute it (pending)
STATES = ("unavailable", "waiting", "pending")


def number_text(value) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, dict):
        if "mean" in value:
            return " ± ".join(v if isinstance(v, str) else f"{v:.3f}" for v in (value["mean"], value["std"]))
        state = next(k for k in STATES if k in value)
        return f"{state}: {value[state]}"
    return str(value)
