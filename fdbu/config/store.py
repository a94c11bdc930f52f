"""Every command's settings, typed, with their defaults and meaning, validated once, here (with the groups several
commands share, `fdbu.config.base`; a command's keys, its --help and its errors as one line, `fdbu.config.keys`).

The dataclasses are Hydra structured configs (registered in the ConfigStore with the config Hydra
composes for each command, `register`), so a value of the wrong type is refused while Hydra composes the
config, before any work; ranges and combinations are checked in `__post_init__`, which runs
when the CLI turns the composed config into these objects and when the Python API builds
them. Defaults, ranges and derived values are the facts in `fdbu.config.settings` (`SileroSettings`,
the grid, the bootstrap's spec), so the modules below receive checked values and never import
this one; `fdbu COMMAND --help` prints each key with its type, default and the `help` of its field.
"""
import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Dict, List, Optional

from omegaconf import MISSING

from .. import registry, tasks
from ..errors import FdbuError
from ..family import Group
from ..official.rules import shipped_pins
from .base import (DAY, MAX_BATCH, SEED_RANGE, BootstrapConfig, Common, DeviceFree, GridConfig, PairingOptions,
                          SEGMENT_KEYS, Sharded, VadConfig, _names, _systems, _views, group, printable_names)
from .settings import (ALPHA, ASR_BATCH_SIZE, HOLM_FAMILY, ASR_MAX_BATCH_SECONDS, CROP_MAX_MS, FORMATS, LENGTH_POLICIES, PAD_MAX_MS, PAIRS,
                       PARAKEET, TRANSCRIPTS, WIDTH, check as _check, default_names, opt, within)
from ..views import VIEWS


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
    options = tasks.synth_options() if getattr(cls, "OPTIONED", False) else []
    if not command and not options:
        return cls
    gs = groups_of(command) if command else []
    taken = {f.name for f in dataclasses.fields(cls)}
    for i, g in enumerate(gs):
        if g.key in taken or any(g.key == other.key for other in gs[:i]):
            raise ValueError(f"fdbu {command}: the settings group {g.key!r} is taken (by the config's own key or "
                             f"another family's or view's group): give the group another key")
    key = (cls, tuple((g.key, g.config) for g in gs), tuple(o.key for o in options))
    if key not in _GROUPED:
        name = f"{cls.__name__.lstrip('_')}__{'_'.join([g.key for g in gs] + [o.key for o in options])}"
        made = dataclasses.make_dataclass(name, [(g.key, g.config, group(g.config, g.help)) for g in gs]
                                          + [(o.key, o.type, opt(list(o.default), o.help)) for o in options],
                                          bases=(cls,))
        made.__module__, made.__qualname__, made.__doc__ = __name__, name, cls.__doc__
        globals()[name] = _GROUPED[key] = made
    return _GROUPED[key]


@registry.config("score")
@dataclass
class _ScoreConfig(Common, Grouped):
    GROUPED: ClassVar[str] = "score"
    tree: str = opt(MISSING, "the reference tree to score")
    out: Optional[str] = opt(None, "where unified.json and unified-samples.jsonl go (created if missing); "
                                   "null: the tree")
    plot: bool = opt(False, "also write latency-curves.png and .pdf (response-latency curves F(t))")
    width: str = opt(WIDTH, "the figures' printed width: column (3.3 in) or page (7 in); every text >= 7 pt")
    vad: VadConfig = group(VadConfig, "speech detection (Silero VAD)")
    bootstrap: BootstrapConfig = group(BootstrapConfig, "percentile bootstrap of pooled ratios and medians")
    views: List[str] = opt([], f"other benchmarks' timing numbers, in their own section of unified.json: "
                               f"{', '.join(VIEWS)} (docs: Numbers in other benchmarks' terms)")
    # then a group per family's settings (overlap.*) and per view (fdbench.*, ...): `grouped`

    def __post_init__(self):
        super().__post_init__()
        _views(self.views)
        _check(len(set(self.views)) == len(self.views), "views", list(self.views), "each view once")
        for name in VIEWS:  # a view's settings without the view would change nothing: refused, not ignored
            changed = getattr(self, name).settings().non_default() if name not in self.views and hasattr(self, name) \
                else []
            if changed:
                raise FdbuError("config", None, f"{changed[0]}: the {name} view is not computed; add "
                                f"views=[{','.join([*self.views, name])}] for its numbers, or leave its settings out")

    def view_settings(self):  # -> fdbu.scoring.pipeline.Views
        from ..scoring.pipeline import Views

        names = tuple(n for n in VIEWS if n in self.views)
        return Views(names, {n: getattr(self, n).settings() for n in names})


@registry.config("sweep")
@dataclass
class _SweepConfig(Common, Grouped):
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
        printable_names(self.system_names(), given=self.names is not None, trees="tree")
        self.vad.refuse_segment_settings(lambda key: f"a sweep's segment settings are its axes: use sweep.{key}=[...]")

    def trees(self) -> List[str]:
        return list(self.tree) if isinstance(self.tree, (list, tuple)) else [self.tree]

    def system_names(self) -> List[str]:
        return list(self.names) if self.names is not None else default_names(self.trees())


ScoreConfig = grouped(_ScoreConfig)  # with the groups registered at import (CONFIGS["score"]: those registered now)
SweepConfig = grouped(_SweepConfig)


def __getattr__(name: str) -> type:
    """A grouped config by its name (`ScoreConfig__overlap_hold`), made when a family registered after this module's
    import has its group in it: a job pickled where that family was registered unpickles here once it is."""
    base, sep, _ = name.partition("__")
    if sep:
        registry.load_plugins()  # a job unpickled in a fresh worker (joblib's, SLURM's): a plugin's family's group
    for c in registry.COMMANDS.values():
        if sep and c.config is not None and c.config.__name__.lstrip("_") == base:
            made = grouped(c.config)
            if made.__name__ == name:
                return made
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass
class CompareOptions(PairingOptions):
    pairs: str = opt(PAIRS[0], "baseline: each system against the baseline; all: every pair of systems")

    def __post_init__(self):
        super().__post_init__()
        _check(self.pairs in PAIRS, "compare.pairs", self.pairs, "choose baseline or all")


@dataclass
class Systems:
    """What compare and report share: the scored trees, their names, the baseline, the figures and the bars."""

    trees: List[str] = opt(MISSING, "the scored trees (unified.json + unified-samples.jsonl): trees=[runs/A,runs/B] "
                                        "(compare: two or more; report: one or more)")
    names: Optional[List[str]] = opt(None, "a name per tree for tables and figures; null: the trees' folder names")
    baseline: Optional[str] = opt(None, "the name every system is compared against, a in each of its pairs; null: "
                                        "the first tree's (one tree: no pairs)")
    plot: bool = opt(True, "write the figures (PNG and PDF; the report's site shows them)")
    width: str = opt(WIDTH, "the figures' printed width: column (3.3 in) or page (7 in); every text >= 7 pt")
    progress: bool = opt(True, "progress bars on stderr (the paired bootstraps, the figures; the report's drill-downs)")

    def system_names(self) -> List[str]:
        return list(self.names) if self.names is not None else default_names(list(self.trees))


@registry.config("compare")
@dataclass
class CompareConfig(Systems):
    out: Optional[str] = opt(None, "where compare.json, compare.csv and the figures go (created if missing); "
                                   "null: print the leaderboard only")
    compare: CompareOptions = group(CompareOptions, "how systems are paired")

    def __post_init__(self):
        _systems(self, 2)


@dataclass
class ReportOptions(PairingOptions):
    GROUP: ClassVar[str] = "report"
    alpha: Optional[float] = opt(None, "the marker's level (a line is marked when its Holm-adjusted p is below it); "
                                       "null: report.compare's, or 0.05 when compared here")  # type: ignore[assignment]
    family: Optional[str] = opt(None, "which marks hold alpha together (compare.family): subset, pair or "
                                      "leaderboard; null: report.compare's, or subset when compared here")  # type: ignore[assignment]
    format: Any = opt(["html", "md", "tex", "csv"], "what to write: html (index.html, samples-K-C.js, figures), md, "
                                                     "tex (booktabs), csv (the leaderboard); one or a list")
    compare: Optional[str] = opt(None, "a folder with compare.json of these trees (fdbu compare out=...); null: "
                                       "compared here, compare.json written beside the site")

    def __post_init__(self):
        if self.alpha is not None:
            super().__post_init__()
        else:
            self.check_family()
        fmts = self.formats()
        _check(bool(fmts) and all(f in FORMATS for f in fmts) and len(set(fmts)) == len(fmts), "report.format",
               self.format, f"one or a list of {', '.join(FORMATS)}")

    def formats(self) -> List[str]:
        return [self.format] if isinstance(self.format, str) else list(self.format)

    def level(self) -> float:
        return ALPHA if self.alpha is None else self.alpha

    def check_family(self) -> None:
        if self.family is not None:
            super().check_family()

    def holm_family(self) -> str:
        return HOLM_FAMILY if self.family is None else self.family


@registry.config("report")
@dataclass
class ReportConfig(Systems):
    out: str = opt(MISSING, "the report folder (created if missing); open its index.html in a browser")
    report: ReportOptions = group(ReportOptions, "what the report holds")

    def __post_init__(self):
        _systems(self, 1)


MODEL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@+-]*(/[A-Za-z0-9][A-Za-z0-9._:@+-]*)?")


@dataclass
class JudgeConfig:
    base_url: Optional[str] = opt(None, "the judge's endpoint: OpenAI-compatible (v1.0, v1.5), or Gemini's API root "
                                        "(v2: https://generativelanguage.googleapis.com); null: no judge runs (v1.0's "
                                        "rating stays pending)")
    model: Optional[str] = opt(None, "the judge model")
    api_key_env: str = opt("OPENAI_API_KEY", "the environment variable holding the API key")
    max_attempts: int = opt(3, "requests per takeover before the rating is recorded as failed, >= 1")
    timeout_s: float = opt(60.0, "seconds per request, > 0")
    staged_files: Optional[List[str]] = opt(None, "v2's judge: the tasks' staged goals (eval_single_item.py "
                                                  "--staged-files); null: the checkout's prompts_staged_200.json")
    workers: int = opt(1, "v2's judge: sessions judged at once, 1 to 64 (each its own eval_single_item.py "
                          "process); 1: one after another, as upstream's run_evaluation.sh")

    def __post_init__(self):
        within(self, "evaluate.judge.", max_attempts=(lambda v: 1 <= v <= 100, "a number from 1 to 100"),
               timeout_s=DAY, workers=(lambda v: 1 <= v <= 64, "a number from 1 to 64"))
        # a name, not a path or a query: v2's script puts it into the request's URL (eval_single_item.py's
        # f"{base}/{api_version}/models/{model}:generateContent"), with the key in a header
        _check(self.model is None or (MODEL_NAME.fullmatch(self.model) is not None and ".." not in self.model),
               "evaluate.judge.model", self.model, "a model's name: letters, digits, '.', '_', '-', ':', '@' and '+', "
               "with at most one '/' (an organisation's prefix), no '..'")


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
    judge: JudgeConfig = group(JudgeConfig, "the LLM judge: v1.0's interruption rating, v1.5's behaviour tags, "
                                            "v2's Gemini judge (eval_single_item.py)")

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
    REFUSED: ClassVar[tuple] = ("device", "progress")
    CACHES: ClassVar[bool] = True  # v1.5's get_timing.py lists: Silero's probabilities, as score keeps them
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
    judge: Optional[str] = opt(None, "a run layout's judge outputs, one file per session (Full-Duplex-Bench v2's "
                                     "eval_results: <split>/<task id>_processed.json), checked and copied beside it; "
                                     "or the summary.json of a judge fdbu evaluate ran, holding its answers")

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
                                     f"{PARAKEET} unless asr.checkpoint is given, which it then names")
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
    OPTIONED: ClassVar[bool] = True  # a field per release's setting of synth (fdbu.family.SynthOption), by `grouped`
    out: str = opt(MISSING, "the new synthetic tree (must not exist)")
    n: Any = opt(5, "samples per subset of the family: a number, 'release' (its release's sizes), or "
                    "{subset: number}")
    family: str = opt(next(iter(tasks.FAMILIES)), f"the Full-Duplex-Bench release whose subsets n counts: "
                      f"{' or '.join(tasks.FAMILIES)} (v1.5: both runs, input.wav with the overlap event and "
                      "clean_input.wav without; v2: sessions, the examiner's channel as input.wav)")
    seed: int = opt(0, "sample i of a subset depends only on (seed, subset, i); >= 0")
    system: str = opt("mixed", "; ".join(f"{f.name}: {' | '.join(f.systems)}" for f in tasks.FAMILIES.values())
                      + "; or mixed")
    ineligible: float = opt(0.05, "share of samples marked ineligible, in [0, 1)")
    layout: str = opt("tree", "tree: a reference tree; official: the same samples as official per-task folders "
                              "(input.wav, output.wav, annotation, asr.py's output.json), for fdbu export")
    progress: bool = opt(True, "progress bar on stderr")

    def __post_init__(self):
        from ..synth.trees import check

        within(self, "", seed=SEED_RANGE)
        check(self.n, self.system, self.ineligible, self.synth_options(), self.layout, self.family)

    def synth_options(self) -> Dict[str, Any]:
        """The releases' settings of synth (its `options`), by key: those of the releases registered now."""
        return {o.key: list(getattr(self, o.key)) for o in tasks.synth_options() if hasattr(self, o.key)}


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


_STORED: Dict[str, Any] = {}  # the ConfigStore the configs were last stored in, and those configs


def register() -> None:
    """Put every command's config in Hydra's ConfigStore: its schema as `<command>_schema`, and the config Hydra
    composes, `<command>`: the schema, then what every command shares (conf/common.yaml), then the command line."""
    from hydra.core.config_store import ConfigStore

    cs = ConfigStore.instance()
    stored = dict(CONFIGS.items())
    if not (_STORED.get("store") is cs and _STORED.get("configs") == stored and
            all(f"{name}{part}.yaml" in cs.repo for name in stored for part in ("_schema", ""))):
        # stored once for each set of configs and store (a caller running commands in this process stores them once;
        # Hydra copies what it loads, so what is stored stays as stored)
        for name, cls in stored.items():
            cs.store(name=f"{name}_schema", node=cls)
            cs.store(name=name, node={"defaults": [f"{name}_schema", "common", "_self_"]})
        _STORED.update(store=cs, configs=stored)
    try:  # the SLURM presets' launcher (hydra/launcher=fdbu_slurm), with the cluster extra
        from hydra_plugins.fdbu_launcher import FdbuSlurmLauncher
    except ImportError:
        return
    from hydra.core.plugins import Plugins

    Plugins.instance().register(FdbuSlurmLauncher)  # an editable install hides it from Hydra's own scan
