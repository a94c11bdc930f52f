"""Stage 1: read a reference tree into checked samples.

The tree (docs: The reference tree) is manifest.json, asr.json and one folder per sample.
Every check of the spec's "Inputs and checks" section happens here and in `readers.py`, on
integer microseconds, before any metric runs; which files a sample has and how they are read
comes from the task registry (`fdbu.tasks`). A failure stops the run with the sample id, the
file and the problem in one line (`FdbuError`).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, cast

import numpy as np
import soundfile as sf

from .. import tasks
from ..common.atomic import regular, sha256_bytes
from ..common.audio import SAMPLE_RATE
from ..errors import FdbuError, one_line
from .layout import not_a_tree
from .readers import MAX_SECONDS, parse_json, read_words, seconds_text, short
from ..config.settings import SOURCES
from ..common.timebase import window_us

MANIFEST_KIND = "full-duplex-bench-v1.0-reference-audio"
MAX_SAMPLE_RATE = 1_000_000
SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\Z")  # \Z, not $: `$` also matches before a final newline


@dataclass
class Sample:
    index: int
    sample_id: str
    subset: str
    name: str
    task: str
    eligible: bool
    reasons: list[str]
    sample_rate: int = 0
    input_samples: int = 0
    T_us: int = 0
    folder: Path = field(kw_only=True)  # the sample folder (required, by keyword)
    word_start: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    word_end: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    pauses: np.ndarray | None = None  # (k, 2) int64 microseconds
    wav_sha256: str | None = None  # checked against manifest.json (interruption samples)
    E_us: int | None = None
    S_us: int | None = None
    R_us: int | None = None
    event_us: tuple[int, int] | None = None  # v1.5: the overlap event's window in input.wav (metadata.json)
    clean_input_samples: int = 0  # v1.5: the clean run's length (clean_input.wav, clean_output.wav)
    source: dict = field(default_factory=dict)  # what export recorded of the originals (source_sample_rate, _channels)
    other_words: dict = field(default_factory=dict)  # v1.5 scored: X.json -> (word starts, word ends) of another run
    detected_sha256: dict = field(default_factory=dict)  # each file Silero segments (Task.detected) -> its SHA-256
    annotations: dict = field(default_factory=dict)  # what a family's annotation reader keeps of its own (v2: the judge's)

    @property
    def clean_T_us(self) -> int:
        """The clean run's window (v1.5): clean_input.wav's length in microseconds."""
        return window_us(self.clean_input_samples, self.sample_rate)

    @property
    def wav_path(self) -> Path:
        return self.folder / "output.wav"

    @property
    def kind(self) -> tasks.Task:
        return tasks.subset(self.subset).task

    def samples_of(self, file: str) -> int:
        """The length an audio file of the sample must have: input.wav's and what answers it, T; the clean run's
        two files (v1.5), clean_input_samples."""
        return self.input_samples if dict(self.kind.runs).get(file, file) == "input.wav" else self.clean_input_samples


@dataclass
class Tree:
    root: Path
    declared: dict[str, int]
    samples: list[Sample]
    manifest_sha256: str
    asr_sha256: str
    files: dict[str, dict[str, str]] = field(default_factory=dict)  # sample id -> file -> SHA-256 (manifest)
    receipts: dict[str, dict[str, str]] = field(default_factory=dict)  # subset -> id -> SHA-256 (asr.json)
    other_receipts: dict[str, dict[str, dict[str, str]]] = field(default_factory=dict)  # v1.5: subset -> X.json -> id -> SHA
    transcripts: dict = field(default_factory=dict)  # where the transcripts came from (`provenance`)

    def subset(self, name: str) -> list[Sample]:
        return [s for s in self.samples if s.subset == name]


def _escapes(path: Path, root: Path, where: str, file: str) -> bool:
    """Names are plain (checked), so only a link at the subset, sample or file level can leave the tree."""
    if not any(os.path.islink(p) for p in (path, path.parent, path.parent.parent)):
        return False
    try:
        return not path.resolve(strict=True).is_relative_to(root.resolve(strict=True))
    except (OSError, RuntimeError) as e:  # a dangling link, or a loop of links
        raise FdbuError(where, file, f"is a link that leads nowhere ({getattr(e, 'strerror', None) or e})") from None


def _read(path: Path, where: str, file: str, root: Path) -> bytes:
    """A file inside the tree, or a one-line refusal naming it: missing, outside, unreadable."""
    if _escapes(path, root, where, file):
        raise FdbuError(where, file, f"resolves to {path.resolve()}, outside the tree {root}; "
                        "fdbu reads only files inside the tree")
    try:
        regular(path, where, file)
        return path.read_bytes()
    except FileNotFoundError:
        raise FdbuError(where, file, f"is missing ({path})") from None
    except OSError as e:  # permission denied (a shared cluster), a folder, an I/O error
        raise FdbuError(where, file, f"cannot be read: {e.strerror or e} ({path})") from None


def check_wav(path: Path, where: str, sample_rate: int, input_samples: int) -> None:
    """output.wav (or another audio file of the sample, by its name) must be mono PCM at the manifest's rate
    holding exactly T seconds."""
    file = path.name
    try:
        info = sf.info(str(path))
    except Exception as e:  # soundfile raises its own error types for unreadable headers
        raise FdbuError(where, file, f"is not a readable audio file ({e})") from None
    if info.format != "WAV" or not info.subtype.startswith("PCM"):
        raise FdbuError(where, file, f"is {info.format}/{info.subtype}; fdbu needs a PCM WAV file")
    if info.channels != 1:
        raise FdbuError(where, file, f"has {info.channels} channels; fdbu needs mono")
    if info.samplerate != sample_rate:
        raise FdbuError(where, file, f"is at {info.samplerate} Hz, not the manifest's {sample_rate} Hz")
    if info.frames != input_samples:
        raise FdbuError(where, file, f"holds {info.frames} samples ({info.frames / sample_rate:.6f} s), not exactly "
                        f"T = {input_samples} samples ({input_samples / sample_rate:.6f} s)")


def _safe_name(value, where: str, what: str) -> str:
    if not isinstance(value, str) or not SAFE_NAME.match(value) or value in (".", ".."):
        raise FdbuError(where, "manifest.json", f"{what} {value!r} is not a plain name inside the tree "
                        "(letters, digits, '.', '_', '-'; no separators or '..')")
    return value


def _positive_int(value, where: str, what: str, most: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= most:
        shown = value if not isinstance(value, int) or abs(value) < 10**18 else f"an integer of {len(str(value))} digits"
        raise FdbuError(where, "manifest.json", f"{what} is {shown!r}, not a whole number from 1 to {most}")
    return value


def _manifest_row(i: int, row, root: Path) -> tuple[Sample, dict[str, str]]:
    where = f"manifest.json samples[{i}]"
    if not isinstance(row, dict):
        raise FdbuError(where, None, "is not an object")
    sid = row.get("sample_id")
    if not isinstance(sid, str) or sid.count("/") != 1:
        raise FdbuError(where, None, f"sample_id {sid!r} is not '<subset>/<id>'")
    subset, name = sid.split("/")
    _safe_name(name, sid, "sample id")
    if subset not in tasks.SUBSETS:
        raise FdbuError(sid, "manifest.json", f"unknown subset {subset!r}; known: {', '.join(tasks.SUBSETS)}")
    if row.get("subset") != subset:
        raise FdbuError(sid, "manifest.json", f"subset {row.get('subset')!r} does not match the sample id")
    task = tasks.subset(subset).task.name
    if row.get("task") != task:
        raise FdbuError(sid, "manifest.json", f"task {row.get('task')!r} is not {task!r}, the task of {subset}")
    eligible = row.get("eligible")
    if not isinstance(eligible, bool):
        raise FdbuError(sid, "manifest.json", f"eligible is {eligible!r}, not true or false")
    reasons = row.get("reasons", [])
    if not isinstance(reasons, list) or not all(isinstance(r, str) and r for r in reasons):
        raise FdbuError(sid, "manifest.json", "reasons is not a list of non-empty strings")
    if not eligible and not reasons:
        raise FdbuError(sid, "manifest.json", "is ineligible but gives no reason")
    sample = Sample(index=i, sample_id=sid, subset=subset, name=name, task=task, eligible=eligible,
                    reasons=list(dict.fromkeys(reasons)), folder=root / subset / name)
    files = row.get("files", {})
    if not isinstance(files, dict):
        raise FdbuError(sid, "manifest.json", "files is not an object of file name -> SHA-256")
    for fname, digest in files.items():
        _safe_name(fname, sid, "file name")
        if not isinstance(digest, str) or not re.fullmatch(r"[0-9a-f]{64}", digest):
            raise FdbuError(sid, "manifest.json", f"the hash of {fname} is not a SHA-256 hex digest")
    if eligible:
        sample.sample_rate = _positive_int(row.get("sample_rate"), sid, "sample_rate", MAX_SAMPLE_RATE)
        sample.input_samples = _positive_int(row.get("input_samples"), sid, "input_samples",
                                             int(MAX_SECONDS * sample.sample_rate))
        sample.T_us = window_us(sample.input_samples, sample.sample_rate)
        if "clean_input.wav" in sample.kind.audio:  # v1.5: the clean run has its own length
            sample.clean_input_samples = _positive_int(row.get("clean_input_samples"), sid, "clean_input_samples",
                                                       int(MAX_SECONDS * sample.sample_rate))
        sample.source = {k: row[k] for k in ("source_sample_rate", "source_channels") if isinstance(row.get(k), dict)}
    return sample, files


def hashed(path: Path, where: str, file: str, expected: str | None, listed_in: str, root: Path) -> bytes:
    """The file's bytes, after checking they still have the SHA-256 `listed_in` recorded for them."""
    if expected is None:
        raise FdbuError(where, file, f"{listed_in} lists no SHA-256 for it")
    data = _read(path, where, file, root)
    actual = sha256_bytes(data)
    if actual != expected:
        raise FdbuError(where, file, f"SHA-256 {actual} differs from {listed_in} ({expected}); "
                        "the file changed after it was recorded")
    return data


def _load_sample(sample: Sample, files: dict[str, str], transcripts: dict, root: Path, others: dict) -> None:
    """A scored sample's transcripts and annotation (and the audio its task detects speech in: output.wav, and
    for v1.5 the clean run with its transcript, listed in asr.json's `other_transcripts`, `others`)."""
    sid, folder, T, task = sample.sample_id, sample.folder, sample.T_us, sample.kind
    annotation, read = cast(str, task.annotation), cast(Callable, task.read)  # a scored task has both
    ann = hashed(folder / annotation, sid, annotation, files.get(annotation), "manifest.json", root)
    words = hashed(folder / "output.json", sid, "output.json", transcripts.get(sample.name), "asr.json", root)
    sample.word_start, sample.word_end = read_words(words, sid, T)
    for name, value in read(ann, sid, T).items():
        setattr(sample, name, value)
    if task.asr_cut is not None:  # the ASR stage cut the audio here: no word can start before it
        cut = getattr(sample, cast(str, task.reference))  # a task that cuts names its reference
        early = np.flatnonzero(sample.word_start < cut)
        if early.size:
            w = int(early[0])
            raise FdbuError(sid, "output.json", f"word {w} starts at {seconds_text(int(sample.word_start[w]))} s, "
                            f"before R = {seconds_text(cut)} s; interruption transcripts hold only words from R on")
    if task.speech_detection:
        _checked_audio(sample, task.detected, files, root)
        sample.wav_sha256 = files["output.wav"]
        sample.detected_sha256 = {wav: files[wav] for wav in task.detected}
    for wav in task.detected[1:]:  # another run's words (v1.5's clean run), on that run's window
        name = wav.replace(".wav", ".json")
        listed = others.get(name) if isinstance(others, dict) else None
        data = hashed(folder / name, sid, name, listed.get(sample.name) if isinstance(listed, dict) else None,
                      "asr.json", root)
        sample.other_words[name] = read_words(data, sid, window_us(sample.samples_of(wav), sample.sample_rate), name)


def load_audio_sample(tree: "Tree", sample: Sample) -> Sample:
    """An eligible sample of a task with other audio files (v1.5): its annotation read (hash-checked) and every audio
    file checked against manifest.json's SHA-256 and its length (output.wav and input.wav: T; the clean run's two
    files: clean_input_samples), for the stages that read them without scoring (evaluate's v1.5 reference
    column); `fdbu score` checks the runs it segments when it loads the tree."""
    sid, task, files = sample.sample_id, sample.kind, tree.files[sample.sample_id]
    _checked_audio(sample, (), files, tree.root)  # the rate first, before the annotation
    if task.annotation is not None and task.read is not None:
        ann = hashed(sample.folder / task.annotation, sid, task.annotation, files.get(task.annotation),
                     "manifest.json", tree.root)
        for name, value in task.read(ann, sid, sample.T_us).items():
            setattr(sample, name, value)
    _checked_audio(sample, ("output.wav", *task.audio), files, tree.root)
    return sample


def check_output_audio(tree: "Tree", samples) -> None:
    """The output.wav of eligible samples whose task detects no speech, checked (16 kHz, manifest.json's SHA-256, the
    length) and hashed as a task that does would have them: for a view that segments them (fdbu.views, VideoFDB's
    stay-silent on the pause subsets)."""
    for sample in samples:
        if sample.wav_sha256 is None:
            _checked_audio(sample, ("output.wav",), tree.files[sample.sample_id], tree.root)
            sample.wav_sha256 = tree.files[sample.sample_id]["output.wav"]


def _checked_audio(sample: Sample, names, files: dict[str, str], root: Path) -> None:
    """The sample is at Silero's 16 kHz, and each of `names` still has manifest.json's SHA-256 and the length it
    must have (`Sample.samples_of`): mono PCM."""
    sid = sample.sample_id
    if sample.sample_rate != SAMPLE_RATE:
        raise FdbuError(sid, "manifest.json", f"sample_rate is {sample.sample_rate}; Silero VAD scoring needs "
                        f"{SAMPLE_RATE} Hz")
    for name in names:
        hashed(sample.folder / name, sid, name, files.get(name), "manifest.json", root)
        check_wav(sample.folder / name, sid, sample.sample_rate, sample.samples_of(name))


@dataclass
class Manifest:
    root: Path
    declared: dict[str, int]
    samples: list[Sample]
    files: dict[str, dict[str, str]]  # sample id -> file name -> SHA-256
    sha256: str


def require(root, transcribed: bool = True) -> None:
    """Refuse a `tree=` that is not a reference tree (or, with `transcribed`, has no asr.json), naming what
    it is and the command that makes it one (`fdbu.tree.layout`); run before any output is checked."""
    problem = not_a_tree(Path(root), transcribed)
    if problem:  # one line, whatever the folder's name holds
        raise FdbuError("tree", None, one_line(problem))


def read_manifest(root) -> Manifest:
    """manifest.json with every row checked; no other file is read (the ASR stage starts here)."""
    root = Path(root)
    require(root, transcribed=False)
    data = _read(root / "manifest.json", "tree", "manifest.json", root)
    manifest = parse_json(data, "tree", "manifest.json")
    if not isinstance(manifest, dict) or manifest.get("schema_version") != 1 or manifest.get("kind") != MANIFEST_KIND:
        raise FdbuError("tree", "manifest.json", f"is not a schema_version 1 manifest of kind {MANIFEST_KIND!r}")
    declared = manifest.get("declared")
    if not isinstance(declared, dict) or not all(
            k in tasks.SUBSETS and isinstance(v, int) and not isinstance(v, bool) and v >= 0 for k, v in declared.items()):
        raise FdbuError("tree", "manifest.json", "declared is not an object of known subset -> size")
    rows = manifest.get("samples")
    if not isinstance(rows, list):
        raise FdbuError("tree", "manifest.json", "has no 'samples' list")
    samples, files = [], {}
    for i, row in enumerate(rows):
        sample, sample_files = _manifest_row(i, row, root)
        if sample.sample_id in files:
            raise FdbuError(sample.sample_id, "manifest.json", "is listed twice")
        files[sample.sample_id] = sample_files
        samples.append(sample)
    for subset in {s.subset for s in samples}:
        n = sum(s.subset == subset for s in samples)
        if subset not in declared:
            raise FdbuError("tree", "manifest.json", f"declared has no size for {subset}")
        if n > declared[subset]:
            raise FdbuError("tree", "manifest.json", f"selects {n} samples of {subset}, more than the {declared[subset]} declared")
    return Manifest(root, dict(declared), samples, files, sha256_bytes(data))




def provenance(asr: dict) -> dict:
    """Where a tree's transcripts came from, from asr.json's config: `source` (fdbu asr, adopted, synthetic;
    an asr.json that does not say is `fdbu asr` when it records NeMo's version, else `unrecorded`), the
    `model` and, where recorded, the checkpoint's SHA-256. unified.json's signature carries it."""
    config = asr.get("config", {})
    if not isinstance(config, dict):
        raise FdbuError("tree", "asr.json", f"config is {short(config)}, not an object")
    for key, kinds, what in (("source", (str,), f"one of {', '.join(SOURCES)}"), ("model_id", (str,), "a model name"),
                             ("checkpoint_sha256", (str,), "a SHA-256 hex digest")):
        value = config.get(key)
        if value is not None and (not isinstance(value, kinds) or (key == "source" and value not in SOURCES)
                                  or (key == "checkpoint_sha256" and not re.fullmatch(r"[0-9a-f]{64}", value))):
            raise FdbuError("tree", "asr.json", f"config.{key} is {short(value)}, not null or {what}")
    source = config.get("source")
    if source is None:
        source = "fdbu asr" if "nemo_version" in config else "unrecorded"
    out = {"source": source, "model": config.get("model_id")}
    if config.get("checkpoint_sha256") is not None:
        out["checkpoint_sha256"] = config["checkpoint_sha256"]
    return out


def load_tree(root, subsets=None) -> Tree:
    """Read and check everything `fdbu score` depends on; icc_backchannel files are not read. With `subsets`, only
    those subsets' samples are read (a sweep reads the one it sweeps, not the whole tree's audio)."""
    root = Path(root)
    require(root, transcribed=True)
    m = read_manifest(root)
    asr_bytes = _read(root / "asr.json", "tree", "asr.json", root)
    asr = parse_json(asr_bytes, "tree", "asr.json")
    asr_subsets = asr.get("subsets") if isinstance(asr, dict) else None
    if not isinstance(asr_subsets, dict):
        raise FdbuError("tree", "asr.json", "has no 'subsets' object")
    for sample in m.samples:
        if not sample.eligible or not sample.kind.scored or (subsets is not None and sample.subset not in subsets):
            continue
        entry = asr_subsets.get(sample.subset)
        if not isinstance(entry, dict) or not isinstance(entry.get("transcripts"), dict):
            raise FdbuError(sample.sample_id, "asr.json", f"has no transcripts for subset {sample.subset}")
        if entry.get("task") != sample.kind.asr_task:
            raise FdbuError(sample.sample_id, "asr.json", f"task of {sample.subset} is {entry.get('task')!r}, "
                            f"not {sample.kind.asr_task!r}")
        _load_sample(sample, m.files[sample.sample_id], entry["transcripts"], root, entry.get("other_transcripts", {}))
    receipts = {k: v["transcripts"] for k, v in asr_subsets.items()
                if isinstance(v, dict) and isinstance(v.get("transcripts"), dict)}
    others = {k: v["other_transcripts"] for k, v in asr_subsets.items()
              if isinstance(v, dict) and isinstance(v.get("other_transcripts"), dict)}
    return Tree(root=root, declared=m.declared, samples=m.samples, manifest_sha256=m.sha256,
                asr_sha256=sha256_bytes(asr_bytes), files=m.files, receipts=receipts, transcripts=provenance(asr),
                other_receipts=others)
