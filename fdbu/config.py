"""Every command's settings, typed, with their defaults and meaning, validated once, here.

The dataclasses are Hydra structured configs (registered in the ConfigStore with the config Hydra
composes for each command, `register`), so a value of the wrong type is refused while Hydra composes the
config, before any work; ranges and combinations are checked in `__post_init__`, which runs
when the CLI turns the composed config into these objects and when the Python API builds
them. Defaults, ranges and derived values are the facts in `fdbu.settings` (`SileroSettings`,
the grid, the bootstrap's spec), so the modules below receive checked values and never import
this one; `fdbu COMMAND --help` prints each key with its type, default and the `help` of its field.
"""
import dataclasses
import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Dict, List, Optional

from omegaconf import MISSING

from . import registry, tasks
from .cachedir import cache_root
from .errors import FdbuError, one_line
from .family import Group
from .official.rules import shipped_pins
from .settings import (ALPHA, ASR_BATCH_SIZE, ASR_MAX_BATCH_SECONDS, CROP_MAX_MS, FORMATS, LENGTH_POLICIES, MAX_INT,
                       MAX_RESAMPLES, NEG_OFFSET, PAD_MAX_MS, PAIRS, PARAKEET, RESAMPLES, SEED, TRANSCRIPTS,
                       VAD_BATCH_SECONDS, WIDTH, WIDTHS, SileroSettings, changed, check as _check, check_options,
                       default_names, grid, grid_size, opt, refuse, within, VAD_BACKEND, VAD_VERIFY, DEVICES)
from .views import VIEWS


def group(cls, help: str):
    return field(default_factory=cls, metadata={"help": help})


# ---- ranges (issue 25): every numeric setting inside its range, checked before any arithmetic ---------------
# A range is (test, what it must be), checked by settings.within; the ranges other modules share (the segment
# settings', settings.SEGMENT and AXES) are declared in fdbu.settings, these are the configs' own.

MAX_POINTS = 1000  # sweep grid points without sweep.allow_large (the default grid has 25)
MAX_GRID = 1_000_000  # sweep grid points with it: each point's record is kilobytes, sweep.json would be gigabytes
MAX_BATCH = 4096  # asr.batch_size
SEED_RANGE = (lambda v: 0 <= v <= MAX_INT, "a whole number from 0 to 2^63 - 1")
DAY = (lambda v: 0 < v <= 86400, "seconds > 0, at most a day")


def capped_threads(threads):
    """vad.threads above the cores this process may use (affinity, cgroup quota) is capped to them, said on
    as a note (`fdbu.log`): more threads than cores only cost memory (a billion asked libgomp for 216 GB)."""
    from .device import allowed_cores
    from .log import note

    cores = allowed_cores()
    if threads is not None and threads > cores:
        note(f"fdbu: note: vad.threads={threads} is more than the {cores} cores this process may use; using {cores}")
        return cores
    return threads


def too_large(overrides) -> str | None:
    """The first `key=value` whose value (or a list element) is an integer no float holds: OmegaConf would
    fail converting it (OverflowError) before any check runs."""
    for item in overrides:
        key, _, value = str(item).partition("=")
        for part in value.strip("[]").split(","):
            part = part.strip()
            if part.lstrip("+-").isdigit() and part.isascii() and abs(int(part)) > MAX_INT:
                return f"{key.lstrip('+~')}=<an integer of {len(part.lstrip('+-'))} digits>: no setting takes a " \
                       "number this large"
    return None


def flat(values: Dict[str, Any], prefix: str = "") -> List[str]:
    """The API's nested settings as `key=value` overrides (for `too_large`)."""
    out = []
    for key, value in values.items():
        if isinstance(value, dict):
            out += flat(value, f"{prefix}{key}.")
        else:
            shown = ",".join(map(str, value)) if isinstance(value, (list, tuple)) else value
            out.append(f"{prefix}{key}={shown}")
    return out
# ---- end of the ranges ---------------------------------------------------------------------------------------


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

    def __post_init__(self):
        super().__post_init__()
        _check(self.device == "auto", "device", self.device, f"fdbu {self.COMMAND} runs nothing on a device: "
               "leave it out")
        _check(self.cache_dir is None, "cache_dir", self.cache_dir, f"fdbu {self.COMMAND} keeps nothing in a cache: "
               "leave it out")


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


class Grouped:
    """A command whose config has a group per settings group it takes (fdbu.family.Group: a family's, overlap.*; a
    view's, fdbench.*), added by `grouped` from the registries, so no config names a family or a view."""

    GROUPED: ClassVar[str] = ""  # the command

    def group_settings(self) -> Dict[str, Any]:
        """Each family's group's settings, by the group's key (the pipeline's and the sweep's `groups`)."""
        return {g.key: getattr(self, g.key).settings() for g in tasks.groups(self.GROUPED)}


def groups_of(command: str) -> List[Group]:
    """The settings groups `command` takes: each family's that names it, then each view's."""
    return [*tasks.groups(command), *(v.group for v in VIEWS.values() if command in v.group.commands)]


_GROUPED: Dict[tuple, type] = {}


def grouped(cls: type) -> type:
    """`cls` (a `Grouped` config) with a field per settings group of its command, the groups registered now: a
    dataclass made once per set of groups, named in this module (`<Class>__<key>_<key>`), so pickling a config
    (a cluster launcher's jobs) finds it by name."""
    command = getattr(cls, "GROUPED", "")
    if not command:
        return cls
    gs = groups_of(command)
    key = (cls, tuple((g.key, g.config) for g in gs))
    if key not in _GROUPED:
        name = f"{cls.__name__}__{'_'.join(g.key for g in gs)}"
        made = dataclasses.make_dataclass(name, [(g.key, g.config, group(g.config, g.help)) for g in gs], bases=(cls,))
        made.__module__, made.__qualname__, made.__doc__ = __name__, name, cls.__doc__
        globals()[name] = _GROUPED[key] = made
    return _GROUPED[key]


@registry.config("score")
@dataclass
class ScoreConfig(Common, Grouped):
    GROUPED: ClassVar[str] = "score"
    tree: str = opt(MISSING, "the reference tree to score")
    out: Optional[str] = opt(None, "where unified.json and unified-samples.jsonl go (created if missing); "
                                   "null: the tree")
    plot: bool = opt(False, "also write latency-curves.png and .pdf (response-latency curves F(t))")
    width: str = opt(WIDTH, "the figures' printed width: column (3.3 in) or page (7 in); every text >= 7 pt")
    vad: VadConfig = group(VadConfig, "speech detection (Silero VAD)")
    bootstrap: BootstrapConfig = group(BootstrapConfig, "percentile bootstrap of pooled ratios and medians")
    views: List[str] = opt([], f"other benchmarks' timing numbers, in their own section of unified.json: "
                               f"{', '.join(VIEWS)} (README: Numbers in other benchmarks' terms)")
    # then a group per family's settings (overlap.*) and per view (fdbench.*, ...): `grouped`

    def __post_init__(self):
        super().__post_init__()
        _views(self.views)
        _check(len(set(self.views)) == len(self.views), "views", list(self.views), "each view once")

    def view_settings(self):  # -> fdbu.pipeline.Views
        from .pipeline import Views

        names = tuple(n for n in VIEWS if n in self.views)
        return Views(names, {n: getattr(self, n).settings() for n in names})


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

    def points(self):  # -> list of fdbu.settings.GridPoint
        return grid(self.threshold, self.min_silence_duration_ms, self.neg_threshold_offset, self.min_speech_duration_ms,
                    self.speech_pad_ms)


@registry.config("sweep")
@dataclass
class SweepConfig(Common, Grouped):
    GROUPED: ClassVar[str] = "sweep"
    REFUSED: ClassVar[tuple] = SEGMENT_KEYS
    tree: Any = opt(MISSING, "one tree, or several side by side: tree=[runs/A,runs/B]")
    out: Optional[str] = opt(None, "where sweep.json, sweep.csv and the heatmaps go; null: the tree (one tree only)")
    plot: bool = opt(True, "write the heatmaps")
    width: str = opt(WIDTH, "the figures' printed width: column (3.3 in) or page (7 in); every text >= 7 pt")
    names: Optional[List[str]] = opt(None, "a name per tree for tables and figures; null: the trees' folder names")
    sweep: GridConfig = group(GridConfig, "the grid of VAD settings")
    vad: VadConfig = group(VadConfig, "speech detection (its settings are the sweep's axes)")
    bootstrap: BootstrapConfig = group(BootstrapConfig, "percentile bootstrap of pooled ratios and medians")
    # then a group per family's settings (overlap.*): `grouped`

    def __post_init__(self):
        super().__post_init__()
        trees = self.trees()
        _check(bool(trees) and all(isinstance(t, str) and t for t in trees), "tree", self.tree,
               "a path, or a list of paths")
        _names("names", self.names, len(trees))
        self.vad.refuse_segment_settings(lambda key: f"a sweep's segment settings are its axes: use sweep.{key}=[...]")

    def trees(self) -> List[str]:
        return list(self.tree) if isinstance(self.tree, (list, tuple)) else [self.tree]

    def system_names(self) -> List[str]:
        return list(self.names) if self.names is not None else default_names(self.trees())


def _views(names) -> None:
    for name in names:
        _check(name in VIEWS, "views", list(names), f"names from {', '.join(VIEWS)}")


def _names(key: str, names, count: int) -> None:
    """A name per tree, each a non-empty string, all different."""
    if names is None:
        return
    _check(len(names) == count, key, list(names), f"one name per tree ({count})")
    _check(all(isinstance(n, str) and n.strip() for n in names), key, list(names), "names must be non-empty")
    _check(len(set(names)) == len(names), key, list(names), "names must all differ")


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
    _check(cfg.baseline is None or cfg.baseline in cfg.system_names(), "baseline", cfg.baseline,
           f"one of the names {cfg.system_names()}")


@dataclass
class PairingOptions:
    """How scored trees are paired and decided (`fdbu compare`, and `fdbu report`'s own comparison)."""

    GROUP: ClassVar[str] = "compare"
    allow_different_samples: bool = opt(False, "compare trees whose subsets hold different samples, over the "
                                               "samples both hold (what is dropped is printed and recorded)")
    alpha: float = opt(ALPHA, "the marker's level: a line is marked when its Holm-adjusted p is below alpha")
    allow_mixed_transcripts: bool = opt(False, "compare trees whose transcripts came from different sources "
                                               "(adopted from the official asr.py, fdbu asr, synth)")

    def __post_init__(self):
        _check(0 < self.alpha < 1, f"{self.GROUP}.alpha", self.alpha, "a level between 0 and 1")


@dataclass
class CompareOptions(PairingOptions):
    pairs: str = opt("baseline", "baseline: each system against the baseline; all: every pair of systems")

    def __post_init__(self):
        super().__post_init__()
        _check(self.pairs in PAIRS, "compare.pairs", self.pairs, "choose baseline or all")


@registry.config("compare")
@dataclass
class CompareConfig:
    trees: List[str] = opt(MISSING, "the scored trees (unified.json + unified-samples.jsonl): trees=[runs/A,runs/B]")
    names: Optional[List[str]] = opt(None, "a name per tree for tables and figures; null: the trees' folder names")
    baseline: Optional[str] = opt(None, "the name every system is compared against (with compare.pairs=all: a in "
                                        "each of its pairs); null: the first tree's")
    out: Optional[str] = opt(None, "where compare.json, compare.csv and the figures go (created if missing); "
                                   "null: print the leaderboard only")
    plot: bool = opt(True, "write the figures (PNG and PDF) with compare.json")
    width: str = opt(WIDTH, "the figures' printed width: column (3.3 in) or page (7 in); every text >= 7 pt")
    progress: bool = opt(True, "progress bars on stderr (the paired bootstraps, the figures)")
    compare: CompareOptions = group(CompareOptions, "how systems are paired")

    def __post_init__(self):
        _systems(self, 2)

    def system_names(self) -> List[str]:
        return list(self.names) if self.names is not None else default_names(list(self.trees))


@dataclass
class ReportOptions(PairingOptions):
    GROUP: ClassVar[str] = "report"
    format: Any = opt(["html", "md", "tex", "csv"], "what to write: html (index.html, samples-K-C.js, figures), md, "
                                                     "tex (booktabs), csv (the leaderboard); one or a list")
    compare: Optional[str] = opt(None, "a folder with compare.json of these trees (fdbu compare out=...); null: "
                                       "compared here, compare.json written beside the site")

    def __post_init__(self):
        super().__post_init__()
        fmts = self.formats()
        _check(bool(fmts) and all(f in FORMATS for f in fmts) and len(set(fmts)) == len(fmts), "report.format",
               self.format, f"one or a list of {', '.join(FORMATS)}")

    def formats(self) -> List[str]:
        return [self.format] if isinstance(self.format, str) else list(self.format)


@registry.config("report")
@dataclass
class ReportConfig:
    trees: List[str] = opt(MISSING, "the scored trees (one or more): trees=[runs/A,runs/B]")
    names: Optional[List[str]] = opt(None, "a name per tree; null: the trees' folder names")
    baseline: Optional[str] = opt(None, "the name every system is compared against; null: the first tree's")
    out: str = opt(MISSING, "the report folder (created if missing); open its index.html in a browser")
    plot: bool = opt(True, "embed the figures (PNG and PDF beside index.html)")
    width: str = opt(WIDTH, "the figures' printed width: column (3.3 in) or page (7 in); every text >= 7 pt")
    progress: bool = opt(True, "progress bars on stderr (the comparison, the drill-downs, the figures)")
    report: ReportOptions = group(ReportOptions, "what the report holds")

    def __post_init__(self):
        _systems(self, 1)

    system_names = CompareConfig.system_names


@dataclass
class JudgeConfig:
    base_url: Optional[str] = opt(None, "an OpenAI-compatible endpoint; null: the rating stays pending")
    model: Optional[str] = opt(None, "the judge model")
    api_key_env: str = opt("OPENAI_API_KEY", "the environment variable holding the API key")
    max_attempts: int = opt(3, "requests per takeover before the rating is recorded as failed, >= 1")
    timeout_s: float = opt(60.0, "seconds per request, > 0")

    def __post_init__(self):
        within(self, "evaluate.judge.", max_attempts=(lambda v: 1 <= v <= 100, "a number from 1 to 100"),
               timeout_s=DAY)


@dataclass
class EvaluateOptions:
    gt_distribution: Optional[str] = opt(None, "the official icc_gt_distribution.json (backchannel timing); "
                                               "null: the one beside the official scripts, if given")
    official_checkout: Optional[str] = opt(None, "a Full-Duplex-Bench clone, or a folder of its evaluation scripts")
    official_sha256: Dict[str, str] = field(default_factory=shipped_pins,
                                  metadata={"help": "file name -> the SHA-256 the official files must have "
                                                    "(default: the pinned upstream ones)"})
    allow_unpinned: bool = opt(False, "compare against official files that differ from their pins")
    run_official: bool = opt(False, "also run the official scripts unchanged and compare (exit 3 on a difference)")
    judge: JudgeConfig = group(JudgeConfig, "the LLM judge: v1.0's interruption rating, v1.5's behaviour tags")

    def __post_init__(self):
        _check(not self.run_official or self.official_checkout is not None, "evaluate.run_official",
               self.run_official, "needs evaluate.official_checkout=DIR")
        _check(not self.judge.base_url or (self.official_checkout is not None and bool(self.judge.model)),
               "evaluate.judge.base_url", self.judge.base_url,
               "a judge needs evaluate.official_checkout=DIR (for the official prompt) and evaluate.judge.model")


@registry.config("evaluate")
@dataclass
class EvaluateConfig(DeviceFree):
    COMMAND: ClassVar[str] = "evaluate"
    REFUSED: ClassVar[tuple] = DeviceFree.REFUSED + ("progress",)
    tree: str = opt(MISSING, "the reference tree")
    evaluate: EvaluateOptions = group(EvaluateOptions, "the official rules (reference column)")

    def __post_init__(self):
        super().__post_init__()
        _check(self.progress is True, "progress", self.progress, "fdbu evaluate shows no progress bar: leave it out")


@dataclass
class ExportOptions:
    length: str = opt("tolerant", f"tolerant: pad an output up to {PAD_MAX_MS} ms short with silence, crop one up to "
                                  f"{CROP_MAX_MS} ms long at T (recorded per sample), else ineligible; strict: any "
                                  "other length is ineligible; fit: pad or crop at any length")
    only: Optional[List[str]] = opt(None, "null, or the sample ids to export")
    roots: Any = opt(None, "the official per-task folders instead of dataset=: {subset: DIR} "
                           "(DIR/<id>/input.wav, as evaluate.py --root_dir reads); any subset may be left out")
    transcripts: str = opt("none", "none: fdbu asr makes them; adopt: take each sample's output.json from the "
                                   "official asr.py (beside output.wav)")
    model: str = opt(PARAKEET, "with transcripts=adopt: the model that made them, as asr.json "
                                                    "records it (declared; fdbu does not run it)")

    def __post_init__(self):
        _check(self.length in LENGTH_POLICIES, "export.length", self.length, f"choose {', '.join(LENGTH_POLICIES)}")
        _check(self.transcripts in TRANSCRIPTS, "export.transcripts", self.transcripts, "choose none or adopt")
        _check(bool(self.model.strip()), "export.model", self.model, "a model name")
        _check(self.roots is None or (isinstance(self.roots, dict) and bool(self.roots) and all(
            isinstance(k, str) and isinstance(v, str) and v for k, v in self.roots.items())), "export.roots",
            self.roots, "a mapping {subset: folder}, e.g. \"export.roots={candor_turn_taking: DIR}\"")


@registry.config("export")
@dataclass
class ExportConfig(DeviceFree):
    COMMAND: ClassVar[str] = "export"
    dataset: Optional[str] = opt(None, "the Full-Duplex-Bench v1.0 release: <subset>/<id>/input.wav and "
                                       "annotations (or export.roots=)")
    outputs: Optional[str] = opt(None, "the system's <subset>/<id>/output.wav files; null: beside the inputs")
    out: str = opt(MISSING, "the new reference tree (must not exist)")
    export: ExportOptions = group(ExportOptions, "how outputs become a tree")

    def __post_init__(self):
        super().__post_init__()
        _check((self.dataset is None) != (self.export.roots is None), "dataset", self.dataset,
               "give the release as dataset=DIR or the per-task folders as export.roots={subset: DIR}, one of them")


@dataclass
class AsrOptions:
    model: Optional[str] = opt(None, "a model by name, loaded with NeMo's from_pretrained from the Hugging Face "
                                     "cache (downloaded once if missing; never with HF_HUB_OFFLINE=1); null: "
                                     "nvidia/parakeet-tdt-0.6b-v2 unless asr.checkpoint is given, which it then names")
    checkpoint: Optional[str] = opt(None, "a local .nemo file instead (never downloaded)")
    sha256: Optional[str] = opt(None, "the model file's SHA-256; a mismatch stops before any transcription")
    batch_size: int = opt(ASR_BATCH_SIZE, "files per NeMo call, 1 to 4096 (memory: max_batch_seconds bounds the audio per call)")
    max_batch_seconds: float = opt(ASR_MAX_BATCH_SECONDS, "audio seconds per NeMo call, > 0 and at most a day")
    verify: Any = opt("auto", "sentinel: files decoded both ways, batched and alone (auto: 2-10 from 50 files)")
    resume: bool = opt(False, "continue or redo a run; transcripts equal to their cached inputs are kept")
    cache: bool = opt(True, "keep transcripts on disk (keyed by audio, checkpoint and cut): <cache_dir>/asr")
    verbose: bool = opt(False, "show NeMo's own log lines")
    require_shards: bool = opt(False, "assembling after sharded runs: refuse, naming the missing shard, instead of "
                                      "transcribing what no shard's cache holds")

    def __post_init__(self):
        within(self, "asr.", batch_size=(lambda v: 1 <= v <= MAX_BATCH, f"a number from 1 to {MAX_BATCH}"),
               max_batch_seconds=DAY)
        _check(self.verify == "auto" or (type(self.verify) is int and 0 <= self.verify <= MAX_BATCH), "asr.verify",
               self.verify, f"auto or a number of files from 0 to {MAX_BATCH}")


@registry.config("asr")
@dataclass
class AsrConfig(Sharded):
    asr: AsrOptions = group(AsrOptions, "Parakeet through NeMo")

    def __post_init__(self):
        super().__post_init__()
        _check(not self.sharded or self.asr.cache, "asr.cache", self.asr.cache,
               "a sharded run fills the transcript cache: asr.cache must be true")


@registry.config("vad")
@dataclass
class VadStageConfig(Sharded):
    """`fdbu vad`: speech probabilities into the cache (for score and sweep to assemble from)."""

    REFUSED: ClassVar[tuple] = ("vad.cache",)
    vad: VadConfig = group(VadConfig, "speech detection; its settings choose which files the guard recomputes")
    for_sweep: bool = opt(False, "also guard every point of the sweep grid (sweep.*), so a sweep assembles too")
    sweep: GridConfig = group(GridConfig, "the sweep grid (with for_sweep=true)")
    views: List[str] = opt([], "also the files these views of score segment (videofdb: the pause outputs), so a score "
                               "with the same views= assembles too")

    def __post_init__(self):
        super().__post_init__()
        _check(self.vad.cache, "vad.cache", self.vad.cache, "fdbu vad fills the probability cache: it must be true")
        _views(self.views)
        if not self.for_sweep:  # the grid is read only for the sweep's points
            grid = GridConfig()
            for f in dataclasses.fields(GridConfig):
                _check(getattr(self.sweep, f.name) == getattr(grid, f.name), f"sweep.{f.name}",
                       getattr(self.sweep, f.name), "the grid is used only with for_sweep=true: add it, or leave "
                       "the grid out")


@registry.config("synth")
@dataclass
class SynthConfig:
    out: str = opt(MISSING, "the new synthetic tree (must not exist)")
    n: Any = opt(5, "samples per subset of the family: a number, 'release' (its release's sizes), or "
                    "{subset: number}")
    family: str = opt(next(iter(tasks.FAMILIES)), f"the Full-Duplex-Bench release whose subsets n counts: "
                      f"{' or '.join(tasks.FAMILIES)} (v1.5: both runs, input.wav with the overlap event and "
                      "clean_input.wav without)")
    seed: int = opt(0, "sample i of a subset depends only on (seed, subset, i); >= 0")
    system: str = opt("mixed", "; ".join(f"{f.name}: {' | '.join(f.systems)}" for f in tasks.FAMILIES.values())
                      + "; or mixed")
    ineligible: float = opt(0.05, "share of samples marked ineligible, in [0, 1)")
    interruption_tail_s: List[float] = opt([4.0, 6.0], "range of T - R for interruption samples, seconds")
    layout: str = opt("tree", "tree: a reference tree; official: the same samples as official per-task folders "
                              "(input.wav, output.wav, annotation, asr.py's output.json), for fdbu export")
    progress: bool = opt(True, "progress bar on stderr")

    def __post_init__(self):
        from .synth.trees import check

        within(self, "", seed=SEED_RANGE)
        check(self.n, self.system, self.ineligible, tuple(self.interruption_tail_s), self.layout, self.family)


@registry.config("calibrate")
@dataclass
class CalibrateConfig(Common):
    # the calibration measures the batched backend against the reference over its own corpus, at once, into
    # cache_dir: only vad.threads (and the device) change what it measures
    UNUSED: ClassVar[dict] = {"backend": "it measures the batched backend against the reference",
                              "cache": "the calibration is always kept under cache_dir; no probability is cached",
                              "verify": "it compares every window of its corpus, no sentinel sample",
                              "batch_seconds": "its corpus is computed at once", "require_shards": "no shard fills it"}
    REFUSED: ClassVar[tuple] = SEGMENT_KEYS + tuple(f"vad.{k}" for k in UNUSED)
    vad: VadConfig = group(VadConfig, "speech detection: threads (the calibration is kept under cache_dir)")

    def __post_init__(self):
        super().__post_init__()
        defaults = VadConfig()
        for key, why in self.UNUSED.items():
            value = getattr(self.vad, key)
            _check(value == getattr(defaults, key), f"vad.{key}", value,
                   f"fdbu calibrate does not use it ({why}): leave it out")
        self.vad.refuse_segment_settings(
            lambda key: "the calibration measures probabilities, which no segment setting changes: leave it out")


class _Configs(Mapping[str, Any]):
    """Each command's config dataclass, read from the registry when asked (a command registered later, a plugin's
    or a test's, is there too)."""

    def __getitem__(self, name: str):
        c = registry.COMMANDS[name]
        if c.config is None:
            raise KeyError(name)
        return grouped(c.config)

    def __iter__(self):
        return (name for name, c in registry.COMMANDS.items() if c.config is not None)

    def __len__(self) -> int:
        return sum(1 for _ in self)


CONFIGS = _Configs()
for _name in CONFIGS:  # the configs with the groups registered at import: a job unpickled elsewhere finds them
    CONFIGS[_name]


def register() -> None:
    """Put every command's config in Hydra's ConfigStore: its schema as `<command>_schema`, and the config Hydra
    composes, `<command>`: the schema, then what every command shares (conf/common.yaml), then the command line."""
    from hydra.core.config_store import ConfigStore

    cs = ConfigStore.instance()
    for name, cls in CONFIGS.items():
        cs.store(name=f"{name}_schema", node=cls)
        cs.store(name=name, node={"defaults": [f"{name}_schema", "common", "_self_"]})
    try:  # the SLURM presets' launcher (hydra/launcher=fdbu_slurm), with the cluster extra
        from hydra_plugins.fdbu_launcher import FdbuSlurmLauncher
    except ImportError:
        return
    from hydra.core.plugins import Plugins

    Plugins.instance().register(FdbuSlurmLauncher)  # an editable install hides it from Hydra's own scan


def build(command: str, values: Dict[str, Any]):
    """The config object for a command from plain values (the Python API): the same types, defaults and checks."""
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    schema = OmegaConf.structured(CONFIGS[command])
    values = one_grammar(command, values)
    large = too_large(flat(values))
    if large:
        raise FdbuError("config", None, large)
    try:
        merged = OmegaConf.merge(schema, values)
        return OmegaConf.to_object(merged)
    except OmegaConfBaseException as e:
        raise FdbuError("config", None, composition_error(e, command)) from None


def _fields(cls, prefix: str = ""):
    """(key path, field) of every setting of a config class, groups walked into."""
    import typing

    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        kind = hints.get(f.name, f.type)
        if dataclasses.is_dataclass(kind):
            yield prefix + f.name, kind
            yield from _fields(kind, f"{prefix}{f.name}.")
        else:
            yield prefix + f.name, kind


def list_keys(command: str) -> List[str]:
    """The keys of `command` whose value is a list (List[...] or Optional[List[...]])."""
    import typing

    def is_list(kind) -> bool:
        if typing.get_origin(kind) in (list, List):
            return True
        return typing.get_origin(kind) is typing.Union and any(is_list(a) for a in typing.get_args(kind))

    return [key for key, kind in _fields(CONFIGS[command]) if is_list(kind)]


def group_keys(command: str) -> List[str]:
    return [key for key, kind in _fields(CONFIGS[command]) if dataclasses.is_dataclass(kind)]


def one_grammar(command: str, values: Dict[str, Any], prefix: str = "") -> Dict[str, Any]:
    """The API's settings read as the CLI reads them: a scalar where a list is expected is a one-element list
    (names="A" is names=["A"]), and a group given anything but a dict is refused in fdbu's words."""
    lists, groups = set(list_keys(command)), set(group_keys(command))
    out = {}
    for key, value in values.items():
        path = prefix + str(key)
        if path in groups and not (isinstance(value, Mapping) or dataclasses.is_dataclass(value)):
            raise FdbuError("config", None, f"{path}={value!r}: a group of settings is a dict of its keys, e.g. "
                            f"{path}={{{_example(command, path)}}}")
        if isinstance(value, Mapping) and path in groups:
            value = one_grammar(command, dict(value), path + ".")
        elif path in lists and isinstance(value, (str, int, float)) and not isinstance(value, bool):
            value = [value]
        out[key] = value
    return out


def _example(command: str, group: str) -> str:
    first = next(k for k, _ in _fields(CONFIGS[command]) if k.startswith(group + ".") and k.count(".") ==
                 group.count(".") + 1)
    return f"{first.rsplit('.', 1)[1]!r}: ..."


def composition_error(e: BaseException, command: str | None = None) -> str:
    """One line for a config Hydra or OmegaConf refused: the key, the value, what is allowed (an unknown key:
    the nearest key of `command`)."""
    cause = e.__cause__ if e.__cause__ is not None else e
    key = getattr(cause, "full_key", None)
    text = str(cause).splitlines()[0] if str(cause) else type(cause).__name__
    if "not in" in text and key:  # an unknown key: suggest the nearest known one
        return f"{key} is not a setting{did_you_mean(key, command)}"
    if text.startswith("LexerNoViableAltException"):  # Hydra's lexer: unquoted newline, tab, non-ASCII letter
        override = getattr(cause, "override", None) or text.partition(": ")[2]
        key, _, value = override.partition("=")
        return one_line(f"cannot read the override {override!r}: quote a value holding spaces, tabs, newlines or "
                        f"non-ASCII letters, e.g. \"{key}='{value}'\" (single quotes inside the argument)")
    if type(cause).__name__ == "MissingMandatoryValue":
        return f"{key or text} is required (e.g. {key}=PATH)"
    return f"{key}: {text}" if key else text


def known_keys(cls, prefix: str = "") -> List[str]:
    out = []
    for f in dataclasses.fields(cls):
        if dataclasses.is_dataclass(f.type) or (isinstance(f.default_factory, type)
                                                and dataclasses.is_dataclass(f.default_factory)):
            out += known_keys(f.default_factory, f"{prefix}{f.name}.")
        else:
            out.append(prefix + f.name)
    return out


def did_you_mean(key: str, command: str | None = None) -> str:
    """The nearest key of the command (of any command when it is not known), never the word typed; a key of
    other commands says so."""
    commands: list[str] = [command] if command is not None and command in CONFIGS else list(CONFIGS)
    keys = sorted({k for c in commands for k in known_keys(CONFIGS[c])} - {key})
    near = difflib.get_close_matches(key, keys, n=1, cutoff=0.6)
    hint = f"; did you mean {near[0]}?" if near else ""
    elsewhere = [c for c in CONFIGS if c not in commands and key in known_keys(CONFIGS[c])]
    if command in CONFIGS and elsewhere:
        hint = f" of {command} (it is one of {', '.join(elsewhere)})" + hint
    return hint


def _type_name(t) -> str:
    import typing

    args = [a for a in typing.get_args(t) if a is not type(None)]
    if typing.get_origin(t) is typing.Union:
        return "|".join(_type_name(a) for a in args) + "|null"
    if args:
        return f"{getattr(typing.get_origin(t), '__name__', 'list')}[{','.join(_type_name(a) for a in args)}]"
    return "any" if t is Any else getattr(t, "__name__", str(t))


def help_text(command: str) -> str:
    """Every key of a command with its type, default and meaning (from the field's `help`)."""
    lines = []

    def walk(cls, prefix):
        import typing

        hints = typing.get_type_hints(cls)  # a group declared beside its settings may annotate in strings
        for f in dataclasses.fields(cls):
            if prefix + f.name in refused:
                continue
            if isinstance(f.default_factory, type) and dataclasses.is_dataclass(f.default_factory):
                lines.append(f"  {prefix}{f.name}.*: {f.metadata.get('help', '')}")
                walk(f.default_factory, f"{prefix}{f.name}.")
                continue
            default = f.default if f.default is not dataclasses.MISSING else (
                f.default_factory() if f.default_factory is not dataclasses.MISSING else "???")
            default = "(required)" if default == MISSING else repr(default)
            kind = _type_name(hints.get(f.name, f.type))
            lines.append(f"  {prefix + f.name:<34} {kind:<16} default {default}")
            if f.metadata.get("help"):
                lines.append(f"  {'':<34} {f.metadata['help']}")

    refused = getattr(CONFIGS[command], "REFUSED", ())
    walk(CONFIGS[command], "")
    if refused:
        lines.append(f"  (every run of fdbu {command} refuses {', '.join(refused)}: not listed)")
    return "\n".join(lines)
