"""Speech segments for many output.wav files: cached, batched, and guarded to equal the reference.

Segments depend on the window probabilities only through the comparisons with `threshold`
and `neg_threshold` that silero-vad's state machine evaluates. The batched backend's
probabilities lie within a margin of the reference path's, measured on the device that
computes them (`calibration.py`), so an evaluated comparison can only come out differently
when its batched probability lies within that margin of the threshold; the segment kernel
follows every way such comparisons can turn and flags the files where one changes a segment
(`critical`), and every one is recomputed on the reference path. The segments, and so every
score, are then the reference path's, whatever the backend or device.
A sentinel (`verify`) re-runs a few files the reference way and stops if a probability ever
strays beyond its margin or a segment differs.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

import numpy as np
from ..common.progress import Bar

from ..common import device as devices
from ..common import faults
from ..common.cachedir import CALIBRATION
from ..errors import FdbuError
from ..kernels import speech_segments
from ..scoring.shard import listed, missing, refuse_missing
from . import calibration as calib
from .audio import batches, read_wav
from .cache import Entry, ProbabilityCache, default_dir
from ..config.settings import DEVICES, VAD_BACKEND, VAD_BATCH_SECONDS, VAD_VERIFY, BACKENDS, check_options  # noqa: F401  (BACKENDS re-exported by fdbu.vad)
from .silero import SegmentRule, SileroSettings, SileroVAD, samples_to_us

AUTO_VERIFY_FROM = 50  # vad.verify=auto checks files once a run holds this many batched ones


def auto_verify(n: int) -> int:
    """vad.verify=auto: none below AUTO_VERIFY_FROM batched files, then one per 200, 2 to 10."""
    return 0 if n < AUTO_VERIFY_FROM else min(10, max(2, math.ceil(n / 200)))


@dataclass
class Job:
    """One file to segment: where (sample id), the wav, its SHA-256 and its length in samples."""

    where: str
    path: Path
    sha256: str
    samples: int
    file: str = "output.wav"  # the file's name in its sample folder, for messages
    root: Path | None = None  # the tree, where the file's bytes are still to be checked (fdbu vad's shards)

    @classmethod
    def of(cls, sample, file: str = "output.wav") -> "Job":
        """A checked sample's output.wav, or another file its task segments (fdbu.tree.load.Sample, Task.detected)."""
        if file == "output.wav":
            return cls(sample.sample_id, sample.wav_path, sample.wav_sha256, sample.input_samples)
        return cls(sample.sample_id, sample.folder / file, sample.detected_sha256[file], sample.samples_of(file),
                   file)


@dataclass
class DetectionStats:
    backend: str
    device: str
    files: int = 0
    audio_s: float = 0.0
    cache_hits: int = 0
    computed: int = 0
    recomputed: int = 0
    recomputed_windows: int = 0  # the windows of the files the guard recomputed ...
    guard_windows: int = 0       # ... and how many of them it computed (up to each file's last critical window)
    recomputed_whole: int = 0    # files still critical after that, recomputed whole
    verified: int = 0
    verify_ratio: float = 0.0  # largest |batched - reference| / margin seen by the sentinel
    verify_seconds: float = 0.0  # the sentinel's own time (part of `seconds`)
    cache_rejected: int = 0
    seconds: float = 0.0
    shards: dict = field(default_factory=dict)  # shard label -> cache hits computed by that shard
    threads: int | None = None
    guard: str | None = None   # the calibration line, when the batched path ran
    verify_short: str | None = None  # why fewer files were verified than vad.verify asked

    def line(self) -> str:
        where = " on " + self.device + (f" ({self.threads} thread{'' if self.threads == 1 else 's'})"
                                        if self.threads and self.device == "cpu" else "")
        if self.device == "auto":  # never resolved: nothing was computed, so torch was never loaded to ask
            where = ", no device started (the batched model computed nothing)"
        out = (f"speech detection: {self.files} files, {self.audio_s:.0f} s of audio, backend {self.backend}"
               f"{where}: {self.computed} computed, {self.cache_hits} from cache, {self.recomputed} recomputed on "
               f"the reference path by the guard" + (f" (up to their last critical window: {self.guard_windows} of "
                                                     f"{self.recomputed_windows} windows; {self.recomputed_whole} "
                                                     f"then whole)" if self.recomputed else "")
               + f", {self.verified} verified")
        if self.verified:
            out += f" (largest deviation {self.verify_ratio:.2f} of the margin; {self.verify_seconds:.2f} s)"
        if self.verify_short:
            out += f" ({self.verify_short})"
        out += f", {self.cache_rejected} stale or corrupt cache entries recomputed, {self.seconds:.2f} s"
        if self.shards:
            out += f"; from the caches of shards {listed(self.shards)}"
        notes = [missing(self.shards, self.computed), self.guard]
        return out + "".join(f"\n  {n}" for n in notes if n)


def _seconds_moved(bar, audio: list[np.ndarray]):
    """`tick(k)` moving `bar` by file k's audio seconds, rounded as the batch's whole would be (the bar ends where
    the batched path's per-batch updates end)."""
    moved = [0, 0]  # samples done, seconds shown

    def tick(k: int) -> None:
        moved[0] += len(audio[k])
        shown = round(moved[0] / 16000)
        bar.update(shown - moved[1])
        moved[1] = shown
    return tick


class SpeechDetector:
    """Silero settings plus how the probabilities are computed (backend, device, threads, cache, sentinel).

    `margin` replaces the calibrated guard margin, and `engine` picks the batched path's array library (numpy, torch;
    by default numpy on a CPU, torch on a GPU); both exist for tests and benchmarks only.
    """

    def __init__(self, settings: SileroSettings = SileroSettings(), *, backend: str = VAD_BACKEND,
                 device: str = DEVICES[0], cache: bool = True, cache_dir: Path | None = None,
                 verify: int | str = VAD_VERIFY,
                 threads: int | None = None, batch_seconds: float = VAD_BATCH_SECONDS, progress: bool = False,
                 margin: float | None = None, shard: str | None = None, require_cached: bool = False,
                 engine: str | None = None):
        check_options(backend, verify, threads, batch_seconds)
        if engine not in (None, "numpy", "torch"):
            raise ValueError(f"engine {engine!r}: numpy, torch or None (numpy on a CPU, torch on a GPU)")
        if engine == "numpy" and device == "cuda":
            raise ValueError("engine numpy computes on a CPU only")
        self.engine = engine
        if margin is not None and not 0 < margin < 0.5:
            raise ValueError(f"margin {margin}: a test margin lies in (0, 0.5)")
        self.silero = SileroVAD(settings)
        self.backend = backend
        # device=auto is resolved (torch asked) when something must be computed; cuda is checked at once
        self._device = device if backend == "batched" else "cpu"
        if self._device != "auto":  # a name not cpu or cuda refused, cuda checked, at once
            self._device = devices.resolve_device(self._device)
        self.verify = verify
        self.batch_seconds = batch_seconds
        self.progress = progress
        self.cache_root = Path(cache_dir) if cache_dir else default_dir()
        self.cache = ProbabilityCache(self.cache_root, self.silero.version, self.silero.model_sha256) if cache else None
        self._threads = threads
        self._threads_given = threads  # vad.threads as given (on a GPU the batched path's own count is 1)
        self._margin = margin
        self.shard = shard  # recorded in the cache entries this detector computes
        self.require_cached = require_cached  # an assembling run that refuses to compute (vad.require_shards)
        self._batched = None
        self._reference_workers: int | None = None
        self._calibration: calib.Calibration | None = None
        self.stats = DetectionStats(backend, self._device)

    @property
    def device(self) -> str:
        """cpu or cuda: device=auto resolved on first use (a run served from the cache never loads torch)."""
        if self._device == "auto":
            self._device = self.stats.device = devices.resolve_device("auto")
        return self._device

    def signature(self) -> dict:
        return self.silero.signature()

    @property
    def threads(self) -> int:
        """CPU threads of the batched path: vad.threads, or the cores free to this process right now."""
        if self._threads is None:
            self._threads = devices.free_cores() if self.device == "cpu" else 1
        self.stats.threads = self._threads
        return self._threads

    @property
    def batched(self):
        """The batched path: numpy on a CPU (no torch loaded), torch on a GPU (`engine` picks one for tests and
        benchmarks: torch runs on a CPU too)."""
        if self._batched is None:
            if (self.engine or ("numpy" if self.device == "cpu" else "torch")) == "numpy":
                from .batched_numpy import NumpyBatchedSilero

                self._batched = NumpyBatchedSilero(threads=self.threads)
            else:
                devices.load_torch()  # before batched.py imports it: Ctrl-C held while it loads
                from .batched import BatchedSilero

                self._batched = BatchedSilero(self.silero.model, self.device, threads=self.threads)
        return self._batched

    def calibration(self, force: bool = False) -> calib.Calibration:
        """This device's calibration: stored beside the probability cache, measured on first use."""
        if self._calibration is None or force:
            self._calibration = calib.calibration(self.cache_root / CALIBRATION, self.silero, self.batched,
                                                  force=force, progress=self.progress)
            self.stats.guard = self._calibration.line()
        return self._calibration

    def _batched_entries(self, audios: list[np.ndarray]) -> list[Entry]:
        if self._margin is not None:
            margin, key = self._margin, None
        else:
            cal = self.calibration()
            margin, key = cal.margin, cal.key
        return [Entry(p, False, margin, key, self.shard, fresh=True) for p in self.batched.probabilities(audios)]

    @property
    def reference_workers(self) -> int:
        """Files the reference path computes at once (the guard's recomputations, the sentinel, the reference
        backend): vad.threads, or the cores free to this process, each worker a model of its own on one thread."""
        if self._reference_workers is None:
            given = self._threads_given or (self._threads if self._device == "cpu" else None)
            self._reference_workers = given or devices.free_cores()
        return self._reference_workers

    def _references(self, jobs: list[Job], audios: list[np.ndarray] | None = None,
                    batched: list[Entry] | None = None, windows: list[int] | None = None, tick=None) -> list[Entry]:
        """Reference-path entries of `jobs` (their audio read here unless given), computed `reference_workers` at a
        time, each cached as it finishes (`tick(k)` then: a bar moves per file). With `batched` and `windows`, file
        k is recomputed up to window windows[k] only, its later windows kept from batched[k] (`Entry.exact_windows`)."""
        def read(k: int):
            return (lambda: audios[k]) if audios is not None else (lambda: read_wav(jobs[k].path, jobs[k].where))

        entries: list[Entry] = []

        def done(k: int, probs: np.ndarray) -> None:
            rest = batched[k] if batched is not None else None
            if rest is None or len(probs) >= len(rest.probs):
                entry = Entry(probs, True, by=self.shard, fresh=True)
            else:  # its later windows are as fresh as the batched entry's (from the cache: checked when computed)
                entry = Entry(np.concatenate([probs, rest.probs[len(probs):]]), False, rest.margin, rest.calibration,
                              self.shard, fresh=rest.fresh, exact_windows=len(probs))
            entries.append(entry)
            if self.cache:
                self.cache.put(jobs[k].sha256, entry)
            if tick is not None:
                tick(k)

        workers = self.reference_workers if len(jobs) > 1 else 1
        self.silero.reference_many([read(k) for k in range(len(jobs))], workers, done, windows)
        return entries

    def probabilities(self, jobs: list[Job]) -> list[Entry]:
        """Window probabilities of every job, from the cache or computed (not yet guarded)."""
        t0 = time.perf_counter()
        if self.cache:
            self.cache.rejected = 0
        entries: list[Entry | None] = [None] * len(jobs)
        todo = []
        for i, job in enumerate(jobs):
            entry = self.cache.get(job.sha256, (job.samples + 511) // 512) if self.cache else None
            if entry is not None and (entry.exact or (self.backend == "batched" and entry.guarded)):
                entries[i] = entry
                self.stats.cache_hits += 1
                if entry.by:
                    self.stats.shards[entry.by] = self.stats.shards.get(entry.by, 0) + 1
            else:
                todo.append(i)
        if self.require_cached:
            refuse_missing(self.stats.shards, len(todo), "vad.require_shards")
        if todo:  # the free cores counted before the loader's thread starts decoding (it would count as busy)
            _ = self.threads if self.backend == "batched" else self.reference_workers
        bar = Bar(total=round(sum(jobs[i].samples for i in todo) / 16000), unit="audio s", desc="speech detection",
                   disable=None if self.progress and todo else True)  # None: on a terminal only, never into a log
        kept = 0  # computed here and put in the cache
        try:
            for n, batch in enumerate(batches([(jobs[i].where, jobs[i].path, jobs[i].samples) for i in todo],
                                              self.batch_seconds)):
                faults.point(f"vad:batch:{n}")
                idx = [todo[k] for k, _ in batch]
                if self.backend == "batched":
                    for i, entry in zip(idx, self._batched_entries([a for _, a in batch])):
                        entries[i] = entry
                        if self.cache:
                            self.cache.put(jobs[i].sha256, entry)
                            kept += 1
                    bar.update(round(sum(len(a) for _, a in batch) / 16000))
                else:  # file by file on the bar: a batch of the reference path is many files' minutes
                    audio = [a for _, a in batch]
                    for i, entry in zip(idx, self._references([jobs[i] for i in idx], audio,
                                                              tick=_seconds_moved(bar, audio))):
                        entries[i] = entry
                self.stats.computed += len(batch)
        except KeyboardInterrupt as e:
            bar.close()  # before the message: no bar is drawn again under it
            # this call's cached files and those of the run's earlier calls (a command detects speech subset by
            # subset; every file of a finished call is in the cache, found there or put there)
            cached = self.stats.files + len(jobs) - len(todo) + kept
            if e.args or not self.cache or self.backend != "batched":
                raise  # (the reference path caches nothing here)
            if not cached:
                raise KeyboardInterrupt("nothing half-written was left behind; no speech probabilities were in the cache "
                                        "yet: the same command starts again") from None
            raise KeyboardInterrupt(f"nothing half-written was left behind; the speech probabilities of {cached} "
                                    f"file{'s' * (cached != 1)} are in the cache ({self.stats.computed} computed in this run): the same "
                                    "command resumes from them") from None
        bar.close()
        self.stats.files += len(jobs)
        self.stats.audio_s += sum(j.samples for j in jobs) / 16000
        self.stats.cache_rejected += self.cache.rejected if self.cache else 0
        self.stats.seconds += time.perf_counter() - t0
        return cast("list[Entry]", entries)  # every job has its entry now, from the cache or computed

    @staticmethod
    def _kernel(entries: list[Entry], jobs: list[Job], rule: SegmentRule, guard: bool):
        """Segments of every file under `rule`; with `guard`, also which inexact files are critical, and where."""
        flat = np.concatenate([e.probs.astype(np.float64) for e in entries] + [np.zeros(0)])
        off = np.concatenate([[0], np.cumsum([len(e.probs) for e in entries])]).astype(np.int64)
        margins = np.array([0.0 if (e.exact or not guard) else e.margin for e in entries], np.float64)
        exact_from = np.array([e.exact_windows for e in entries], np.int64)
        return speech_segments(flat, off, np.array([j.samples for j in jobs], np.int64), *rule.kernel_args(), margins,
                               exact_from)

    def _last_critical(self, entries: list[Entry], jobs: list[Job], rules: list[SegmentRule]) -> np.ndarray:
        """Each file's last critical window under any rule (-1: none)."""
        last = np.full(len(jobs), -1, np.int64)
        for rule in rules if jobs else []:  # (no files: no kernel call per rule)
            last = np.maximum(last, self._kernel(entries, jobs, rule, True).last_critical)
        return last

    def _bar(self, files: int, desc: str) -> Bar:
        """A phase of speech detection after the batched pass (the guard's recomputations, the sentinel's files),
        file by file on a terminal: each can take minutes of audio on the reference path."""
        return Bar(total=files, unit="file", desc=f"speech detection: {desc}",
                   disable=None if self.progress and files else True)

    def guard(self, entries: list[Entry], jobs: list[Job], rules: list[SegmentRule]) -> list[Entry]:
        """Recompute on the reference path every inexact file that any rule finds critical, then
        run the sentinel over the files that stay inexact.

        A file is recomputed up to its last critical window only: the reference path streams, so those
        windows are the whole file's own, and the state after them is the reference path's. Every later
        comparison is then checked again from there (`guard_from`); a file that is still critical is recomputed
        whole (the kernel makes that happen only when it followed more than BRANCHES trajectories at once)."""
        t0 = time.perf_counter()
        entries = list(entries)
        last = self._last_critical(entries, jobs, rules)
        picked = np.flatnonzero(last >= 0).tolist()
        upto = [int(last[i]) + 1 for i in picked]  # (a window of the file: at most all of them)
        with self._bar(len(picked), "guard: recomputing") as bar:
            for i, entry in zip(picked, self._references([jobs[i] for i in picked],
                                                         batched=[entries[i] for i in picked], windows=upto,
                                                         tick=lambda k: bar.update())):
                entries[i] = entry
        # only the files just recomputed in part can have changed
        still = self._last_critical([entries[i] for i in picked], [jobs[i] for i in picked], rules)
        again = [i for i, last_i in zip(picked, still.tolist()) if last_i >= 0]
        with self._bar(len(again), "guard: whole files") as bar:
            for i, entry in zip(again, self._references([jobs[i] for i in again], tick=lambda k: bar.update())):
                entries[i] = entry
        self.stats.recomputed += len(picked)
        self.stats.recomputed_windows += sum(len(entries[i].probs) for i in picked)
        self.stats.guard_windows += sum(upto)
        self.stats.recomputed_whole += len(again)
        self.stats.seconds += time.perf_counter() - t0
        return self._verify(entries, jobs, rules)

    def stamps(self, entries: list[Entry], jobs: list[Job], rule: SegmentRule) -> list[list[tuple[int, int]]]:
        """Segments in samples under one rule, from guarded probabilities."""
        seg = self._kernel(entries, jobs, rule, False)
        return [list(zip(seg.start[a:b].tolist(), seg.end[a:b].tolist()))
                for a, b in zip(seg.offsets[:-1], seg.offsets[1:])]

    def fill_cache(self, jobs: list[Job], rules: list[SegmentRule]) -> None:
        """A sharded run's work: every job's guarded, verified probabilities in the cache, nothing else."""
        if self.cache is None:
            raise FdbuError("config", None, "a sharded speech-detection run fills the cache: vad.cache must be true")
        self.guard(self.probabilities(jobs), jobs, rules)

    def segments(self, jobs: list[Job]) -> list[np.ndarray]:
        """Speech segments of every job in integer microseconds, (k, 2) each."""
        return [samples_to_us(st, 16000) for st in self.sample_segments(jobs)]

    def sample_segments(self, jobs: list[Job]) -> list[list[tuple[int, int]]]:
        """Speech segments of every job in samples, [start, end), as `get_speech_timestamps` gives them."""
        rule = self.silero.settings.rule
        entries = self.guard(self.probabilities(jobs), jobs, [rule])
        if self.backend == "reference":  # silero-vad's own function, file by file
            return [self.silero.segments_from_probs(e.probs, j.samples) for e, j in zip(entries, jobs)]
        return self.stamps(entries, jobs, rule)

    def _why_short(self, asked: int, inexact: int, entries: list[Entry]) -> str:
        """Why vad.verify=N checks fewer files: it checks only what the batched path computed in this run."""
        fresh = sum(e.fresh for e in entries)
        if self.backend == "reference":
            why = "the reference backend computes the reference path's own probabilities"
        elif not fresh:
            why = "nothing was computed here, every file came from the cache, checked by the run that computed it"
        elif not inexact:
            why = f"the guard recomputed all {fresh} computed files on the reference path"
        else:
            return f"of {asked} asked: only {inexact} computed by the batched path in this run"
        return f"vad.verify={asked}: nothing to verify: {why}"

    def _verify(self, entries: list[Entry], jobs: list[Job], rules: list[SegmentRule]) -> list[Entry]:
        """The sentinel: re-run a few random files the batched path computed in this run the reference
        way (the model calls `get_speech_timestamps` makes, then its `get_speech_timestamps_from_probs`).
        A probability beyond its margin, or any segment that differs under any rule, stops the run.
        Verified files keep the exact probabilities. (Cached entries were checked by the run that
        computed them, so a run assembled from caches computes nothing here.)"""
        inexact = [i for i, e in enumerate(entries) if not e.exact and e.fresh]
        n = auto_verify(len(inexact)) if self.verify == "auto" else cast(int, self.verify)  # a count otherwise
        if self.verify != "auto" and n > len(inexact):
            self.stats.verify_short = self._why_short(n, len(inexact), entries)
        if not n or not inexact:
            return entries
        t0 = time.perf_counter()
        pick = np.random.default_rng(0).choice(len(inexact), size=min(n, len(inexact)), replace=False)
        picked = sorted(inexact[k] for k in pick.tolist())
        with self._bar(len(picked), "verify") as bar:
            exacts = self._references([jobs[i] for i in picked], tick=lambda k: bar.update())
        for i, exact in zip(picked, exacts):
            job, entry = jobs[i], entries[i]
            deviation = float(np.abs(entry.probs.astype(np.float64) - exact.probs.astype(np.float64)).max(initial=0))
            if not deviation < entry.margin:
                raise FdbuError(job.where, job.file, f"vad.verify: a batched probability deviates by "
                                f"{deviation:.1e} from the reference path's, beyond the guard margin {entry.margin:.1e} "
                                f"calibrated for this device; the segments may differ: rerun with "
                                f"vad.backend=reference, and please report this file")
            for rule in rules:
                want = self.silero.segments_from_probs(exact.probs, job.samples, rule)
                got = self.stamps([entry], [job], rule)[0]
                if got != want:
                    raise FdbuError(job.where, job.file, f"vad.verify: the batched backend's segments {got} "
                                    f"differ from the reference path's {want}; please report this file")
            entries[i] = exact
            self.stats.verified += 1
            self.stats.verify_ratio = max(self.stats.verify_ratio, deviation / entry.margin)
        elapsed = time.perf_counter() - t0
        self.stats.verify_seconds += elapsed
        self.stats.seconds += elapsed
        return entries
