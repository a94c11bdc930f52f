"""The report's drill-downs: one sample of one system as everything its page draws (waveform peaks, words,
speech segments, the annotation's marks, the outcome and the rule that decided it, the task's other runs), from
the tree's files, each read only after its SHA-256 is checked against the lists unified.json was computed from."""
from __future__ import annotations

import io
import os
from pathlib import Path

import numpy as np

from ..common import faults
from .. import tasks
from ..common.audio import pcm16_frames
from ..errors import FdbuError
from ..tree.readers import parse_json

PEAKS = 400  # waveform bins per drill-down: enough for a 1000 px wide plot, 400 bytes per sample


def rule(row: dict, words: list) -> tuple[str, str]:
    """(outcome, the rule that decided it in plain words), restated by the row's task (its metric module's
    `explain`) from the row's own fields and words."""
    if not row["eligible"]:
        return "ineligible", "ineligible: " + "; ".join(row.get("reasons") or ["see manifest.json"])
    return tasks.task(row["task"]).metric_module.explain(row, words)


class TreeFiles:
    """A scored tree's sample files as the report may read them: only those its manifest.json (annotations, audio)
    or asr.json (transcripts) list, each after its SHA-256 is checked and only inside the tree (`tree.hashed`),
    and both lists the very ones its unified.json was computed from. A file edited after scoring, or replaced by
    a link out of the tree, is refused in one line, not shown."""

    def __init__(self, system):
        from ..tree.load import hashed, read_manifest

        self.root, inputs = Path(system.root), system.unified["inputs"]
        manifest = read_manifest(self.root)
        if manifest.sha256 != inputs["manifest.json"]:
            raise FdbuError(str(self.root), "manifest.json", "changed after the tree was scored; run fdbu score again")
        self.files = manifest.files
        asr = parse_json(hashed(self.root / "asr.json", str(self.root), "asr.json", inputs["asr.json"], "unified.json",
                                self.root), str(self.root), "asr.json")
        subsets = asr.get("subsets") if isinstance(asr, dict) else None
        self.receipts = {k: v["transcripts"] for k, v in (subsets or {}).items()
                         if isinstance(v, dict) and isinstance(v.get("transcripts"), dict)}
        self.others = {k: v["other_transcripts"] for k, v in (subsets or {}).items()  # v1.5: the clean run's, ...
                       if isinstance(v, dict) and isinstance(v.get("other_transcripts"), dict)}

    def read(self, sid: str, file: str) -> bytes | None:
        """The file's checked bytes; None where neither list names it (it is then not read at all)."""
        from ..tree.load import hashed

        subset, name = sid.split("/")
        if file == "output.json":
            expected, listed_in = self.receipts.get(subset, {}).get(name), "asr.json"
        elif file.endswith(".json") and file in self.others.get(subset, {}):
            listed = self.others[subset][file]
            expected, listed_in = listed.get(name) if isinstance(listed, dict) else None, "asr.json"
        else:
            expected, listed_in = self.files.get(sid, {}).get(file), "manifest.json"
        if expected is None:
            return None
        return hashed(self.root / sid / file, sid, file, expected, listed_in, self.root)


def _words(files: TreeFiles, sid: str, where: str, file: str = "output.json") -> list:
    """[start, end, text] of the transcript's words (an end of null: a zero-length word)."""
    raw = files.read(sid, file)
    if raw is None:
        return []
    data = parse_json(raw, where, file)
    out = []
    try:
        for c in data.get("chunks", []) if isinstance(data, dict) else []:
            a, b = c["timestamp"]
            out.append([round(float(a), 3), round(float(a if b is None else b), 3), str(c.get("text", ""))])
    except (KeyError, TypeError, ValueError):
        raise FdbuError(where, file, "has a chunk without a [start, end] timestamp") from None
    return out


def peaks(data: bytes | Path | None, bins: int = PEAKS, where: str = "", file: str = "output.wav") -> list[int] | None:
    """The largest |sample| per bin, 0-99 (of full scale): a waveform small enough to inline. A 16-bit PCM WAV (what
    every tree holds) is read from its bytes with the standard library's `wave` and binned as integers, 14x faster
    than decoding it to floats (the report draws every sample; issue 58, item 3) and the same numbers: the largest
    |x| of a bin is the larger of its maximum and minus its minimum, and x / 32768 is exact in float32. Any other
    format is decoded by soundfile."""
    if data is None:
        return None
    if isinstance(data, Path):
        where, file, data = str(data.parent), data.name, data.read_bytes()
    x = pcm16_frames(data)
    if x is None:
        x = _decoded(data, where, file)
    if len(x) == 0:
        return []
    starts = np.minimum(np.linspace(0, len(x), bins + 1).astype(np.int64)[:-1], len(x) - 1)
    hi = np.maximum.reduceat(x, starts, axis=0).max(axis=1)
    lo = np.minimum.reduceat(x, starts, axis=0).min(axis=1)
    top = np.maximum(hi.astype(np.float32), -lo.astype(np.float32))
    if x.dtype == np.int16:
        top /= np.float32(32768)
    return [int(v) for v in np.minimum(99, np.round(top * 99))]


def _decoded(data: bytes, where: str, file: str) -> np.ndarray:
    """(frames, channels) float32 of any format libsndfile reads."""
    import soundfile as sf

    try:
        x, _ = sf.read(io.BytesIO(data), dtype="float32", always_2d=True)
    except (RuntimeError, sf.LibsndfileError) as e:
        raise FdbuError(where, file, f"cannot be read as audio: {e}") from None
    return x


def _annotations(row: dict, files: TreeFiles) -> dict:
    """The times the drill-down marks, from the row's task (its metric module's `marks`), reading only checked
    files of the sample."""
    return tasks.task(row["task"]).metric_module.marks(row, lambda name: files.read(row["sample_id"], name))


def drilldown(system, row: dict, base: Path, files: TreeFiles | None = None) -> dict:
    """One sample of one system: everything its drill-down draws, from the tree's checked files (`base`: the report's
    folder resolved, once for all the samples of a report)."""
    files = files if files is not None else TreeFiles(system)
    sid = row["sample_id"]
    folder = system.root / sid
    where = f"{system.name}: {sid}"
    words = _words(files, sid, where) if row["eligible"] else []
    outcome, why = rule(row, words)
    d = {"id": sid, "T": row.get("T_s"), "outcome": outcome, "rule": why, "words": words,
         "segments": row.get("segments"), "marks": _annotations(row, files) if row["eligible"] else {},
         "row": row}
    others = tasks.task(row["task"]).detected[1:]
    for side in ("output", "input"):
        if f"{side}.wav" in others:  # drawn as a run of its own, with its speech and words (v2: the examiner)
            continue
        p = peaks(files.read(sid, f"{side}.wav"), where=sid, file=f"{side}.wav") if row["eligible"] else None
        if p is not None:
            d[side] = {"peaks": p, "src": _link((folder / f"{side}.wav").resolve(), base)}
    if row["eligible"] and others:  # the task's other runs (v1.5: the clean run), on the same timeline
        d["runs"] = [_run(files, sid, where, wav, row, folder, base) for wav in others]
    return d


def _run(files: TreeFiles, sid: str, where: str, wav: str, row: dict, folder: Path, base: Path) -> dict:
    """Another run of the sample (clean_output.wav; v2's input.wav, the examiner): its waveform, speech segments (the
    row's `clean_segments`, `input_segments`) and words, for the drill-down's second set of lanes."""
    stem = wav.removesuffix(".wav")
    # the row's prefix of that run's fields: clean_output -> clean_, input -> input_
    prefix = stem.removesuffix("output") if stem.endswith("output") else f"{stem}_"
    p = peaks(files.read(sid, wav), where=sid, file=wav)
    return {"name": stem.replace("_", " "), "peaks": p, "src": _link((folder / wav).resolve(), base) if p is not None else None,
            "segments": row.get(f"{prefix}segments"), "words": _words(files, sid, where, f"{stem}.json")}


def _relative(path: Path, out: Path) -> str:
    """`path` as a link from the report folder (the site and the trees move together), always starting with
    `./` or `../`: a first segment such as `javascript:void(0)` could otherwise be read as a URL scheme."""
    return _link(Path(path).resolve(), Path(out).resolve())


def _link(path: Path, base: Path) -> str:
    """`_relative` of two resolved paths (a report resolves its folder once, not per file: 35,000 times at 10,000
    captures)."""
    from urllib.parse import quote

    rel = quote(Path(os.path.relpath(path, base)).as_posix())  # #, ?, % are path
    return rel if rel.startswith("../") else "./" + rel


TIMES = ("latency_s", "stop_s", "response_s")  # a row's times the samples across systems can be sorted by


def _index(system, out: Path, bar=None) -> tuple[list, list]:
    """(the inlined index: [sample_id, subset, outcome, {time: seconds}] per sample (TIMES the row has), then
    where the row's task has no single outcome (its metric module's optional `across`; v2's sessions) what the
    across-systems table shows and compares instead; the drill-downs)."""
    index: list = []
    details: list[dict] = []
    files, base = TreeFiles(system), Path(out).resolve()
    for subset, rows in system.rows.items():
        for row in rows:
            d = drilldown(system, row, base, files)
            if bar is not None:
                bar.update()
            faults.point(f"report:sample:{len(details) + 1}")
            entry = [row["sample_id"], subset, d["outcome"],
                     {k: row[k] for k in TIMES if isinstance(row.get(k), (int, float))}]
            across = getattr(tasks.task(row["task"]).metric_module, "across", None)
            if across is not None and row["eligible"]:
                entry.append(across(row))
            index.append(entry)
            details.append(d)
    return index, details
