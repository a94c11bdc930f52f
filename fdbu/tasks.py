"""The task registry: every Full-Duplex-Bench subset and the release (family) it belongs to, read by every stage.

Each release is a folder (fdbu.families.<release>) that declares its tasks, subsets and `Family`
(fdbu.family: `Task`, `Subset`, `Family`); `RELEASES` below names them, one line each, in order, and they are
registered here as a plugin's family is (`register_family`, tests/made_up_family.py). A `Task` says everything a
stage needs to know about a kind of sample: its annotation file and reader, its metric module (per-sample
components, rows, the declared metric table), the reference time its latencies count from, whether it needs speech
detection, how the ASR stage cuts its audio, which official script gives its reference column, and which synthetic
generator builds it. A `Subset` names a task, its declared release size and its generator's options. The tree
reader, scorer, ASR stage, official rules, plots, sweep and synth all read this table; adding a subset of an
existing task is one `register` call, and a new task is one `Task` (by keyword) whose fields reach its new code;
`register` takes a subset of a new task too (tests/made_up_task.py).
"""
from __future__ import annotations

from . import registry
from .families import v1_0, v1_5, v2
from .family import Family, Official, Ref, Subset, Task
from .metrics.base import MetricModule

__all__ = ["Family", "Official", "Ref", "Subset", "Task", "FAMILIES", "SUBSETS", "TASKS", "RELEASES"]

RELEASES = (v1_0.FAMILY, v1_5.FAMILY, v2.FAMILY)  # the releases, in order: a new one is its folder and a name here
FAMILIES: dict[str, Family] = {}
TASKS: dict[str, Task] = {}
SUBSETS: dict[str, Subset] = {}  # the report's order: the releases' subsets, in RELEASES' order


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


def synth_options() -> list:
    """The releases' settings of fdbu synth (fdbu.family.SynthOption), in FAMILIES' order."""
    return [o for f in FAMILIES.values() for o in f.synth_options]


def groups(command: str) -> list:
    """The families' settings groups `command` takes (fdbu.family.Group), in FAMILIES' order."""
    return [f.settings for f in FAMILIES.values() if f.settings is not None and command in f.settings.commands]


def register_family(new: Family) -> None:
    """Add a family (a plugin's, a test's): its settings group becomes a config group of the commands it names, its
    figures files score and report write (fdbu.registry), its entries and figures every stage's."""
    if new.name in FAMILIES:
        raise ValueError(f"family {new.name} is already registered")
    taken = [s.name for s in new.subsets if s.name in SUBSETS]
    if taken:  # refused before anything is registered: a refusal leaves the registry as it was
        raise ValueError(f"family {new.name}: subset {taken[0]} is already registered")
    keys = {g.key for f in FAMILIES.values() for g in ([f.settings] if f.settings else [])}
    if new.settings is not None and new.settings.key in keys:
        raise ValueError(f"family {new.name}: the settings group {new.settings.key} is another family's")
    FAMILIES[new.name] = new
    for fig in new.figures:
        for command in ("score", "report"):
            registry.also_writes(command, *fig.files)
    for s in new.subsets:
        register(s)


def unregister_family(name: str) -> None:
    for s in FAMILIES[name].subsets:
        if s.name in SUBSETS:
            unregister(s.name)
    gone = FAMILIES.pop(name)
    kept = {f for other in FAMILIES.values() for fig in other.figures for f in fig.files}  # another family's too
    for fig in gone.figures:
        for command in ("score", "report"):
            registry.no_longer_writes(command, *(f for f in fig.files if f not in kept))




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


for _release in RELEASES:
    register_family(_release)
BUILT_IN = frozenset(TASKS)
