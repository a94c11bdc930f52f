"""A task family's contract: a release of the benchmark (v1.0, v1.5, ...) and what its subsets bring beyond a task's
metric table.

A `Family` is registered in the task registry (`fdbu.tasks.FAMILIES`, `tasks.register_family`) beside its tasks
(`Task.family` names it). The general modules (the pipeline, the sweep, score's files and console, the scored
reader, the report, the API, the configs, synth) call its hooks and never name a family:

- `settings`: its own settings group (`Group`): a config group of score and sweep (`overlap.within_s=...`),
  recorded in unified.json's header under the group's key and passed to its tasks' `components`;
- `entries`: what each of its subsets' entries in unified.json holds beyond `metrics` (`Entry`: v1.5's matched
  `control`), made by its metric module's `aggregate` (its `extra[key]`), read back and checked, printed by score,
  shown as rows in the report's subset table, and a DataFrame of the API; `compare` compares two systems' entries
  where the entry says how (`Compared`: v1.5's controls, which system stops because of the overlap more often);
- `figures`: one system's figures (`Figure`: F(t) panels with their bands, as the latency curves are drawn);
- `definitions`: the name of its definitions, added to unified.json's `definitions` when a tree holds its subsets;
- `systems`: the synthetic systems `fdbu synth` builds its samples for; `judges`: the LLM judges its official rules
  ask; `files`: what tells one of its official sample folders from another release's;
- `layout`: a run layout of its own (`Layout`: v2's output root), named by fdbu.tree.layout and exported by its reader.

A release declares its `Task`s (a kind of sample), its `Subset`s (a task's split with its release size) and its
`Family` in its folder (fdbu.families.<release>), with `Official` (how its reference column is made) and `Ref` (a
function named by module, imported when first called). The module imports nothing of fdbu but the metric
protocol's leaf (fdbu.metrics.base): the registry, the configs, the readers and every release read it.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Protocol, cast

from .metrics.base import MetricModule, Swept


class Settings(Protocol):
    """A group's settings as the code uses them (a frozen dataclass): what unified.json records of them, and which
    differ from the defaults (`<group>.<key>=<value>`, as the signature's non_default lists them)."""

    def header(self) -> dict: ...

    def non_default(self) -> list[str]: ...


@dataclass(frozen=True)
class Group:
    """A settings group of its own: `key.*` on the command line (score, sweep), `key` in unified.json's header."""

    key: str                                # the group's key: overlap.within_s=..., unified.json's "overlap"
    help: str                               # --help's line for the group
    config: type                            # its dataclass (Hydra's schema: keys, defaults, help, checks) whose
    #                                         `settings()` gives the `Settings`
    of: Callable[[dict | None], Any]        # the Settings from the header recorded under `key` (None: defaults)
    commands: tuple[str, ...] = ("score", "sweep")  # the commands taking it

    @property
    def default(self) -> Any:
        return self.config().settings()


class CompareEntries(Protocol):
    """`Compared.compare`: (rows of a, rows of b: eligible in both, in one order; the subset, unified.json, the
    bootstrap, alpha) -> the section: samples, note, warnings, metrics (lines as compare's: a, b, difference, p, ...)."""

    def __call__(self, rows_a: list[dict], rows_b: list[dict], subset: str, unified: dict, boot: Any,
                 alpha: float) -> dict: ...


class LayoutWhat(Protocol):
    """`Layout.what`: the folder in a few words, or None where it is not of this layout."""

    def __call__(self, folder: Path) -> str | None: ...


class LayoutHint(Protocol):
    """`Layout.hint`: the export that reads the folder, as a command."""

    def __call__(self, folder: Path) -> str: ...


class LayoutExport(Protocol):
    """`Layout.export`: the folder (an output root, one split, one session) into a tree at `out`, all or nothing."""

    def __call__(self, root: Path, out: Path, *, judge: Path | None = ..., transcripts: str = ..., model: str = ...,
                 only: list[str] | None = ..., progress: bool = ...) -> Path: ...


class LayoutSynth(Protocol):
    """`Layout.synth` (fdbu synth layout=official): one synthetic run written as upstream leaves it (the root, the
    subset, the sample's index, its capture, annotation, transcript, what the generator intended, the other
    captures) -> the sample id its export gives."""

    def __call__(self, root: Path, subset: str, index: int, cap: Any, annotation: dict, transcript: dict,
                 intended: dict, more: dict) -> str: ...


class LayoutSaid(Protocol):
    """`Layout.said`: the lines fdbu export's console adds about the tree it wrote."""

    def __call__(self, tree: Path) -> list[str]: ...


@dataclass(frozen=True)
class SynthOption:
    """A setting of `fdbu synth` that one release's generators read: `key=` on synth's command line (a field of its
    config, with `default`, `type` and `help`), handed to every generator as `name=` (each takes the options it knows
    and leaves the others: `**_`)."""

    key: str                                # interruption_tail_s=[4,6]
    name: str                               # the generator's keyword: tail=
    default: Any                            # a list, as Hydra holds it
    type: Any                               # the field's type (Hydra checks the values' kind)
    help: str
    check: Callable[[Any], str | None]      # the value -> what a valid one is, where it is not (None: valid)


@dataclass(frozen=True)
class Compared:
    """How `fdbu compare` compares two systems' entries (v1.5: their matched controls): the lines it adds to a subset
    (in the subset's Holm family), declared for compare.json's reader, and the function that computes them."""

    lines: Callable[[str, dict | None], tuple]  # (subset, unified.json) -> the lines' declarations, in order: each
    #                                             with name, kind, better, headline
    compare: CompareEntries                     # two systems' entries compared (the protocol says how)
    legend: str = ""                            # what compare's console legend adds where the section is shown
    console: Callable[[str], str] = lambda name: name  # a line's name as the console's 80 columns fit it


@dataclass(frozen=True)
class Entry:
    """A key of each subset's entry in unified.json beyond `metrics`, holding named *lines*: paired differences in
    compare's form (`difference` {value, value_flag, interval, interval_flags}, `p`, `p_holm`, `marker`,
    `reason`)."""

    key: str                                          # the entry's key (and of the metric module's `extra`)
    lines: Callable[[dict], dict[str, dict]]          # the entry -> its lines by name, in order
    better: Callable[[str, dict | None], dict[str, str]]  # (subset, unified.json) -> each line's direction
    label: Callable[[str], str]                       # a line's label in the report
    check: Callable[[Any, dict, str, dict], None]     # (fdbu.scoring.scored's reader, subset entry, its path, unified.json):
    #                                                   refuses what fdbu does not write, naming the key
    console: Callable[[dict], list[str]]              # score's printed lines for it, under the subset's table
    count: Callable[[dict], int]                      # the samples its lines are over (the report's n)
    columns: dict[str, str] = field(default_factory=dict)  # the API's columns beside each line's (name -> kind)
    row: Callable[[dict, dict], dict] = lambda entry, line: {}  # (entry, line) -> those columns' values
    sweep: dict[str, str] = field(default_factory=dict)  # the lines a sweep keeps at each point -> console labels
    compared: Compared | None = None  # two systems' entries compared by `fdbu compare` (None: shown per system only)
    kind: str = "paired_difference"  # what its lines hold, as the report's leaderboard.csv names it (`kind`)


@dataclass(frozen=True)
class Figure:
    """One system's figure `<stem>.png` and `.pdf`: F(t) panels with their pointwise bands, drawn as the latency
    curves are (fdbu.figures.plot.compare_latency_curves)."""

    stem: str
    curves: Callable[[list[dict], dict], tuple[list[dict], dict]]  # (rows, unified.json) -> (the panels' curves,
    #                                                                 the figure's words: title, axis, marks)

    @property
    def files(self) -> tuple[str, str]:
        return (f"{self.stem}.png", f"{self.stem}.pdf")


@dataclass(frozen=True)
class Layout:
    """A family whose runs are laid out their own way, not as v1's `<subset>/<id>/` sample folders (v2: an output root
    of `<split>/<task id>/A.wav, B.wav`): what a folder of it is (fdbu.tree.layout names it, so every wrong folder gets
    the command that works), that command, and the export `fdbu export dataset=FOLDER` hands it to."""

    # each hook typed by its protocol above; a release that names them by `Ref` (loaded when first called) binds
    # the functions to the protocols under TYPE_CHECKING, so mypy checks them too (fdbu/families/v2/__init__.py)
    what: LayoutWhat
    hint: LayoutHint
    export: LayoutExport
    synth: LayoutSynth | None = None
    said: LayoutSaid | None = None  # v2: the sessions export.judge has no answer for


@dataclass(frozen=True, kw_only=True)
class Family:
    name: str                                  # "v1.0": synth's family=, Task.family
    systems: tuple[str, ...]                   # the synthetic systems (fdbu synth system=), system=mixed's draw
    judges: tuple[str, ...] = ()               # the judges its official rules ask (fdbu.official.judge: "interruption",
    #                                            "behaviour"), whose prompts fdbu evaluate loads with a judge
    files: tuple[str, ...] = ()                # the files beside input.wav that mark one of its sample folders
    #                                            (v1.5: clean_input.wav, metadata.json), for export and the layout
    definitions: str | None = None             # added to unified.json's definitions ("+<name>") with its subsets
    settings: Group | None = None
    entries: tuple[Entry, ...] = ()
    figures: tuple[Figure, ...] = ()
    layout: Layout | None = None               # its own run layout, exported by its own reader
    subsets: tuple[Subset, ...] = ()           # its subsets, in the report's order, registered with it
    synth_options: tuple[SynthOption, ...] = ()  # fdbu synth's settings its generators read
    judge_scripts: Any = None                  # a judge run as upstream runs it, by its own scripts (v2: Gemini):
    #                                            (checkout, pins, allow_unpinned, evaluate.judge) -> the loaded files,
    #                                            which its official rule runs (fdbu evaluate, with a judge given)


@dataclass(frozen=True)
class Ref:
    """A function by module and name, imported when first called: the registry names the official
    rule and the generator without importing fdbu.official.evaluate (Silero, torch) or fdbu.synth."""

    module: str
    name: str

    def __call__(self, *args, **kwargs):
        return getattr(importlib.import_module(self.module), self.name)(*args, **kwargs)


@dataclass(frozen=True)
class Official:
    """The official evaluation script of a task, and how fdbu reproduces and runs it."""

    script: str              # file name in the Full-Duplex-Bench evaluation folder
    labels: dict             # printed label -> summary key, as the script prints its [Result] block
    runner: str | None       # None: `python SCRIPT --root_dir`; else the fdbu.official.child function that runs it
    rule: Ref | None = None  # (tree, subset, fdbu.official.evaluate.Context) -> the reference column (fdbu.official.evaluate)
    printed_digits: int | None = None  # the script prints rounded numbers (f"{x:.4f}"), else repr floats
    via_evaluate: bool = True  # upstream's evaluate.py runs it (`--task` named by the script: eval_<task>.py)
    also: tuple[str, ...] = ()  # the other official files its run uses (v2: score_time.py beside score.py)
    run: Ref | None = None  # evaluate.run_official's own run of the scripts: (tree, subset, {file: path}, a temporary
    #                         folder, fdbu's reference column of the subset) -> the run's record (fdbu.official.runner)


@dataclass(frozen=True, kw_only=True)
class Task:
    """A kind of sample, built by keyword; every stage reads its fields, none branches on its name."""

    name: str
    annotation: str | None                # the dataset annotation copied into each sample folder
    read: Callable | None                 # (bytes, where, T_us) -> Sample fields (readers.py)
    metrics: MetricModule | None          # the metric module (fdbu.metrics.base.MetricModule); None: no unified metric
    reference: str | None                 # the Sample field latencies count from ("E_us", "R_us")
    speech_detection: bool                # Silero on the whole output.wav
    asr_task: str = "default"             # asr.json's task: "default", or the cut one
    asr_cut: Callable | None = None       # (annotation bytes, where, T_us) -> seconds the ASR stage cuts at
    label: str                            # for plots and tables
    latency: str | None = None            # the metric whose F(t) the latency curves draw (its `over`: the samples)
    latency_from: str | None = None       # the curves' x axis, in words
    official: Official | None = None      # the official script giving its reference column (None: none)
    generator: Ref | Callable | None = None  # (rng, system, tail=, **Subset.synth) -> a synthetic sample
    family: str = "v1.0"                  # the release the task belongs to (FAMILIES: its Family's name)
    audio: tuple[str, ...] = ()           # the sample's other audio files, beside output.wav (v1.5: the inputs and
    #                                       the clean run), each hashed in manifest.json
    transcribed: tuple[str, ...] = ("output.wav",)  # the files the ASR stage transcribes (each X.wav into X.json)
    runs: tuple[tuple[str, str], ...] = (("output.wav", "input.wav"),)  # each output of the system and the input it
    #                                       answers (whose length it must have); v1.5 adds the clean run
    unscored: str | None = None           # a task without unified metrics: why, as fdbu score says it
    detected: tuple[str, ...] = ("output.wav",)  # the runs Silero segments (speech_detection): v1.5 adds the clean run
    # a file the ASR stage writes from a sample's transcripts once all are written: (its name, {X.json: bytes} ->
    # bytes); v2: transcripts.json, as upstream's eval/asr_batch.py combines A.json and B.json
    combined: tuple[str, Ref] | None = None

    @property
    def scored(self) -> bool:
        return self.metrics is not None

    @property
    def metric_module(self) -> MetricModule:
        """`metrics`, for callers that only reach scored tasks (typed without the None)."""
        return cast(MetricModule, self.metrics)

    @property
    def swept(self) -> Swept:
        """What fdbu sweep shows of it: its metric module's SWEEP (every task with speech detection has one)."""
        return cast(Swept, cast(Any, self.metrics).SWEEP)


@dataclass(frozen=True)
class Subset:
    name: str
    task: Task
    release_size: int                                  # the declared size in its release (the task's family)
    synth: dict = field(default_factory=dict, hash=False)  # options of the task's generator (fdbu.synth)

    @property
    def family(self) -> str:
        return self.task.family
