"""Full-Duplex-Bench v1.5's behaviour judge (`eval_behavior.py`), re-implemented around any OpenAI-compatible judge:
the request it sends for a sample, how it reads the reply, and the tag shares it prints.

Each function quotes the lines of the pinned script it reproduces. The prompt is not copied into fdbu: the
system message is `instruction/behavior.txt` and the user message's template, model and seed are read from the
user's checkout (`fdbu.official.judge.load_behaviour`), pinned by SHA-256. Nothing here feeds the unified metrics.
"""
from __future__ import annotations

import json
from collections import Counter
from typing import Any

from . import BEHAVIOR_PROMPT, BEHAVIOR_SCRIPT  # noqa: F401  (re-exported)

FILES = ("clean_input.json", "input.json", "clean_output.json", "output.json")  # eval_behavior.py:128-131
FIELDS = {"input_clean_text": "clean_input.json", "input_noisy_text": "input.json",  # eval_behavior.py:159-162
          "output_clean_text": "clean_output.json", "output_noisy_text": "output.json"}


def compact(doc: Any) -> str:
    """eval_behavior.py:10-20 (`json_dict_to_compact_text`)."""
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False)


def extract(text: str, key: str = "behaviour") -> dict:
    """eval_behavior.py:23-36 (`extract_json`): the first JSON object in the reply holding `key`, scanning from each
    '{'; ValueError when there is none (the script then asks again with the next seed)."""
    decoder = json.JSONDecoder()
    pos = text.find("{")
    while pos != -1:
        try:
            obj, end = decoder.raw_decode(text, pos)
            if key in obj:
                return obj
            pos = text.find("{", end)
        except json.JSONDecodeError:
            pos = text.find("{", pos + 1)
    raise ValueError(f"No JSON object with key '{key}' found.")


def overlap(words_a: list, words_b: list) -> int:
    """eval_behavior.py:192-199 (`check_overlap`), computed (and ignored by the judge) before each request: it is
    kept because it raises where the script raises (a word with a null end: TypeError)."""
    for a in words_a:
        start_a, end_a = a["timestamp"]
        for b in words_b:
            start_b, end_b = b["timestamp"]
            if max(start_a, start_b) < min(end_a, end_b):
                return 1
    return 0


def shares(records: list[dict]) -> dict:
    """eval_behavior.py:85-98 (`stats_by_axis`) and 185-187: per tag, its count over all tags, and the printed
    dict (`round(v, 2)`, sorted by tag); a tag not starting with C raises KeyError, as the script does."""
    axes: dict[str, Counter] = {"C": Counter()}
    for rec in records:
        for tag in rec.get("behaviour", []):
            axes[tag[0]][tag] += 1
    total = sum(axes["C"].values())
    exact = {tag: count / total for tag, count in axes["C"].items()}
    return {"counts": dict(sorted(axes["C"].items())), "shares": dict(sorted(exact.items())),
            "printed": {tag: round(v, 2) for tag, v in sorted(exact.items())}}
