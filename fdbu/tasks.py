"""The task registry: one entry per Full-Duplex-Bench subset (v1.0's five, v1.5's four), and the families they
belong to, read by every stage.

A `Task` says everything a stage needs to know about a kind of sample: its annotation file and
reader, its metric module (per-sample components, rows, the declared metric table), the
reference time its latencies count from, whether it needs speech detection, how the ASR stage
cuts its audio, which official script gives its reference column, and which synthetic
generator builds it. A `Subset` names a task, its declared release size and its generator's
options. The tree reader, scorer, ASR stage, official rules, plots, sweep and synth all read
this table; adding a subset of an existing task is one `register` call, and a new task is one
`Task` (by keyword) whose fields reach its new code (reader, metric module, official rule, generator);
`register` takes a subset of a new task too (tests/made_up_task.py). A family (`fdbu.family.Family`: a release,
with what its subsets bring beyond a metric table: a settings group, extra entries, figures) is one
`register_family` call (tests/made_up_family.py); v1.0 and v1.5 are registered here the same way.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Callable, cast

from . import readers, registry
from .family import Family, Figure, Layout
from .metrics import control, control_pairs, interruption, overlap, pause, session, session_hooks, turn_taking
from .metrics.base import MetricModule, Swept
from .official import (BACKCHANNEL_SCRIPT, INTERRUPTION_SCRIPT, JUDGE_SCORE_SCRIPT, JUDGE_TIME_SCRIPT, PAUSE_SCRIPT, TIMING_SCRIPT,
                       TURN_SCRIPT)
from .version import V15_DEFINITIONS, V2_DEFINITIONS


@dataclass(frozen=True)
class Ref:
    """A function by module and name, imported when first called: the registry names the official
    rule and the generator without importing fdbu.evaluate (Silero, torch) or fdbu.synth."""

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
    rule: Ref | None = None  # (tree, subset, fdbu.evaluate.Context) -> the reference column (fdbu.evaluate)
    printed_digits: int | None = None  # the script prints rounded numbers (f"{x:.4f}"), else repr floats
    via_evaluate: bool = True  # upstream's evaluate.py runs it (`--task` named by the script: eval_<task>.py)
    also: tuple[str, ...] = ()  # the other official files its run uses (v2: score_time.py beside score.py)
    run: Ref | None = None  # evaluate.run_official's own run of the scripts: (tree, subset, {file: path}, a temporary
    #                         folder, fdbu's reference column of the subset) -> the run's record (fdbu.run_official)


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


EVALUATE, SYNTH = "fdbu.evaluate", "fdbu.synth.samples"
PAUSE_HANDLING = Task(
    name="pause_handling", annotation="pause.json", read=readers.read_pauses, metrics=pause, reference=None,
    speech_detection=False, asr_task="default", asr_cut=None, label="pause handling",
    official=Official(PAUSE_SCRIPT, {"Average take turn": "take_turn_rate"}, None,
                      rule=Ref(EVALUATE, "pause_rule")),
    generator=Ref(SYNTH, "pause_sample"))
TURN_TAKING = Task(
    name="turn_taking", annotation="turn_taking.json", read=readers.read_turn_end, metrics=turn_taking,
    reference="E_us", speech_detection=False, asr_task="default", asr_cut=None, label="turn-taking (from E)",
    latency="response_latency_s", latency_from="seconds after the user's turn ends (E)",
    official=Official(TURN_SCRIPT, {"Average take turn": "take_turn_rate",
                                                      "Average latency": "latency_s"}, None,
                      rule=Ref(EVALUATE, "turn_taking_rule")),
    generator=Ref(SYNTH, "turn_taking_sample"))
USER_INTERRUPTION = Task(
    name="user_interruption", annotation="interrupt.json", read=readers.read_interruption, metrics=interruption,
    reference="R_us", speech_detection=True, asr_task="user_interruption", asr_cut=readers.interruption_cut_s,
    label="interruption (from R)", latency="response_latency_s",
    latency_from="seconds after the user's interruption ends (R)",
    official=Official(INTERRUPTION_SCRIPT, {"Average rating": "rating", "Average take turn": "take_turn_rate",
                                                    "Average latency": "latency_s"}, "interruption",
                      rule=Ref(EVALUATE, "interruption_rule")),
    generator=Ref(SYNTH, "interruption_sample"))
BACKCHANNEL = Task(
    name="backchannel", annotation=None, read=None, metrics=None, reference=None, speech_detection=False,
    asr_task="default", asr_cut=None, label="backchannel",
    unscored="the spec defines no unified metric for it; fdbu evaluate gives its official numbers",
    official=Official(BACKCHANNEL_SCRIPT, {"JSD": "jsd", "TOR": "take_turn_rate", "Frequency": "frequency_per_s"},
                      "backchannel", printed_digits=4, rule=Ref(EVALUATE, "backchannel_rule")),
    generator=Ref(SYNTH, "backchannel_sample"))
# Full-Duplex-Bench v1.5 (upstream v1_v1.5/dataset/README.md): each sample holds input.wav with an overlap event,
# clean_input.wav without it, metadata.json (the event's window in input.wav), and the system's two runs,
# output.wav and clean_output.wav; Silero segments both (the matched control, fdbu.metrics.overlap), and the
# reference column is get_timing.py's latency_intervals.json per sample.
OVERLAP = Task(
    name=overlap.TASK, family="v1.5", annotation="metadata.json", read=readers.read_event, metrics=overlap,
    reference=None, speech_detection=True, asr_task="default", asr_cut=None, label="overlap (v1.5, from o_s)",
    latency=None, latency_from="seconds after the overlap event begins (o_s)",  # its curves: overlap.stop_curves
    official=Official(TIMING_SCRIPT, {}, "timing", rule=Ref(EVALUATE, "overlap_rule"), via_evaluate=False),
    generator=Ref(SYNTH, "overlap_sample"),
    audio=("input.wav", "clean_input.wav", "clean_output.wav"),
    runs=(("output.wav", "input.wav"), ("clean_output.wav", "clean_input.wav")),
    transcribed=("output.wav", "clean_output.wav", "input.wav", "clean_input.wav"),
    detected=("output.wav", "clean_output.wav"))
V2_RUNS = "fdbu.upstream_v2"  # v2's run layout: an output root of <split>/<task id>/A.wav, B.wav (and the judge's)
V2_EVALUATE = "fdbu.upstream_v2_evaluate"  # its reference column: the judge's answers, run and rule, the official run
V2_FILES = "fdbu.upstream_v2_files"  # the files upstream's eval scripts write: the judge's answers, transcripts.json
# Full-Duplex-Bench v2 (upstream v2/README.md): a multi-turn session between an automated examiner (A.wav, here
# input.wav) and the system (B.wav, here output.wav) on one clock; Silero segments both channels
# (fdbu.metrics.session), and the reference column is the judge's scores as scoring/score.py averages them.
SESSION = Task(
    name=session_hooks.TASK, family="v2", annotation="session.json", read=readers.read_session, metrics=session,
    reference=None, speech_detection=True, asr_task="default", asr_cut=None, label="session (v2)",
    official=Official(JUDGE_SCORE_SCRIPT, {}, "judge_scores", rule=Ref(V2_EVALUATE, "judge_rule"), via_evaluate=False,
                      also=(JUDGE_TIME_SCRIPT,), run=Ref(V2_EVALUATE, "official_run")),
    generator=Ref(SYNTH, "session_sample"), audio=("input.wav",), transcribed=("output.wav", "input.wav"),
    detected=("output.wav", "input.wav"), combined=("transcripts.json", Ref(V2_FILES, "transcripts_of")))
TASKS = {t.name: t for t in (PAUSE_HANDLING, TURN_TAKING, USER_INTERRUPTION, BACKCHANNEL, OVERLAP, SESSION)}

# the releases, in order (a tree's families are listed in it); v1.5's subsets carry the matched control (its
# settings group overlap.*, its `control` entries) and draw its stop curves
V10 = Family(name="v1.0", systems=("prompt", "slow", "overlap", "never_stops", "silent"), judges=("interruption",))
V15 = Family(name="v1.5", systems=("yields", "yields_late", "talks_through", "same_stop", "clean_silent"),
             judges=("behaviour",), files=("clean_input.wav", "metadata.json"),
             definitions=V15_DEFINITIONS, settings=control.GROUP, entries=(control_pairs.ENTRY,),
             figures=(Figure("stop-curves", overlap.stop_curves),))
V2 = Family(name="v2", systems=("attentive", "hesitant", "eager", "unyielding", "mute"),
            judge_scripts=Ref(V2_EVALUATE, "load_session_judge"),
            definitions=V2_DEFINITIONS, settings=session_hooks.GROUP,
            entries=(session_hooks.JUDGE_ENTRY, session_hooks.OFFSET_ENTRY, session_hooks.BINS_ENTRY),
            layout=Layout(Ref(V2_RUNS, "what"), Ref(V2_RUNS, "export_hint"), Ref(V2_RUNS, "export"),
                          Ref(V2_RUNS, "write_synthetic"), Ref(V2_RUNS, "export_said")))
FAMILIES: dict[str, Family] = {}
BUILT_IN = frozenset(TASKS)

# the report's order
SUBSETS: dict[str, Subset] = {s.name: s for s in (
    Subset("synthetic_pause_handling", PAUSE_HANDLING, 137),
    Subset("candor_pause_handling", PAUSE_HANDLING, 216, {"candor": True}),
    Subset("candor_turn_taking", TURN_TAKING, 119),
    Subset("synthetic_user_interruption", USER_INTERRUPTION, 200),
    Subset("icc_backchannel", BACKCHANNEL, 55),
    # v1.5, after v1.0 (synth seeds each subset by its place here: v1.0's samples do not move)
    Subset("user_interruption", OVERLAP, 200, {"event": "interruption"}),
    Subset("user_backchannel", OVERLAP, 99, {"event": "backchannel"}),
    Subset("talking_to_other", OVERLAP, 100, {"event": "talking_to_other"}),
    Subset("background_speech", OVERLAP, 100, {"event": "background_speech"}),
    # v2: one subset per upstream split (its name in session.json), 50 tasks each (prompts_staged_200.json)
    Subset("v2_daily", SESSION, 50, {"split": "Daily"}),
    Subset("v2_correction", SESSION, 50, {"split": "Correction"}),
    Subset("v2_entity_tracking", SESSION, 50, {"split": "EntityTracking"}),
    Subset("v2_safety", SESSION, 50, {"split": "Safety"}),
)}


def subset(name: str) -> Subset:
    return SUBSETS[name]


def metric_table(name: str, unified: dict | None = None) -> tuple:
    """The metric table of subset `name`: its module's `table(subset, unified)` where what is better depends on the
    subset and its metrics on the settings `unified` (a unified.json or sweep.json) was scored with (v1.5), else
    its `METRICS`."""
    module = SUBSETS[name].task.metric_module
    return module.table(name, unified) if hasattr(module, "table") else module.METRICS


def scored() -> list[str]:
    """The subsets with unified metrics, in the report's order."""
    return [name for name, s in SUBSETS.items() if s.task.scored]


def swept() -> list[str]:
    """The subsets whose outcomes depend on speech detection (v1.0's interruption subset, v1.5's four), in the
    report's order: those fdbu sweep can sweep (a tree's first one unless sweep.subset names another)."""
    return [name for name, s in SUBSETS.items() if s.task.speech_detection]


def release_sizes(family: str | None = None) -> dict[str, int]:
    """Each subset's declared size (of one release, `family`, or of all)."""
    return {name: s.release_size for name, s in SUBSETS.items() if family is None or s.family == family}


def family_of(subsets) -> list[str]:
    """The releases `subsets` belong to, in FAMILIES' order."""
    found = {SUBSETS[s].family for s in subsets}
    return [f for f in FAMILIES if f in found]


def families_of(subsets) -> list[Family]:
    """The families `subsets` belong to (their `Family`), in FAMILIES' order."""
    return [FAMILIES[f] for f in family_of(subsets)]


def family(name: str) -> Family:
    """The family of subset `name`."""
    return FAMILIES[SUBSETS[name].family]


def groups(command: str) -> list:
    """The families' settings groups `command` takes (fdbu.family.Group), in FAMILIES' order."""
    return [f.settings for f in FAMILIES.values() if f.settings is not None and command in f.settings.commands]


def register_family(new: Family) -> None:
    """Add a family (a plugin's, a test's): its settings group becomes a config group of the commands it names, its
    figures files score and report write (fdbu.registry), its entries and figures every stage's."""
    if new.name in FAMILIES:
        raise ValueError(f"family {new.name} is already registered")
    keys = {g.key for f in FAMILIES.values() for g in ([f.settings] if f.settings else [])}
    if new.settings is not None and new.settings.key in keys:
        raise ValueError(f"family {new.name}: the settings group {new.settings.key} is another family's")
    FAMILIES[new.name] = new
    for fig in new.figures:
        for command in ("score", "report"):
            registry.also_writes(command, *fig.files)


def unregister_family(name: str) -> None:
    gone = FAMILIES.pop(name)
    for fig in gone.figures:
        for command in ("score", "report"):
            registry.no_longer_writes(command, *fig.files)


for _f in (V10, V15, V2):
    register_family(_f)


def register(new: Subset) -> None:
    """Add a subset (for another dataset's split, or a test), and its task if it is new: every stage picks both
    up."""
    if new.name in SUBSETS:
        raise ValueError(f"subset {new.name} is already registered")
    if TASKS.get(new.task.name, new.task) is not new.task:
        raise ValueError(f"task {new.task.name} is already registered as another task")
    if new.task.name not in TASKS:
        check(new.task)
    SUBSETS[new.name] = new
    TASKS.setdefault(new.task.name, new.task)


PARTS = tuple(n for n in vars(MetricModule) if not n.startswith("_"))  # the protocol's members


def check(task: Task) -> None:
    """A new task's contract, checked when it is registered (mypy checks fdbu's own tasks): one clear error then,
    not a KeyError in the middle of a score."""
    problems = []
    if task.metrics is not None:
        problems += [f"its metric module has no {p}" for p in PARTS if not hasattr(task.metrics, p)]
        names = [m.name for m in getattr(task.metrics, "METRICS", ())]
        if task.latency is not None and task.latency not in names:
            problems.append(f"latency={task.latency!r} is not one of its METRICS ({', '.join(names)})")
        if "outcome" in getattr(task.metrics, "ROW", {}).values() and not hasattr(task.metrics, "OUTCOMES"):
            problems.append("its ROW has an outcome field, but its metric module has no OUTCOMES")
        if task.read is None or task.annotation is None:
            problems.append("a scored task needs its annotation file and reader (annotation=, read=)")
    if task.generator is None:
        problems.append("it has no generator (fdbu synth makes its samples with it)")
    if task.family not in FAMILIES:
        problems.append(f"its family {task.family!r} is not registered ({', '.join(FAMILIES)}; "
                        "tasks.register_family)")
    if task.speech_detection and task.metrics is not None and not hasattr(task.metrics, "SWEEP"):
        problems.append("a task with speech detection is swept: its metric module needs SWEEP (metrics.base.Swept)")
    if problems:
        raise ValueError(f"task {task.name}: " + "; ".join(problems))


def unregister(name: str) -> None:
    task = SUBSETS.pop(name).task
    if task.name not in BUILT_IN and not any(s.task is task for s in SUBSETS.values()):
        del TASKS[task.name]


def task(name: str) -> Task:
    """The task named `name` (a row's "task")."""
    return TASKS[name]
