"""The facts about each setting, once: the spec's values, what is derived from them, what is allowed.

`fdbu.config` checks every command's values against these (and builds its defaults from them);
speech detection, the sweep, the pipeline and the comparison read the same facts, so the
spec's Silero settings, silero-vad's neg_threshold offset, the (0, 1) threshold range and
"is this the spec's setting?" are each written here only. Nothing here imports torch or numpy.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import asdict, dataclass
from pathlib import Path

from .errors import FdbuError

NEG_OFFSET = 0.15  # silero-vad's own: neg_threshold = max(threshold - 0.15, 0.01)
NEG_FLOOR = 0.01
BACKENDS = ("reference", "batched")
PAIRS = ("baseline", "all")            # fdbu compare: each system against the baseline, or every pair
LENGTH_POLICIES = ("tolerant", "strict", "fit")  # fdbu export: an output whose length differs from T (Definition 44)
# export.length=tolerant: an output up to PAD_MAX_MS short is padded with silence, up to CROP_MAX_MS long is cropped
# at T. 80 ms is one frame of the coarsest common speech codec (Mimi, 12.5 Hz; EnCodec/Opus frames are 20 ms) and
# stays below the spec's 100 ms minimum silence, so padded silence can never close a segment that ran to the end
# of the output. Audio after T is outside the spec's window anyway; 1 s keeps a reply still running at T and a
# codec's flush, and refuses what is another capture (a mislabelled rate doubles or halves a whole window).
PAD_MAX_MS, CROP_MAX_MS = 80, 1000
# the ineligible reasons of the length policy (stable, so unified.json's ineligible_reasons counts them)
TOO_SHORT = f"output.wav is shorter than its input by more than {PAD_MAX_MS} ms (export.length=tolerant)"
TOO_LONG = f"output.wav is longer than its input by more than {CROP_MAX_MS} ms (export.length=tolerant)"
NOT_T = "output.wav's length differs from the input's (export.length=strict)"
FORMATS = ("html", "md", "tex", "csv")  # fdbu report: what it may write
WIDTHS = {"column": 3.3, "page": 7.0}  # figures' printed width, inches: one column or the page of a two-column paper
TRANSCRIPTS = ("none", "adopt")        # fdbu export: the ASR stage makes them, or the official asr.py's output.json
CACHE_USERS = ("score", "sweep", "vad", "asr", "calibrate")  # the commands that read or fill cache_dir
NOT_REACHED = "not reached"            # a quantile or interval end beyond what the captures show, as written
RESAMPLES, SEED = 2000, 0              # the spec's bootstrap
ALPHA = 0.05                           # fdbu compare's marker level (compare.alpha's default)
WIDTH = "page"                         # the figures' default printed width (a key of WIDTHS)
PARAKEET = "nvidia/parakeet-tdt-0.6b-v2"  # the official asr.py's model, fdbu asr's default
ASR_BATCH_SIZE, ASR_MAX_BATCH_SECONDS = 16, 600.0  # fdbu asr: files per NeMo call, audio seconds per call
VAD_BATCH_SECONDS = 2000.0             # speech detection: audio seconds loaded and computed per batch
MAX_SECONDS = 1e9                      # no time in a dataset file is larger: every window fits (readers refuse more)
MAX_INT = 2**63 - 1                    # every integer fits an int64 (numpy) and a seed numpy accepts
MAX_RESAMPLES = 100_000  # resamples x samples int64 indices: 100k x 1000 samples is 800 MB


def refuse(key: str, value, allowed: str):
    raise FdbuError("config", None, f"{key}={value!r}: {allowed}")


def in_unit(threshold: float) -> bool:
    """A Silero threshold lies in the open interval (0, 1)."""
    return 0.0 < threshold < 1.0


def neg_threshold(threshold: float, offset: float = NEG_OFFSET) -> float:
    """silero-vad's: max(threshold - offset, 0.01)."""
    return max(threshold - offset, NEG_FLOOR)


@dataclass(frozen=True)
class SileroSettings:
    """The spec's settings: Silero's defaults except no padding."""

    threshold: float = 0.5
    min_speech_duration_ms: int = 250
    min_silence_duration_ms: int = 100
    speech_pad_ms: int = 0
    sampling_rate: int = 16000

    def __post_init__(self):
        if not in_unit(self.threshold):
            raise FdbuError("config", None, f"vad.threshold {self.threshold} is outside (0, 1)")
        if self.min_speech_duration_ms < 0 or self.min_silence_duration_ms < 0 or self.speech_pad_ms < 0:
            raise FdbuError("config", None, "vad durations must be non-negative")
        if self.sampling_rate != 16000:
            raise FdbuError("config", None, f"vad.sampling_rate {self.sampling_rate}: fdbu scores 16 kHz audio only")

    def as_dict(self) -> dict:
        return asdict(self)

    @property
    def rule(self) -> "SegmentRule":
        return SegmentRule(self.threshold, neg_threshold(self.threshold), self.min_speech_duration_ms,
                           self.min_silence_duration_ms, self.speech_pad_ms)


@dataclass(frozen=True)
class SegmentRule:
    """How window probabilities become segments (16 kHz): silero-vad's thresholds, minimum durations
    and padding. neg_threshold is explicit; silero-vad's own default is max(threshold - 0.15, 0.01)."""

    threshold: float
    neg_threshold: float
    min_speech_ms: float
    min_silence_ms: float
    pad_ms: float

    def kernel_args(self) -> tuple:
        """silero-vad's sample counts: 16000 * ms / 1000, as floats, in `speech_segments`' order."""
        return (self.threshold, self.neg_threshold, 16000 * self.min_speech_ms / 1000,
                16000 * self.min_silence_ms / 1000, 16000 * self.pad_ms / 1000)

    def call_kwargs(self) -> dict:
        """Every keyword `get_speech_timestamps(_from_probs)` takes, explicit (the lhotse way)."""
        return dict(threshold=self.threshold, sampling_rate=16000, min_speech_duration_ms=self.min_speech_ms,
                    max_speech_duration_s=float("inf"), min_silence_duration_ms=self.min_silence_ms,
                    speech_pad_ms=self.pad_ms, return_seconds=False, time_resolution=1, visualize_probs=False,
                    neg_threshold=self.neg_threshold, min_silence_at_max_speech=98,
                    use_max_poss_sil_at_max_speech=True)


def changed(settings: SileroSettings) -> list[str]:
    """The segment settings that differ from the spec's (Silero's defaults, no padding)."""
    return [k for k, v in asdict(settings).items() if getattr(SPEC_SETTINGS, k) != v]


SPEC_SETTINGS = SileroSettings()
SPEC = {"threshold": SPEC_SETTINGS.threshold, "min_silence_ms": SPEC_SETTINGS.min_silence_duration_ms,
        "neg_threshold_offset": NEG_OFFSET, "min_speech_ms": SPEC_SETTINGS.min_speech_duration_ms,
        "speech_pad_ms": SPEC_SETTINGS.speech_pad_ms}  # the sweep grid's point with the spec's settings


@dataclass(frozen=True)
class GridPoint:
    threshold: float
    min_silence_ms: float
    neg_threshold_offset: float
    min_speech_ms: float
    speech_pad_ms: float

    @property
    def rule(self) -> SegmentRule:
        """silero-vad's rule: neg_threshold = max(threshold - offset, 0.01)."""
        return SegmentRule(self.threshold, neg_threshold(self.threshold, self.neg_threshold_offset),
                           self.min_speech_ms, self.min_silence_ms, self.speech_pad_ms)

    @property
    def is_spec(self) -> bool:
        return asdict(self) == SPEC


def grid_size(*axes) -> int:
    """The number of points of the grid over `axes`, from their lengths (nothing is built)."""
    return math.prod(len(a) if isinstance(a, (list, tuple)) else 1 for a in axes)


def grid(thresholds, min_silence_ms, neg_threshold_offset=(NEG_OFFSET,), min_speech_ms=(SPEC["min_speech_ms"],),
         speech_pad_ms=(SPEC["speech_pad_ms"],)) -> list[GridPoint]:
    axes = {"sweep.thresholds": thresholds, "sweep.min_silence_ms": min_silence_ms,
            "sweep.neg_threshold_offset": neg_threshold_offset, "sweep.min_speech_ms": min_speech_ms,
            "sweep.speech_pad_ms": speech_pad_ms}
    for name, values in axes.items():
        if not values:
            raise FdbuError("config", None, f"{name} is empty; a sweep needs at least one value on every axis")
        if any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in values):
            raise FdbuError("config", None, f"{name} must be numbers, got {list(values)!r}")
    if any(not in_unit(t) for t in thresholds):
        raise FdbuError("config", None, f"sweep.thresholds {list(thresholds)}: every threshold must lie in (0, 1)")
    for name in ("sweep.min_silence_ms", "sweep.min_speech_ms", "sweep.neg_threshold_offset", "sweep.speech_pad_ms"):
        if any(v < 0 for v in axes[name]):
            raise FdbuError("config", None, f"{name} {list(axes[name])}: values must not be negative")
    points = [GridPoint(*map(float, values)) for values in
              itertools.product(thresholds, min_silence_ms, neg_threshold_offset, min_speech_ms, speech_pad_ms)]
    if len(set(points)) != len(points):
        raise FdbuError("config", None, "the grid lists a point twice")
    return points


def check_options(backend: str, verify, threads, batch_seconds: float) -> None:
    """How the probabilities are computed (vad.backend, vad.verify, vad.threads, vad.batch_seconds)."""
    if backend not in BACKENDS:
        refuse("vad.backend", backend, f"choose {' or '.join(BACKENDS)}")
    if verify != "auto" and (isinstance(verify, bool) or not isinstance(verify, int) or verify < 0):
        refuse("vad.verify", verify, "auto or a number of files >= 0")
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
        refuse("vad.threads", threads, "null (the cores free now) or a number >= 1")
    if not 0 < batch_seconds <= 1e6:
        refuse("vad.batch_seconds", batch_seconds, "seconds in (0, 1e6]")


def default_names(trees: list[str]) -> list[str]:
    """A name per tree from its path: the folder name, or as many trailing parts as make the names differ;
    the same path given twice gets #2, #3."""
    parts = [Path(t).parts or (str(t),) for t in trees]
    for k in range(1, max(len(p) for p in parts) + 1):
        names = ["/".join(p[-k:]) for p in parts]
        if len(set(names)) == len(names):
            return names
    seen: dict[str, int] = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name}#{seen[name]}")
    return out
