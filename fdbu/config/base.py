"""What several commands' configs share: the speech-detection and bootstrap groups, the settings every command has
(device, progress, cache_dir) and their refusals, one tree or several and a shard of the work, the sweep's grid,
how scored trees are paired, and the configs' own ranges. `fdbu.config.store` builds each command's config from them;
like it, nothing below the configs imports this module."""
import dataclasses
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, List, Optional


from .. import tasks
from ..common.cachedir import cache_root
from ..errors import FdbuError
from .settings import (ALPHA, DEVICES, HOLM_FAMILIES, HOLM_FAMILY, MAX_INT, MAX_RESAMPLES, NEG_OFFSET, RESAMPLES, SEED, VAD_BACKEND,
                       VAD_BATCH_SECONDS, VAD_VERIFY, WIDTHS, SileroSettings, changed, check as _check, check_options,
                       grid, grid_size, opt, refuse, within)
from ..views import VIEWS


def group(cls, help: str):
    return field(default_factory=cls, metadata={"help": help})


# ---- ranges (issue 25): every numeric setting inside its range, checked before any arithmetic ---------------
# A range is (test, what it must be), checked by settings.within; the ranges other modules share (the segment
# settings', settings.SEGMENT and AXES) are declared in fdbu.config.settings, these are the configs' own.

MAX_POINTS = 1000  # sweep grid points without sweep.allow_large (the default grid has 25)
MAX_GRID = 1_000_000  # sweep grid points with it: each point's record is kilobytes, sweep.json would be gigabytes
MAX_BATCH = 4096  # asr.batch_size
SEED_RANGE = (lambda v: 0 <= v <= MAX_INT, "a whole number from 0 to 2^63 - 1")
DAY = (lambda v: 0 < v <= 86400, "seconds > 0, at most a day")


def capped_threads(threads):
    """vad.threads above the cores this process may use (affinity, cgroup quota) is capped to them, said on
    as a note (`fdbu.common.log`): more threads than cores only cost memory (a billion asked libgomp for 216 GB)."""
    from ..common.device import allowed_cores
    from ..common.log import note

    cores = allowed_cores()
    if threads is not None and threads > cores:
        note(f"fdbu: note: vad.threads={threads} is more than the {cores} cores this process may use; using {cores}")
        return cores
    return threads


@dataclass
class VadConfig:
    threshold: float = opt(SileroSettings.threshold, "Silero speech threshold, in (0, 1)")
    min_speech_duration_ms: int = opt(SileroSettings.min_speech_duration_ms, "shortest speech segment kept, ms")
    min_silence_duration_ms: int = opt(SileroSettings.min_silence_duration_ms, "silence that ends a segment, ms")
    speech_pad_ms: int = opt(SileroSettings.speech_pad_ms, "padding on both sides of a segment, ms (spec: 0)")
    backend: str = opt(VAD_BACKEND, "batched: many files at once, guarded to equal silero-vad; reference: silero-vad "
                                  "itself, one file at a time")
    cache: bool = opt(True, "keep window probabilities on disk (keyed by the wav, silero-vad version and model)")
    verify: Any = opt(VAD_VERIFY, "sentinel: files re-run the reference way (auto: 2-10 files from 50 batched files)")
    threads: Optional[int] = opt(None, "CPU threads of the batched backend; null: the cores free now; more than "
                                       "the cores this process may use are capped to them")
    batch_seconds: float = opt(VAD_BATCH_SECONDS, "audio seconds loaded and computed per batch (bounds memory)")
    require_shards: bool = opt(False, "assembling after sharded runs: refuse, naming the missing shard, instead of "
                                      "computing what no shard's cache holds")

    def __post_init__(self):
        self.settings()  # the segment settings' one check (settings.SileroSettings, ranges settings.SEGMENT)
        check_options(self.backend, self.verify, self.threads, self.batch_seconds)
        self.threads = capped_threads(self.threads)

    def settings(self) -> SileroSettings:
        return SileroSettings(threshold=self.threshold, min_speech_duration_ms=self.min_speech_duration_ms,
                              min_silence_duration_ms=self.min_silence_duration_ms, speech_pad_ms=self.speech_pad_ms)

    def changed(self) -> List[str]:
        """The segment settings that differ from the spec's (Silero's defaults, no padding)."""
        return changed(self.settings())

    def refuse_segment_settings(self, why) -> None:
        """For a command that sets or ignores the segment settings itself: any changed one is refused,
        `why(key)` saying why and what to use instead."""
        for key in self.changed():
            refuse(f"vad.{key}", getattr(self, key), why(key))


# the segment settings, as keys: the ones a sweep and a calibration refuse
SEGMENT_KEYS = tuple(f"vad.{f.name}" for f in dataclasses.fields(VadConfig) if f.name in SileroSettings.__annotations__)


@dataclass
class BootstrapConfig:
    resamples: int = opt(RESAMPLES, f"bootstrap resamples, 1 to {MAX_RESAMPLES}")
    seed: int = opt(SEED, "numpy.random.default_rng seed, 0 to 2^63 - 1")

    def __post_init__(self):
        _check(1 <= self.resamples <= MAX_RESAMPLES, "bootstrap.resamples", self.resamples,
               f"a whole number from 1 to {MAX_RESAMPLES}")
        within(self, "bootstrap.", seed=SEED_RANGE)


@dataclass
class Common:
    """Settings every command shares."""

    REFUSED: ClassVar[tuple] = ()  # keys every run of the command refuses: --help leaves them out
    device: str = opt(DEVICES[0], "cpu | cuda | auto (the GPU when torch sees one)")
    progress: bool = opt(True, "progress bars on stderr")
    cache_dir: Optional[str] = opt(None, "the root of every cache (vad-probs/, asr/); shared by machines that shard "
                                         "a job; null: $XDG_CACHE_HOME/fdbu (~/.cache/fdbu)")

    def __post_init__(self):
        _check(self.device in DEVICES, "device", self.device, "choose cpu, cuda or auto")
        _widths(self)

    def cache_root(self) -> Path:
        return Path(self.cache_dir) if self.cache_dir else cache_root()


@dataclass
class DeviceFree(Common):
    """Common settings of a command that runs nothing on a device: `device` is refused, not ignored."""

    COMMAND: ClassVar[str] = ""
    REFUSED: ClassVar[tuple] = ("device", "cache_dir")
    CACHES: ClassVar[bool] = False  # it keeps something in the cache (evaluate: get_timing.py's speech probabilities)

    def __post_init__(self):
        super().__post_init__()
        _check(self.device == "auto", "device", self.device, f"fdbu {self.COMMAND} runs nothing on a device: "
               "leave it out")
        _check(self.CACHES or self.cache_dir is None, "cache_dir", self.cache_dir, f"fdbu {self.COMMAND} keeps "
               "nothing in a cache: leave it out")


@dataclass
class Sharded(Common):
    """One tree or several, and which shard of the work this run does (0 of 1: all of it)."""

    tree: Optional[str] = opt(None, "one reference tree")
    trees: Optional[List[str]] = opt(None, "several trees at once (their files are one pool of work)")
    shard: int = opt(0, "which part of the work this run does, 0 to shards - 1")
    shards: int = opt(1, "in how many parts the work is split; more than 1 only fills the cache, and the "
                         "unsharded command assembles the outputs from it")

    def __post_init__(self):
        super().__post_init__()
        _check((self.tree is None) != (self.trees is None), "tree", self.tree, "give tree=PATH or trees=[A,B], one")
        _check(self.trees is None or len(self.trees) > 0, "trees", self.trees, "a list of one or more trees")
        if not (isinstance(self.shards, int) and self.shards >= 1 and isinstance(self.shard, int)
                and 0 <= self.shard < self.shards):
            raise FdbuError("config", None, f"shard={self.shard!r} shards={self.shards!r}: shard must be a whole "
                            "number in [0, shards)")

    def roots(self):
        return [Path(t) for t in (self.trees if self.trees is not None else [self.tree])]

    @property
    def sharded(self) -> bool:
        return self.shards > 1


@dataclass
class GridConfig:
    threshold: List[float] = opt([0.3, 0.4, 0.5, 0.6, 0.7], "Silero thresholds, each in (0, 1)")
    min_silence_duration_ms: List[float] = opt([50, 100, 200, 300, 500], "minimum silences, ms")
    neg_threshold_offset: List[float] = opt([NEG_OFFSET], "neg_threshold = max(threshold - offset, 0.01)")
    min_speech_duration_ms: List[float] = opt([250], "minimum speech, ms")
    speech_pad_ms: List[float] = opt([0], "speech padding, ms")
    allow_large: bool = opt(False, f"run a grid of more than {MAX_POINTS} points (its time and memory grow with "
                                   "points x files)")
    subset: Optional[str] = opt(None, "the subset swept (one with speech detection: synthetic_user_interruption or a "
                                      "v1.5 subset); null: each tree's first (v1.0's before v1.5's)")

    def __post_init__(self):
        if self.subset is not None:
            _check(self.subset in tasks.swept(), "sweep.subset", self.subset,
                   f"one of {', '.join(tasks.swept())} (the subsets with speech detection), or null")
        size = grid_size(self.threshold, self.min_silence_duration_ms, self.neg_threshold_offset, self.min_speech_duration_ms,
                         self.speech_pad_ms)  # from the axes' lengths: no grid is built to be refused
        if size > MAX_POINTS and not self.allow_large:
            raise FdbuError("config", None, f"the sweep grid has {size} points, more than {MAX_POINTS} (time and memory "
                            "grow with points x files, sweep.json with points); pass sweep.allow_large=true")
        if size > MAX_GRID:
            raise FdbuError("config", None, f"the sweep grid has {size} points, more than {MAX_GRID}, which no run "
                            "holds (each point keeps its metrics for sweep.json), even with sweep.allow_large=true; "
                            "sweep fewer values per axis")
        self.points()  # the axes' one check (settings.grid, ranges settings.AXES)

    def points(self):  # -> list of fdbu.config.settings.GridPoint
        return grid(self.threshold, self.min_silence_duration_ms, self.neg_threshold_offset, self.min_speech_duration_ms,
                    self.speech_pad_ms)


def _views(names) -> None:
    for name in names:
        _check(name in VIEWS, "views", list(names), f"names from {', '.join(VIEWS)}")


UNPRINTABLE = ("Cc", "Zl", "Zp")  # control characters (NUL, newline, CR, ESC, DEL, C1) and the line separators


def printable_names(names: list[str], given: bool, trees: str = "trees") -> None:
    """Names every output prints as written: none holding a control character or a line separator, which would
    end a LaTeX comment, a CSV record or a Markdown row, or print nothing at all. One rule for the CLI and the API,
    for given names and for those taken from the trees' folder names (then the folder is named)."""
    for n in names:
        bad = next((ch for ch in n if unicodedata.category(ch) in UNPRINTABLE), None)
        if bad is not None:
            raise FdbuError("config", None, (f"names: {n!r} holds the control character {bad!r}, which no table "
                                             "prints as written: give names without one"
                                             if given else
                                             f"{trees}: the folder name {n!r} holds the control character {bad!r}, "
                                             "which no table prints as written: give names=[...] for the trees"))


def _names(key: str, names, count: int) -> None:
    """A name per tree, each a non-empty string, all different, printable."""
    if names is None:
        return
    _check(len(names) == count, key, list(names), f"one name per tree ({count})")
    _check(all(isinstance(n, str) and n.strip() for n in names), key, list(names), "names must be non-empty")
    _check(len(set(names)) == len(names), key, list(names), "names must all differ")
    printable_names(list(names), given=True)


def _widths(cfg) -> None:
    """A command with figures: their printed width is one of the presets."""
    if hasattr(cfg, "width"):
        _check(cfg.width in WIDTHS, "width", cfg.width, "choose column (3.3 in) or page (7 in)")


def _systems(cfg, least: int) -> None:
    """trees, names and baseline of a command over several scored trees (compare, report)."""
    _widths(cfg)
    _check(len(cfg.trees) >= least and all(isinstance(t, str) and t for t in cfg.trees), "trees", cfg.trees,
           "a list of at least two scored trees" if least == 2 else "a list of scored trees")
    _names("names", cfg.names, len(cfg.trees))
    printable_names(cfg.system_names(), given=cfg.names is not None)
    _check(cfg.baseline is None or cfg.baseline in cfg.system_names(), "baseline", cfg.baseline,
           f"one of the names {cfg.system_names()}")


@dataclass
class PairingOptions:
    """How scored trees are paired and decided (`fdbu compare`, and `fdbu report`'s own comparison)."""

    GROUP: ClassVar[str] = "compare"
    allow_different_samples: bool = opt(False, "compare trees whose subsets hold different samples, over the "
                                               "samples both hold (what is dropped is printed and recorded)")
    alpha: float = opt(ALPHA, "the marker's level: a line is marked when its Holm-adjusted p is below alpha")
    family: str = opt(HOLM_FAMILY, "which marks hold alpha together (one Holm family): subset (a subset's, per pair; "
                                   "across all pairs with compare.pairs=all), pair (a pair's over every subset: a "
                                   "system's summary row), leaderboard (every pair's and subset's)")
    allow_mixed_transcripts: bool = opt(False, "compare trees whose transcripts came from different sources "
                                               "(adopted from the official asr.py, fdbu asr, synth)")

    def __post_init__(self):
        _check(0 < self.alpha < 1, f"{self.GROUP}.alpha", self.alpha, "a level between 0 and 1")
        self.check_family()

    def check_family(self) -> None:
        _check(self.family in HOLM_FAMILIES, f"{self.GROUP}.family", self.family, f"one of {', '.join(HOLM_FAMILIES)}")

    def holm_family(self) -> str:
        """The Holm family these options decide with."""
        return self.family

    def level(self) -> float:
        """The marker's level these options decide at."""
        return self.alpha
