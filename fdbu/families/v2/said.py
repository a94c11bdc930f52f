"""What `fdbu export`'s console says of a v2 tree it wrote (its `Layout.said`), from each session.json."""
from __future__ import annotations

import json
from pathlib import Path

from ...common.audio import SAMPLE_RATE as SR
from .runs import CHANNEL_TOLERANCE_MS, COMBINED


def export_said(tree: Path) -> list[str]:
    """What export changed or left out, from each session.json, said rather than left to be found: the system tracks
    fitted to the examiner's length (`length_fit`), the adopted transcripts' words dropped after T (`dropped_words`),
    and, with export.judge, the sessions the judge has no answer for (judged: false: not in the judge's columns)."""
    rows = json.loads((Path(tree) / "manifest.json").read_text())["samples"]
    sessions = {r["sample_id"]: json.loads((Path(tree) / r["sample_id"] / "session.json").read_text()) for r in rows}

    def listed(items: list[str]) -> str:
        return ", ".join(items[:5]) + (", ..." if len(items) > 5 else "")

    lines = []
    fitted = [f"{sid} {s['length_fit']['action']} {s['length_fit']['samples'] / (SR / 1000):.1f} ms"
              for sid, s in sessions.items() if s.get("length_fit")]
    if fitted:
        lines.append(f"{len(fitted)} B.wav fitted to A.wav's length (at most {CHANNEL_TOLERANCE_MS} ms; session.json "
                     f"length_fit): {listed(fitted)}")
    dropped = [(sid, c, n) for sid, s in sessions.items() for c, n in s.get("dropped_words", {}).items()]
    if dropped:
        lines.append(f"{sum(n for _, _, n in dropped)} adopted transcript word(s) starting after T dropped (audio after "
                     f"T is not scored; session.json dropped_words): {listed([f'{sid} {c} {n}' for sid, c, n in dropped])}")
    own = [sid for sid, s in sessions.items() if s.get("own_transcripts_json")]
    if own:
        lines.append(f"{len(own)} session(s)' own {COMBINED} differ from what asr_batch.py's combine_transcripts makes "
                     f"of their A.json and B.json (--max_time 120, run_evaluation.sh's); the tree's is made from A.json "
                     f"and B.json, which the judge reads (session.json own_transcripts_json): {listed(own)}")
    missing = [sid for sid, s in sessions.items() if s.get("judged") is False]
    if missing:
        lines.append(f"{len(missing)} of {len(sessions)} sessions have no judge answer in export.judge (not in the "
                     f"judge's columns; session.json judged=false): {listed(missing)}")
    return lines
