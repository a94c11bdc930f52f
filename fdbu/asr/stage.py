"""`fdbu asr`: output.json for every eligible sample and asr.json, the way the official asr.py does (and for a
Full-Duplex-Bench v1.5 sample also clean_output.json, input.json and clean_input.json, whole: the four
transcripts the behaviour judge reads, which upstream's asr.py does not write; asr.json lists them under
`other_transcripts`).

Official rules: every subset is transcribed whole, except synthetic_user_interruption,
whose output.wav is cut at R = interrupt.json[0].timestamp[1] (first kept sample
`int(R * sr)`) and R is added back to every word time. output.json holds `text` (the words
joined by single spaces) and `chunks` ([{"text": word, "timestamp": [start, end]}]).

Transcripts are cached by the audio's SHA-256, the checkpoint's SHA-256 and the cut, so
re-exporting unchanged outputs does not transcribe them again. asr.json is written once,
at the end, atomically; a run that stopped half way is continued with `asr.resume=true`.

A sentinel (`verify`) decodes a few random files of the run both ways, together in one NeMo
call and each alone, before anything is written, and stops the run if any word or time differs.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Callable
from typing import Any, NamedTuple, cast

import numpy as np
from ..common.progress import Bar

from ..common import faults
from .. import tasks
from ..common.atomic import sha256_bytes, write_bytes, write_json
from ..common.audio import SAMPLE_RATE, read_wav, seconds_of
from ..errors import FdbuError
from ..common.outputs import writable_folder
from ..config.settings import ASR_BATCH_SIZE, ASR_MAX_BATCH_SECONDS
from ..scoring.shard import label, listed, missing, refuse_missing, select
from ..tree.load import hashed, read_manifest
from ..vad.detect import auto_verify
from ..common.log import note
from .journal import Journal
from .nemo_model import ONE_FILE

ASR_JSON = "asr.json"


def transcript_bytes(words, offset: float) -> bytes:
    """The official output.json: words joined by single spaces, times shifted by the cut."""
    chunks = [{"text": w.text, "timestamp": [w.start + offset, None if w.end is None else w.end + offset]}
              for w in words]
    return (json.dumps({"text": " ".join(w.text for w in words), "chunks": chunks}, indent=4) + "\n").encode()


@dataclass
class AsrInput:
    """One audio file for the ASR stage: a sample's whole output.wav, or its part from the task's cut; for v1.5,
    also the sample's other files (Task.transcribed: clean_output.wav, input.wav, clean_input.wav), each whole."""

    sample_id: str
    subset: str
    name: str
    folder: Path
    wav_sha256: str
    offset: float  # R for interruption samples, else 0.0
    start: int     # first sample kept: int(R * 16000) where the task cuts, else 0
    samples: int   # samples transcribed (after the cut), from the manifest
    key: str = ""
    file: str = "output.wav"  # the audio file; its transcript is the .json of the same name

    @property
    def id(self) -> str:
        """The job's name in the journal and the sentinel: the sample id for output.wav, else id:file."""
        return self.sample_id if self.file == "output.wav" else f"{self.sample_id}:{self.file}"

    @property
    def transcript(self) -> str:
        return self.file.replace(".wav", ".json")

    def audio(self) -> np.ndarray:
        return read_wav(self.folder / self.file, self.sample_id)[self.start:]


class TranscriptCache:
    """Transcripts by key (audio SHA-256, checkpoint SHA-256, cut); each entry records the shard that
    made it, if a sharded run did (`by`, counted in `shards` when read)."""

    def __init__(self, root: Path | None, by: str | None = None):
        self.root = Path(root) if root else None
        self.by = by
        self.shards: dict[str, int] = {}
        self.ways: set = set()  # (decoding, nemo_batch_size) of the entries read, as their makers recorded
        if self.root is not None:
            writable_folder(self.root, "cache_dir")

    def _path(self, key: str) -> Path:
        return cast(Path, self.root) / key[:2] / f"{key}.json"  # get and put call it only with a root

    def get(self, key: str) -> bytes | None:
        if self.root is None:
            return None
        try:
            entry = json.loads(self._path(key).read_bytes())
            data = entry["transcript"].encode()
            if entry.get("key") == key and entry.get("sha256") == sha256_bytes(data):
                if isinstance(entry.get("by"), str):
                    self.shards[entry["by"]] = self.shards.get(entry["by"], 0) + 1
                if isinstance(entry.get("how"), list) and len(entry["how"]) == 2:
                    self.ways.add(tuple(entry["how"]))
                return data
        except (OSError, ValueError, KeyError, AttributeError, TypeError, RecursionError):
            pass
        return None

    def put(self, key: str, data: bytes, how: tuple | None = None) -> None:
        if self.root is None:
            return
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_bytes(path, json.dumps({"key": key, "sha256": sha256_bytes(data), "by": self.by,
                                          "how": list(how) if how else None, "transcript": data.decode()}).encode())
        except OSError:  # a folder in the entry's place: the transcript is only not cached
            pass


def _jobs(root: Path) -> list[AsrInput]:
    m = read_manifest(root)
    jobs = []
    for s in m.samples:
        if not s.eligible:
            continue
        files = m.files[s.sample_id]
        hashed(s.wav_path, s.sample_id, "output.wav", files.get("output.wav"), "manifest.json", root)
        offset, start, task = 0.0, 0, s.kind
        if task.asr_cut is not None:  # the official asr.py cuts at R and adds R back to every word time
            annotation = cast(str, task.annotation)  # a task that cuts has an annotation
            ann = hashed(s.folder / annotation, s.sample_id, annotation, files.get(annotation),
                         "manifest.json", root)
            offset = task.asr_cut(ann, s.sample_id, s.T_us)
            start = int(offset * SAMPLE_RATE)
        jobs.append(AsrInput(s.sample_id, s.subset, s.name, s.folder, files["output.wav"], offset, start,
                             max(0, s.input_samples - start)))
        for file in task.transcribed:  # v1.5: the clean run and the inputs too, whole (no cut point in v1.5)
            if file == "output.wav":
                continue
            hashed(s.folder / file, s.sample_id, file, files.get(file), "manifest.json", root)
            jobs.append(AsrInput(s.sample_id, s.subset, s.name, s.folder, files[file], 0.0, 0, s.samples_of(file),
                                 file=file))
    return jobs


class Batching(NamedTuple):
    """How a run hands files to NeMo: at most `size` files and `max_seconds` of audio a call, and how many files
    the sentinel decodes both ways (`verify`: a number, or "auto")."""
    size: int
    max_seconds: float
    verify: Any = "auto"


def _batches(jobs: list[AsrInput], batch_size: int, max_seconds: float) -> list[list[AsrInput]]:
    """Sorted by duration; at most batch_size files and max_seconds of audio each (at least one file)."""
    ordered = sorted(jobs, key=lambda j: (j.samples, j.id))
    out: list[list[AsrInput]] = []
    current: list[AsrInput] = []
    total = 0.0
    for j in ordered:
        secs = seconds_of(j.samples)
        if current and (len(current) >= batch_size or total + secs > max_seconds):
            out.append(current)
            current, total = [], 0.0
        current.append(j)
        total += secs
    return out + ([current] if current else [])


def cache_key(job: "AsrInput", checkpoint_sha256: str, device: str) -> str:
    """What a transcript depends on: the audio, the checkpoint, where the audio is cut, and the kind of
    device (a GPU decodes in batches and in other float orders than a CPU, so near-ties can fall the
    other way): a cache shared by CPU and GPU nodes never hands one's transcripts to the other."""
    kind = str(device).split(":")[0]
    return sha256_bytes(f"{job.wav_sha256}|{checkpoint_sha256}|cut={job.offset!r}|device={kind}".encode())


def decoding_note(counts: dict) -> str:
    """'; NeMo: ..., N files per call; sentinel: ...' for the console, when the run decoded something."""
    if not counts.get("decoding"):
        return ""
    checked = "" if not counts.get("verified") else (
        f"; {counts['verified']} files decoded both ways, same words and times" if counts["decoding"] != ONE_FILE else
        f"; {counts['verified']} files decoded both ways differed, so every file one per call")
    return f"; NeMo: {counts['decoding']}, up to {counts['nemo_batch_size']} files per call{checked}"


def by_shards(counts: dict) -> str:
    """' (made by shards 0/4, 1/4, ...)' for the console, when the cache entries came from a sharded run,
    and which shard is missing when this run transcribed files a shard should have."""
    shards = counts.get("shards") or {}
    note = missing(shards, counts.get("transcribed", 0), "transcribed here")
    return (f" (made by shards {listed(shards)})" if shards else "") + (f"; {note}" if note else "")


def run_shard(roots: list[Path], model_factory, cache_dir: Path, shard: int, shards: int, *, batch_size: int = ASR_BATCH_SIZE,
              max_batch_seconds: float = ASR_MAX_BATCH_SECONDS, verify="auto", progress: bool = False) -> str:
    """A sharded run: this shard's transcripts of every tree, into the cache only (nothing in the trees).
    The model's weights are loaded only if something is missing from the cache. Returns the shard's report."""
    cache = TranscriptCache(cache_dir, by=label(shard, shards))
    pool = [j for root in roots for j in _jobs(root)]
    model = model_factory()
    for j in pool:
        j.key = cache_key(j, model.checkpoint_sha256, model.device)
    mine = select(pool, shard, shards, key=lambda j: j.key, weight=lambda j: j.samples)
    todo = [j for j in mine if cache.get(j.key) is None]
    bar = Bar(total=len(todo), unit="file", desc=f"asr shard {shard}/{shards}", disable=not progress or not todo)
    ways = {"decoding": model.decoding, "nemo_batch_size": model.files_per_call(batch_size)} if todo else {}
    with bar:  # closed before a Ctrl-C's message: no bar is drawn again under it
        for batch, decoded in _decoded(todo, model, Batching(batch_size, max_batch_seconds, verify), ways):
            for j, words in zip(batch, decoded):
                cache.put(j.key, transcript_bytes(words, j.offset), (ways["decoding"], ways["nemo_batch_size"]))
            bar.update(len(batch))
    return (f"shard {shard}/{shards}: {len(mine)} files, {seconds_of(sum(j.samples for j in mine)):.0f} s of audio: "
            f"{len(todo)} transcribed, {len(mine) - len(todo)} already cached")


def _completed(root: Path, jobs: list[AsrInput], killed: dict[str, tuple[str, str]], model) -> bool:
    """Whether the stopped run whose journal is `killed` left the tree complete for what this run asks: the journal
    holds every job under this run's key (the same audio, checkpoint, cut and kind of device), asr.json lists every
    transcript with the SHA-256 the journal recorded, each output.json holds those bytes, and each combined file
    (v2's transcripts.json) is there as asr.json lists it."""
    try:
        receipt = json.loads((root / ASR_JSON).read_bytes())
        listed_ = {(subset, name, "output.json"): sha for subset, e in receipt["subsets"].items()
                   for name, sha in e["transcripts"].items()}
        listed_.update({(subset, name, file): sha for subset, e in receipt["subsets"].items()
                        for file, by in e.get("other_transcripts", {}).items() for name, sha in by.items()})
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return False
    for j in jobs:
        key, sha = killed.get(j.id, (None, None))
        if sha is None or key != cache_key(j, model.checkpoint_sha256, model.device) or \
                listed_.get((j.subset, j.name, j.transcript)) != sha:
            return False
        if not _holds(j.folder / j.transcript, sha):
            return False
    return len(listed_) == len(jobs) and _combined_listed(receipt, jobs)


def _holds(path: Path, sha: str) -> bool:
    """Whether the file at `path` is there, readable, with the SHA-256 `sha`."""
    try:
        return sha256_bytes(path.read_bytes()) == sha
    except OSError:
        return False


def _combined_listed(receipt: dict, jobs: list[AsrInput]) -> bool:
    """Whether asr.json lists each sample's combined file (`Task.combined`: v2's transcripts.json) with the bytes
    in its folder: a run stopped while writing them left asr.json without them, or an older asr.json."""
    for subset, entry in tasks.SUBSETS.items():
        mine = {j.name: j.folder for j in jobs if j.subset == subset}
        if not mine or entry.task.combined is None:
            continue
        name = entry.task.combined[0]
        try:
            listed = receipt["subsets"][subset]["combined"][name]
        except (KeyError, TypeError):
            return False
        if not isinstance(listed, dict) or set(listed) != set(mine):
            return False
        if not all(_holds(folder / name, listed[sample]) for sample, folder in mine.items()):
            return False
    return True


def run(root: Path, model_factory, *, batch_size: int = ASR_BATCH_SIZE,
        max_batch_seconds: float = ASR_MAX_BATCH_SECONDS, resume: bool = False, cache_dir: Path | None = None,
        verify="auto", progress: bool = False, require_shards: bool = False) -> tuple[Path, dict]:
    """Transcribe every eligible sample; returns (asr.json path, counts). `model_factory()` gives the model.

    A run that was killed is continued by the next one (its journal says which transcripts are
    its own); one stopped after writing asr.json, whose journal and asr.json cover every transcript under this
    run's keys, is finished (its journal removed, nothing transcribed; counts["completed"] = n); transcripts from anywhere else are refused unless `resume`, which keeps those equal
    to their cached transcript."""
    root = Path(root)
    if batch_size < 1 or max_batch_seconds <= 0:
        raise FdbuError("config", None, "asr.batch_size must be >= 1 and asr.max_batch_seconds > 0")
    jobs = _jobs(root)
    journal = Journal(root)
    killed = journal.left_by_a_killed_run()
    made = []
    if killed and (root / ASR_JSON).exists():  # stopped after asr.json, before its journal was removed?
        writable_folder(root, "asr: the journal of a stopped run is removed from")
        made.append(model_factory())  # its checkpoint's hash and device (no weights are loaded)
        if _completed(root, jobs, killed, made[0]):
            try:
                journal.remove()
            except OSError as e:
                raise FdbuError("tree", Journal.NAME, f"cannot be removed: {e.strerror or e}") from None
            return root / ASR_JSON, {"transcribed": 0, "from_cache": 0, "kept": len(jobs), "decoding": None,
                                     "nemo_batch_size": None, "completed": len(jobs)}
    if (root / ASR_JSON).exists() and not resume:
        raise FdbuError("tree", ASR_JSON, f"{root} already has asr.json; pass asr.resume=true to continue or redo "
                        "a run (transcripts matching their cached inputs are kept)")
    if not resume:
        stale = [j for j in jobs if (j.folder / j.transcript).exists() and j.id not in killed]
        if stale:
            raise FdbuError(stale[0].sample_id, stale[0].transcript, "exists but the tree has no asr.json: a run was "
                            "interrupted, or the transcript came from elsewhere; pass asr.resume=true to continue")
    for folder in [root] + sorted({j.folder for j in jobs}):  # before the model loads, not mid-run
        writable_folder(folder, "asr: transcripts and asr.json go into")
    model = made[0] if made else model_factory()
    cache = TranscriptCache(cache_dir)
    for j in jobs:
        j.key = cache_key(j, model.checkpoint_sha256, model.device)
    if require_shards:  # before anything is written
        probe = TranscriptCache(cache_dir)
        absent = sum(probe.get(j.key) is None for j in jobs)
        refuse_missing(probe.shards, absent, "asr.require_shards")
    journal.open()
    try:
        batching = Batching(batch_size, max_batch_seconds, verify)
        counts = _transcribe(jobs, model, cache, journal, killed, resume, batching,
                             progress)
    finally:
        journal.release()
    if cache.shards:
        counts["shards"] = dict(cache.shards)
    if counts["decoding"] is None and len(cache.ways) == 1:  # assembled from the cache: as its makers decoded
        counts["decoding"], counts["nemo_batch_size"] = next(iter(cache.ways))
    receipt = {"config": {"source": "fdbu asr", "model_id": model.model_id, "loaded_by": model.loaded_by,
                          "checkpoint_sha256": model.checkpoint_sha256, "device_type": model.device,
                          "batch_size": batch_size, "nemo_batch_size": counts["nemo_batch_size"],
                          "decoding": counts["decoding"],
                          "max_batch_seconds": max_batch_seconds, "nemo_version": model.nemo_version,
                          "torch_version": model.torch_version},
               "subsets": {}}
    try:  # a Ctrl-C while the combined files are written: every transcript is written and journalled
        _receipt_subsets(receipt, jobs, journal)
    except KeyboardInterrupt as e:
        if e.args:
            raise
        raise KeyboardInterrupt(f"nothing half-written was left behind; the transcripts of {len(jobs)} of {len(jobs)} "
                                "files are written and journalled: the same command resumes from them (and writes "
                                "what is made from them, and asr.json)") from None
    write_json(root / ASR_JSON, receipt)
    faults.point("asr:written")  # asr.json in place, the journal not yet removed
    journal.remove()
    return root / ASR_JSON, counts


def _receipt_subsets(receipt: dict, jobs: list["AsrInput"], journal) -> None:
    """asr.json's subsets: each file's transcript hash by subset (and file), and the task's combined files written
    (`_combined`)."""
    for subset, entry in tasks.SUBSETS.items():
        mine = [j for j in jobs if j.subset == subset]
        if mine:
            receipt["subsets"][subset] = {"task": entry.task.asr_task, "transcripts": {
                j.name: journal.written[j.id] for j in mine if j.file == "output.wav"}}
            others = [j for j in mine if j.file != "output.wav"]
            if others:  # v1.5: the other files' transcripts, by file (uncut: v1.5 has no cut point)
                by_file: dict[str, dict[str, str]] = {}
                for j in others:
                    by_file.setdefault(j.transcript, {})[j.name] = journal.written[j.id]
                receipt["subsets"][subset]["other_transcripts"] = by_file
                receipt["subsets"][subset]["cut"] = "none: v1.5 has no cut point; every file is transcribed whole"
            if entry.task.combined is not None:  # v2: transcripts.json, from each session's two transcripts
                receipt["subsets"][subset]["combined"] = _combined(entry.task.combined, mine)


def _decoded(todo: list[AsrInput], model, batching: Batching, counts=None):
    """(batch, its words) for every batch of `todo`, the sentinel's files first (see `_sentinel`). Where the sentinel
    finds NeMo's batches differ from one file per call, every file is decoded one per call (counts' "decoding" and
    "nemo_batch_size" then say so, before the first batch is handed out)."""
    checked, alone = _sentinel(todo, model, batching)
    if counts is not None:
        counts["verified"] = len(checked)
        if alone:
            counts["decoding"], counts["nemo_batch_size"] = ONE_FILE, 1
    if checked:
        yield [j for j in todo if j.id in checked], [checked[j.id] for j in todo if j.id in checked]
    size = 1 if alone else batching.size
    for batch in _batches([j for j in todo if j.id not in checked], size, batching.max_seconds):
        yield batch, model.transcribe([j.audio() for j in batch], size)


def _sentinel(todo: list[AsrInput], model, batching: Batching) -> tuple[dict, bool]:
    """A few random files of those NeMo decodes several per call (`verify`: a number, or auto as for
    speech detection: none under 50 files, then one per 200, 2 to 10; at least 2 when any), decoded
    together (in batches as the run makes them) and each alone, before anything is written. Any word or time that
    differs means NeMo's batches are not its one-file calls on this run (a GPU's batched kernels, NeMo 3.0.0's TDT
    loop): said in one note, and every file is then decoded one per call, as the official asr.py decodes it, rather
    than the run refused. Returns (sample id -> the words kept for the files checked, whether one per call)."""
    per_call = model.files_per_call(batching.size) if len(todo) > 1 else 1
    n = auto_verify(len(todo)) if batching.verify == "auto" else int(batching.verify)
    if per_call < 2 or n < 1:
        return {}, False
    pick = np.random.default_rng(0).choice(len(todo), size=min(max(n, 2), len(todo)), replace=False)
    chosen = [todo[i] for i in sorted(pick.tolist())]
    together = {j.id: words for batch in _batches(chosen, batching.size, batching.max_seconds)
                for j, words in zip(batch, model.transcribe([j.audio() for j in batch], batching.size))}
    alone = {j.id: model.transcribe([j.audio()], 1)[0] for j in chosen}
    differ = [j for j in chosen if alone[j.id] != together[j.id]]
    if not differ:
        return together, False
    j = differ[0]
    note(f"fdbu asr: asr.verify: NeMo decoding {per_call} files per call ({model.decoding}) gave other words or times "
         f"than one file per call on {len(differ)} of {len(chosen)} files checked ({j.sample_id} {j.file}: "
         f"{_first_difference(together[j.id], alone[j.id])}); every file is decoded one per call, as the official "
         "asr.py does (asr.batch_size=1 asks for that from the start)")
    return alone, True


def _first_difference(got: list, want: list) -> str:
    for i, (a, b) in enumerate(zip(got, want)):
        if a != b:
            return f"word {i}: {a.text!r} {a.start}-{a.end} against {b.text!r} {b.start}-{b.end} alone"
    return f"{len(got)} words against {len(want)} alone"


def _write(job: "AsrInput", data: bytes) -> None:
    try:
        write_bytes(job.folder / job.transcript, data)
    except OSError as e:
        raise FdbuError(job.sample_id, job.transcript, f"cannot write it ({e.strerror})") from None


def _combined(combined: tuple[str, Callable], jobs: list[AsrInput]) -> dict[str, dict[str, str]]:
    """The task's combined file (`Task.combined`) written into each sample's folder from the transcripts just
    written there; {its name: {sample name: SHA-256}} for asr.json."""
    name, make = combined
    by_sample: dict[str, list[AsrInput]] = {}
    for j in jobs:
        by_sample.setdefault(j.name, []).append(j)
    written = {}
    for sample, mine in by_sample.items():
        data = make({j.transcript: (j.folder / j.transcript).read_bytes() for j in mine})
        try:
            write_bytes(mine[0].folder / name, data)
        except OSError as e:
            raise FdbuError(mine[0].sample_id, name, f"cannot write it ({e.strerror})") from None
        written[sample] = sha256_bytes(data)
        faults.point(f"asr:combined:{len(written) - 1}")
    return {name: written}


def _transcribe(jobs, model, cache, journal, killed, resume, batching: Batching, progress) -> dict:
    """Keep, copy from the cache or transcribe every job's output.json, each journalled before it is written."""
    counts: dict[str, Any] = {"kept": 0, "from_cache": 0, "transcribed": 0, "verified": 0, "nemo_batch_size": None,
                              "decoding": None}
    bar = None
    try:  # a Ctrl-C anywhere here says what is kept (kept, copied from the cache, transcribed)
        todo = []
        for j in jobs:
            cached = cache.get(j.key)
            existing = j.folder / j.transcript
            current = existing.read_bytes() if existing.is_file() else None
            if current is not None and ((resume and current == cached) or
                                        killed.get(j.id) == (j.key, sha256_bytes(current))):
                journal.record(j, current)
                counts["kept"] += 1
            elif cached is not None:
                journal.record(j, cached)
                _write(j, cached)
                counts["from_cache"] += 1
            else:
                todo.append(j)
        bar = Bar(total=len(todo), unit="file", desc="asr", disable=not progress or not todo)
        seconds = 0.0
        if todo:  # how NeMo was called (None when this run decoded nothing)
            counts["nemo_batch_size"] = model.files_per_call(batching.size)
            counts["decoding"] = model.decoding
        decoded = _decoded(todo, model, batching, counts)
        for k, (batch, words_of_batch) in enumerate(decoded):  # decoded one batch at a time
            for j, words in zip(batch, words_of_batch):
                data = transcript_bytes(words, j.offset)
                journal.record(j, data)
                _write(j, data)
                cache.put(j.key, data, (counts["decoding"], counts["nemo_batch_size"]))
                seconds += seconds_of(j.samples)
                counts["transcribed"] += 1  # per file: a Ctrl-C's count is of the files written
            bar.update(len(batch))
            bar.set_postfix(audio_s=round(seconds))
            faults.point(f"asr:batch:{k}")
    except KeyboardInterrupt as e:
        if bar is not None:
            bar.close()  # before the message: no bar is drawn again under it
        if e.args:
            raise
        raise _kept(counts, len(jobs)) from None
    bar.close()
    return counts


def _kept(counts: dict[str, Any], jobs: int) -> KeyboardInterrupt:
    """What a Ctrl-C during the transcription leaves: the transcripts written and journalled, which the same
    command resumes from, or that none was written yet."""
    done = counts["kept"] + counts["from_cache"] + counts["transcribed"]
    if not done:
        return KeyboardInterrupt("nothing half-written was left behind; no transcript was written yet")
    return KeyboardInterrupt(f"nothing half-written was left behind; the transcripts of {done} of {jobs} files are "
                             f"written ({counts['transcribed']} transcribed in this run) and journalled: the same "
                             "command resumes from them")
