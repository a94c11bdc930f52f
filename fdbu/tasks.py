"""The task registry: one entry per Full-Duplex-Bench v1.0 subset, read by every stage.

A `Task` says everything a stage needs to know about a kind of sample: its annotation file and
reader, its metric module (per-sample components, rows, the declared metric table), the
reference time its latencies count from, whether it needs speech detection, how the ASR stage
cuts its audio, which official script gives its reference column, and which synthetic
generator builds it. A `Subset` names a task, its declared release size and its generator's
options. The tree reader, scorer, ASR stage, official rules, plots, sweep and synth all read
this table; adding a subset of an existing task is one `register` call, and a new task is one
`Task` whose fields reach its new code (reader, metric module, official rule, generator).
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from types import ModuleType
from typing import Callable, cast

from . import readers
from .metrics import interruption, pause, turn_taking


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
    runner: str | None       # None: `python SCRIPT --root_dir`; else the fdbu.official_runner function that runs it
    rule: Ref | None = None  # (tree, subset, fdbu.evaluate.Context) -> the reference column (fdbu.evaluate)
    printed_digits: int | None = None  # the script prints rounded numbers (f"{x:.4f}"), else repr floats


@dataclass(frozen=True)
class Task:
    name: str
    annotation: str | None                # the dataset annotation copied into each sample folder
    read: Callable | None                 # (bytes, where, T_us) -> Sample fields (readers.py)
    metrics: ModuleType | None            # components / rows / from_rows / populations / aggregate / METRICS /
                                          # INPUTS; None: no unified metric
    reference: str | None                 # the Sample field latencies count from ("E_us", "R_us")
    speech_detection: bool                # Silero on the whole output.wav
    asr_task: str                         # asr.json's task: "default", or the cut one
    asr_cut: Callable | None              # (annotation bytes, where, T_us) -> seconds the ASR stage cuts at
    official: Official
    label: str                            # for plots and tables
    generator: Ref | None = None          # (rng, system, tail=, **Subset.synth) -> a synthetic sample (fdbu.synth)

    @property
    def scored(self) -> bool:
        return self.metrics is not None

    @property
    def metric_module(self) -> ModuleType:
        """`metrics`, for callers that only reach scored tasks (typed without the None)."""
        return cast(ModuleType, self.metrics)


@dataclass(frozen=True)
class Subset:
    name: str
    task: Task
    release_size: int                                  # the declared size in the v1.0 release
    synth: dict = field(default_factory=dict, hash=False)  # options of the task's generator (fdbu.synth)


EVALUATE, SYNTH = "fdbu.evaluate", "fdbu.synth"
PAUSE_HANDLING = Task(
    "pause_handling", "pause.json", readers.read_pauses, pause, None, False, "default", None,
    Official("eval_pause_handling.py", {"Average take turn": "take_turn_rate"}, None, rule=Ref(EVALUATE, "_pause")),
    "pause handling", Ref(SYNTH, "_pause_sample"))
TURN_TAKING = Task(
    "turn_taking", "turn_taking.json", readers.read_turn_end, turn_taking, "E_us", False, "default", None,
    Official("eval_smooth_turn_taking.py", {"Average take turn": "take_turn_rate", "Average latency": "latency_s"},
             None, rule=Ref(EVALUATE, "_turn_taking")), "turn-taking (from E)", Ref(SYNTH, "_turn_taking_sample"))
USER_INTERRUPTION = Task(
    "user_interruption", "interrupt.json", readers.read_interruption, interruption, "R_us", True,
    "user_interruption", readers.interruption_cut_s,
    Official("eval_user_interruption.py", {"Average rating": "rating", "Average take turn": "take_turn_rate",
                                           "Average latency": "latency_s"}, "interruption",
             rule=Ref(EVALUATE, "_interruption")),
    "interruption (from R)", Ref(SYNTH, "_interruption_sample"))
BACKCHANNEL = Task(
    "backchannel", None, None, None, None, False, "default", None,
    Official("eval_backchannel.py", {"JSD": "jsd", "TOR": "take_turn_rate", "Frequency": "frequency_per_s"},
             "backchannel", printed_digits=4, rule=Ref(EVALUATE, "_backchannel")),
    "backchannel", Ref(SYNTH, "_backchannel_sample"))
TASKS = {t.name: t for t in (PAUSE_HANDLING, TURN_TAKING, USER_INTERRUPTION, BACKCHANNEL)}

# the report's order
SUBSETS: dict[str, Subset] = {s.name: s for s in (
    Subset("synthetic_pause_handling", PAUSE_HANDLING, 137),
    Subset("candor_pause_handling", PAUSE_HANDLING, 216, {"candor": True}),
    Subset("candor_turn_taking", TURN_TAKING, 119),
    Subset("synthetic_user_interruption", USER_INTERRUPTION, 200),
    Subset("icc_backchannel", BACKCHANNEL, 55),
)}


def subset(name: str) -> Subset:
    return SUBSETS[name]


def scored() -> list[str]:
    """The subsets with unified metrics, in the report's order."""
    return [name for name, s in SUBSETS.items() if s.task.scored]


def release_sizes() -> dict[str, int]:
    return {name: s.release_size for name, s in SUBSETS.items()}


def register(new: Subset) -> None:
    """Add a subset (for another dataset's split, or a test): every stage picks it up."""
    if new.name in SUBSETS:
        raise ValueError(f"subset {new.name} is already registered")
    SUBSETS[new.name] = new


def unregister(name: str) -> None:
    del SUBSETS[name]
