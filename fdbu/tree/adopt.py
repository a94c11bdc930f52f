"""`export.transcripts=adopt`: the official asr.py's output.json files as the tree's transcripts.

The official `get_transcript/asr.py` writes, beside each `output.wav`, `{"text", "chunks":
[{"text", "timestamp": [start, end]}]}` from `nvidia/parakeet-tdt-0.6b-v2`; with `--task
user_interruption` it cuts the audio at `int(R * sr)` and adds R to every word time, so no word
starts before R. Adopting checks that shape and those times and copies the file unchanged (less the words
that start after T where export cropped output.wav at T: Definition 44); asr.json
then says the transcripts were adopted, which model made them (declared, not verified) and the hashes
of the files they came from, and never that fdbu ran an ASR model. A file that fails a check stops the
export (one line naming the sample and the problem): a transcript the official pipeline cannot have
written means its run went wrong, and dropping the sample would hide that.
"""
from __future__ import annotations

import json
from typing import Callable, cast

from .. import tasks
from ..errors import FdbuError
from ..config.settings import PARAKEET
from .readers import check_word_times, parse_json, seconds_text

OFFICIAL_MODEL = PARAKEET  # the official asr.py's model
MADE_BY = "the official Full-Duplex-Bench get_transcript/asr.py, not fdbu"


def check(data: bytes, sid: str, T_us: int, annotation: bytes | None,
          observed_us: int | None = None, file: str = "output.json") -> tuple[bytes, int]:
    """Refuse an output.json the official asr.py could not have written for this sample; returns the tree's
    transcript and how many words it dropped. Word starts must lie in [0, T], or, for an output.wav the
    export cropped at T (`observed_us`: its length before), in [0, that length]; then the words starting
    after T are dropped (Definition 44: audio after T is not observed) and the rest written as asr.py
    does (`indent=4`, `text` the kept words' texts joined by spaces). Otherwise the bytes are unchanged.
    `file`: v1.5's other transcripts (clean_output.json, input.json, clean_input.json) are checked the same way."""
    doc = parse_json(data, sid, file)
    if not isinstance(doc, dict) or not isinstance(doc.get("text"), str) or not isinstance(doc.get("chunks"), list):
        raise FdbuError(sid, file, "is not the official asr.py's shape: an object with 'text' (a string) and "
                        "'chunks' (a list)")
    for i, chunk in enumerate(doc["chunks"]):
        if not isinstance(chunk, dict) or not isinstance(chunk.get("text"), str):
            raise FdbuError(sid, file, f"word {i} is not an object with 'text' (a string) and 'timestamp'")
    window = max(T_us, observed_us) if observed_us is not None else T_us
    try:
        starts, ends = check_word_times(doc["chunks"], sid, file, window)
    except FdbuError as e:  # a transcript not of this audio: say how to go on, keeping every other sample
        raise FdbuError(sid, file, f"{e.problem}; transcribe this audio again (export without export.transcripts=adopt, "
                        "then fdbu asr) or leave the sample out (export.only lists the samples to export)") from None
    task = tasks.subset(sid.split("/")[0]).task
    if task.asr_cut is not None and file == "output.json":  # asr.py --task user_interruption: cut at R, R added back
        cut = cast(Callable, task.read)(annotation, sid, T_us)[task.reference]  # a task with an ASR cut reads one
        early = [i for i, s in enumerate(starts) if s < cut]
        if early:
            raise FdbuError(sid, file, f"word {early[0]} starts at {seconds_text(starts[early[0]])} s, before R = "
                            f"{seconds_text(cut)} s: not the official asr.py --task user_interruption's output "
                            "(it cuts the audio at R and adds R back)")
    kept = [c for c, s in zip(doc["chunks"], starts) if s <= T_us]
    dropped = len(doc["chunks"]) - len(kept)
    if not dropped:
        return data, 0
    return json.dumps({"text": " ".join(c["text"] for c in kept), "chunks": kept}, indent=4).encode(), dropped


def receipt(model: str, transcripts: dict[str, dict[str, str]], sources: dict[str, dict[str, dict]],
            others: dict[str, dict[str, dict[str, str]]] | None = None, made_by: str = MADE_BY) -> dict:
    """asr.json of an adopted tree: transcripts by subset (their SHA-256, as fdbu asr records them), and
    the SHA-256 of the output.wav and output.json each was adopted from; v1.5's other transcripts (subset ->
    X.json -> id -> SHA-256) as `other_transcripts`; `made_by`, the official script that wrote them (a family with a
    layout of its own has its own: v2's eval/asr_batch.py)."""
    others = others or {}
    return {"config": {"source": "adopted", "model_id": model, "made_by": made_by, "checkpoint_sha256": None},
            "subsets": {s: {"task": tasks.subset(s).task.asr_task, "transcripts": t, "adopted_from": sources[s],
                            **({"other_transcripts": others[s]} if s in others else {})}
                        for s, t in transcripts.items()}}
