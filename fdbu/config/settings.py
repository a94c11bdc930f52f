"""The facts about each setting, once: the spec's values, what is derived from them, what is allowed.

`fdbu.config.store` checks every command's values against these (and builds its defaults from them);
speech detection, the sweep, the pipeline and the comparison read the same facts, so the
spec's Silero settings, silero-vad's neg_threshold offset, the (0, 1) threshold range and
"is this the spec's setting?" are each written here only. Nothing here imports torch or numpy.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..errors import FdbuError, short

NEG_OFFSET = 0.15  # silero-vad's own: neg_threshold = max(threshold - 0.15, 0.01)
NEG_FLOOR = 0.01
BACKENDS = ("reference", "batched")
VAD_BACKEND, VAD_VERIFY = "batched", "auto"  # vad.backend and vad.verify by default (SpeechDetector's too)
DEVICES = ("auto", "cpu", "cuda")      # device=: auto is the GPU when torch sees one (the default)
PAIRS = ("baseline", "all")            # fdbu compare: each system against the baseline (the default), or every pair
# compare.family: which headline lines one Holm adjustment covers, so which marks hold alpha together (docs: How
# compare decides): a subset's (of one pair, or of every pair with compare.pairs=all), a pair's over every subset,
# or the whole board's (every pair and subset); another benchmark's view is its own family in each
HOLM_FAMILIES = ("subset", "pair", "leaderboard")
HOLM_FAMILY = "subset"
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
# where a tree's transcripts came from (asr.json's config, unified.json's `transcripts`; fdbu.tree.load.provenance)
SOURCES = {"fdbu asr": "transcribed by fdbu", "adopted": "made by the official asr.py, not by fdbu",
           "synthetic": "placed by fdbu synth", "unrecorded": "asr.json does not say by what"}
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

# ---- ranges: (test, what the value must be); NaN, infinities and integers too large for a float fail every test
# (the comparisons are exact for integers of any size). Durations stop at the longest window a tree may hold
# (MAX_SECONDS): no larger value can change a result.
MAX_MS = round(1000 * MAX_SECONDS)  # the longest window in milliseconds
THRESHOLD = (lambda v: 0 < v < 1, "a number in (0, 1)")  # a Silero threshold
UNIT = (lambda v: 0 <= v <= 1, "a number from 0 to 1")
MS = (lambda v: 0 <= v <= MAX_MS, f"milliseconds from 0 to {MAX_MS:.0e} (no window is longer)")
MS_UP_TO_MINUTE = (lambda v: 0.001 <= v <= 60 and abs(v * 1000 - round(v * 1000)) < 1e-9,
                   "seconds from 0.001 to 60, a whole number of milliseconds")  # a window of an open choice
# the segment settings, one spelling (silero-vad's keywords) for vad.* and the sweep's axes (sweep.*), and the range
# of each; the sweep also varies neg_threshold's offset
SEGMENT = {"threshold": THRESHOLD, "min_speech_duration_ms": MS, "min_silence_duration_ms": MS, "speech_pad_ms": MS}
AXES = {"threshold": THRESHOLD, "min_silence_duration_ms": MS, "neg_threshold_offset": UNIT,
        "min_speech_duration_ms": MS, "speech_pad_ms": MS}  # GridPoint's fields, in its order


def within(obj, group: str, **ranges) -> None:
    """Each named field of `obj` (each element of a list) is a number passing its range's test."""
    for key, (test, what) in ranges.items():
        value = getattr(obj, key)
        for v in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not test(v):
                shown = short(v) if not isinstance(value, (list, tuple)) else f"[... {short(v)} ...]"
                raise FdbuError("config", None, f"{group}{key}={shown}: {what}")


def refuse(key: str, value, allowed: str):
    raise FdbuError("config", None, f"{key}={value!r}: {allowed}")


def check(ok: bool, key: str, value, allowed: str) -> None:
    """A setting's value refused unless `ok`, in one line: the key, the value and what is allowed."""
    if not ok:
        refuse(key, value, allowed)


def opt(default, help: str, **kw):
    """A config dataclass's field with its meaning (--help shows it): every group's settings, wherever its
    dataclass lives (fdbu.config.store; a family's or a view's beside the settings it makes), are declared with it."""
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda: type(default)(default), metadata={"help": help}, **kw)
    return field(default=default, metadata={"help": help}, **kw)


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
        """The one check of vad.* (VadConfig builds one of these): each segment setting in its range."""
        within(self, "vad.", **SEGMENT)
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
    min_speech_duration_ms: float
    min_silence_duration_ms: float
    speech_pad_ms: float

    def kernel_args(self) -> tuple:
        """silero-vad's sample counts: 16000 * ms / 1000, as floats, in `speech_segments`' order."""
        return (self.threshold, self.neg_threshold, 16000 * self.min_speech_duration_ms / 1000,
                16000 * self.min_silence_duration_ms / 1000, 16000 * self.speech_pad_ms / 1000)

    def call_kwargs(self) -> dict:
        """Every keyword `get_speech_timestamps(_from_probs)` takes, explicit (the lhotse way)."""
        return dict(threshold=self.threshold, sampling_rate=16000, min_speech_duration_ms=self.min_speech_duration_ms,
                    max_speech_duration_s=float("inf"), min_silence_duration_ms=self.min_silence_duration_ms,
                    speech_pad_ms=self.speech_pad_ms, return_seconds=False, time_resolution=1, visualize_probs=False,
                    neg_threshold=self.neg_threshold, min_silence_at_max_speech=98,
                    use_max_poss_sil_at_max_speech=True)


def changed(settings: SileroSettings) -> list[str]:
    """The segment settings that differ from the spec's (Silero's defaults, no padding)."""
    return [k for k, v in asdict(settings).items() if getattr(SPEC_SETTINGS, k) != v]


SPEC_SETTINGS = SileroSettings()
SPEC = {"threshold": SPEC_SETTINGS.threshold, "min_silence_duration_ms": SPEC_SETTINGS.min_silence_duration_ms,
        "neg_threshold_offset": NEG_OFFSET, "min_speech_duration_ms": SPEC_SETTINGS.min_speech_duration_ms,
        "speech_pad_ms": SPEC_SETTINGS.speech_pad_ms}  # the sweep grid's point with the spec's settings


@dataclass(frozen=True)
class GridPoint:
    threshold: float
    min_silence_duration_ms: float
    neg_threshold_offset: float
    min_speech_duration_ms: float
    speech_pad_ms: float

    @property
    def rule(self) -> SegmentRule:
        """silero-vad's rule: neg_threshold = max(threshold - offset, 0.01)."""
        return SegmentRule(self.threshold, neg_threshold(self.threshold, self.neg_threshold_offset),
                           self.min_speech_duration_ms, self.min_silence_duration_ms, self.speech_pad_ms)

    @property
    def is_spec(self) -> bool:
        return asdict(self) == SPEC


def grid_size(*axes) -> int:
    """The number of points of the grid over `axes`, from their lengths (nothing is built)."""
    return math.prod(len(a) if isinstance(a, (list, tuple)) else 1 for a in axes)


def grid(threshold, min_silence_duration_ms, neg_threshold_offset=(NEG_OFFSET,),
         min_speech_duration_ms=(SPEC["min_speech_duration_ms"],), speech_pad_ms=(SPEC["speech_pad_ms"],)
         ) -> list[GridPoint]:
    """Every point of the grid over the axes (sweep.<axis>=[...]), each axis checked against its range (AXES):
    the one check of the sweep's grid (GridConfig builds it)."""
    axes = dict(threshold=threshold, min_silence_duration_ms=min_silence_duration_ms,
                neg_threshold_offset=neg_threshold_offset, min_speech_duration_ms=min_speech_duration_ms,
                speech_pad_ms=speech_pad_ms)
    axes = {k: list(v) if isinstance(v, (list, tuple)) else [v] for k, v in axes.items()}
    for name, values in axes.items():
        if not values:
            raise FdbuError("config", None, f"sweep.{name} is empty; a sweep needs at least one value on every axis")
    within(type("Axes", (), axes), "sweep.", **AXES)
    points = [GridPoint(*map(float, values)) for values in itertools.product(*(axes[k] for k in AXES))]
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
