"""Speech segments for many output.wav files: cached, batched, and guarded to equal the reference.

Segments depend on the window probabilities only through the comparisons with `threshold`
and `neg_threshold` that silero-vad's state machine evaluates. The batched backend's
probabilities are within `MARGIN` of the reference path's (measured, see
`benchmarks/RESULTS.md`), so an evaluated comparison can only come out differently when
its batched probability lies within `MARGIN` of the threshold; the segment kernel flags
such files (`critical`) and every one is recomputed on the reference path. The segments,
and so every score, are then the reference path's, whatever the backend or device.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

from ..errors import FdbuError
from ..kernels import speech_segments
from .audio import batches, read_wav
from .cache import Entry, ProbabilityCache, default_dir
from .silero import SileroSettings, SileroVAD, samples_to_us

# Largest batched-vs-reference probability deviation measured on CPU: 1.55e-5 over 156k windows
# of speech with added noise and gain changes (`python -m benchmarks.vad_margin`, RESULTS.md).
MARGIN = 2e-4
BACKENDS = ("reference", "batched")


@dataclass
class Job:
    """One file to segment: where (sample id), the wav, its SHA-256 and its length in samples."""

    where: str
    path: Path
    sha256: str
    samples: int


@dataclass(frozen=True)
class SegmentRule:
    """How probabilities become segments (16 kHz): silero-vad's thresholds and minimum durations."""

    threshold: float
    neg_threshold: float
    min_speech_ms: float
    min_silence_ms: float

    @classmethod
    def of(cls, silero: SileroVAD) -> "SegmentRule":
        s = silero.settings
        return cls(s.threshold, silero.neg_threshold, s.min_speech_duration_ms, s.min_silence_duration_ms)


@dataclass
class DetectionStats:
    backend: str
    device: str
    files: int = 0
    audio_s: float = 0.0
    cache_hits: int = 0
    computed: int = 0
    recomputed: int = 0
    verified: int = 0
    cache_rejected: int = 0
    seconds: float = 0.0

    def line(self) -> str:
        return (f"speech detection: {self.files} files, {self.audio_s:.0f} s of audio, backend {self.backend} on "
                f"{self.device}: {self.computed} computed, {self.cache_hits} from cache, {self.recomputed} "
                f"recomputed on the reference path by the guard, {self.verified} verified, "
                f"{self.cache_rejected} stale or corrupt cache entries recomputed, {self.seconds:.2f} s")


def resolve_device(device: str) -> str:
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device not in ("cpu", "cuda"):
        raise FdbuError("config", None, f"device={device!r}; choose cpu, cuda or auto")
    if device == "cuda" and not torch.cuda.is_available():
        raise FdbuError("config", None, "device=cuda but torch sees no CUDA device; use device=cpu or auto")
    return device


class SpeechDetector:
    def __init__(self, settings: SileroSettings = SileroSettings(), *, backend: str = "batched",
                 device: str = "auto", cache: bool = True, cache_dir: Path | None = None, verify: int = 0,
                 batch_seconds: float = 2000.0, margin: float = MARGIN, progress: bool = False):
        if backend not in BACKENDS:
            raise FdbuError("config", None, f"vad.backend={backend!r}; choose {' or '.join(BACKENDS)}")
        if verify < 0 or batch_seconds <= 0 or not 0 < margin < 0.5:
            raise FdbuError("config", None, "vad.verify must be >= 0, vad.batch_seconds > 0, margin in (0, 0.5)")
        self.silero = SileroVAD(settings)
        self.backend = backend
        self.device = resolve_device(device) if backend == "batched" else "cpu"
        self.margin = margin
        self.verify = verify
        self.batch_seconds = batch_seconds
        self.progress = progress
        self.cache = (ProbabilityCache(cache_dir or default_dir(), self.silero.version, self.silero.model_sha256)
                      if cache else None)
        self._batched = None
        self.stats = DetectionStats(backend, self.device)

    def signature(self) -> dict:
        return self.silero.signature()

    @property
    def batched(self):
        if self._batched is None:
            from .batched import BatchedSilero

            self._batched = BatchedSilero(self.silero.model, self.device)
        return self._batched

    def _reference(self, job: Job, audio: np.ndarray | None = None) -> Entry:
        audio = read_wav(job.path, job.where) if audio is None else audio
        entry = Entry(self.silero.reference_probs(audio), True, None)
        if self.cache:
            self.cache.put(job.sha256, entry)
        return entry

    def probabilities(self, jobs: list[Job]) -> list[Entry]:
        """Window probabilities of every job, from the cache or computed (not yet guarded)."""
        t0 = time.perf_counter()
        if self.cache:
            self.cache.rejected = 0
        entries: list[Entry | None] = [None] * len(jobs)
        todo = []
        for i, job in enumerate(jobs):
            entry = self.cache.get(job.sha256, (job.samples + 511) // 512) if self.cache else None
            usable = entry is not None and (entry.exact or (self.backend == "batched" and entry.margin == self.margin))
            if usable:
                entries[i] = entry
                self.stats.cache_hits += 1
            else:
                todo.append(i)
        bar = tqdm(total=round(sum(jobs[i].samples for i in todo) / 16000), unit="audio s", desc="speech detection",
                   disable=not self.progress or not todo)
        for batch in batches([(jobs[i].where, jobs[i].path, jobs[i].samples) for i in todo], self.batch_seconds):
            idx = [todo[k] for k, _ in batch]
            if self.backend == "batched":
                for i, probs in zip(idx, self.batched.probabilities([a for _, a in batch])):
                    entries[i] = Entry(probs, False, self.margin)
                    if self.cache:
                        self.cache.put(jobs[i].sha256, entries[i])
            else:
                for i, (_, audio) in zip(idx, batch):
                    entries[i] = self._reference(jobs[i], audio)
            self.stats.computed += len(batch)
            bar.update(round(sum(len(a) for _, a in batch) / 16000))
        bar.close()
        self.stats.files += len(jobs)
        self.stats.audio_s += sum(j.samples for j in jobs) / 16000
        self.stats.cache_rejected += self.cache.rejected if self.cache else 0
        self.stats.seconds += time.perf_counter() - t0
        return entries

    def _kernel(self, entries: list[Entry], jobs: list[Job], margin: float, rule: "SegmentRule | None" = None):
        rule = rule or SegmentRule.of(self.silero)
        flat = np.concatenate([e.probs.astype(np.float64) for e in entries] + [np.zeros(0)])
        off = np.concatenate([[0], np.cumsum([len(e.probs) for e in entries])]).astype(np.int64)
        return speech_segments(flat, off, np.array([j.samples for j in jobs], np.int64), rule.threshold,
                               rule.neg_threshold, 16000 * rule.min_speech_ms / 1000,
                               16000 * rule.min_silence_ms / 1000, margin)

    def guard(self, entries: list[Entry], jobs: list[Job], rules: list["SegmentRule"]) -> list[Entry]:
        """Recompute on the reference path every inexact file that any rule finds critical."""
        t0 = time.perf_counter()
        entries = list(entries)
        critical = np.zeros(len(jobs), bool)
        for rule in rules:
            critical |= self._kernel(entries, jobs, self.margin, rule)[3]
        for i in np.flatnonzero(critical):
            if not entries[i].exact:
                entries[i] = self._reference(jobs[i])
                self.stats.recomputed += 1
        self.stats.seconds += time.perf_counter() - t0
        return entries

    def stamps(self, entries: list[Entry], jobs: list[Job], rule: "SegmentRule") -> list[list[tuple[int, int]]]:
        """Segments in samples under one rule, from guarded probabilities."""
        a, b, seg_off, _ = self._kernel(entries, jobs, 0.0, rule)
        return [list(zip(a[seg_off[i]:seg_off[i + 1]].tolist(), b[seg_off[i]:seg_off[i + 1]].tolist()))
                for i in range(len(jobs))]

    def segments(self, jobs: list[Job]) -> list[np.ndarray]:
        """Speech segments of every job in integer microseconds, (k, 2) each."""
        rule = SegmentRule.of(self.silero)
        entries = self.guard(self.probabilities(jobs), jobs, [rule])
        s = self.silero.settings
        if self.backend == "reference":  # silero-vad's own function, file by file
            stamps = [self.silero.segments_from_probs(e.probs, j.samples) for e, j in zip(entries, jobs)]
        else:
            stamps = self.stamps(entries, jobs, rule)
        self._verify(jobs, stamps)
        return [samples_to_us(st, s.sampling_rate) for st in stamps]

    def _verify(self, jobs: list[Job], stamps: list[list[tuple[int, int]]]) -> None:
        """Re-run `verify` random files with the literal reference call; any difference stops the run."""
        if not self.verify or not jobs:
            return
        pick = np.random.default_rng(0).choice(len(jobs), size=min(self.verify, len(jobs)), replace=False)
        for i in sorted(pick.tolist()):
            want = self.silero.segment_samples(read_wav(jobs[i].path, jobs[i].where))
            if want != stamps[i]:
                raise FdbuError(jobs[i].where, "output.wav", f"vad.verify: the {self.backend} backend's segments "
                                f"{stamps[i]} differ from the reference path's {want}; please report this file")
            self.stats.verified += 1
