"""The contract a task's metric module fills: `Task.metrics` is typed by it, so mypy checks every module.

A metric module is the task's whole scoring, in the pyannote.metrics shape (per-sample components, then one
function per number): `components` (the kernels over a subset), `rows` (one JSON row per eligible sample,
its fields and kinds declared in `ROW`, which the reader of a scored tree checks), `from_rows` (the
components back from the rows, for compare), `populations` (the samples each metric is over), `aggregate`
(components -> metric records, by the declared `METRICS` table), `INPUTS` (the row fields that come from the
dataset, equal in every system's tree), and for the report's drill-down `explain` (a row's outcome and the
rule that decided it, in words) and `marks` (the annotation's times to draw).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, NamedTuple, Protocol

if TYPE_CHECKING:  # names for the types only: the protocol loads nothing (every metric module imports it)
    import numpy as np

    from .stats import Bootstrap
    from .table import Metric


class MetricModule(Protocol):
    @property
    def METRICS(self) -> tuple[Metric, ...]: ...

    @property
    def INPUTS(self) -> tuple[str, ...]: ...

    @property
    def ROW(self) -> dict[str, str]: ...  # an eligible row's fields -> their kinds (fdbu.scoring.scored.KINDS)

    # one signature for every task: (the eligible samples; their speech segments (a list of (k, 2) arrays, `Runs`
    # where the task segments several files, None without speech detection); the family's settings group (None:
    # none)) -> the components
    def components(self, samples: list, segments: Any = None, settings: Any = None) -> Any: ...

    def rows(self, samples: list, c: Any) -> list[dict]: ...

    # subset and unified (the settings the rows were scored with): for a module whose table depends on them (v1.5)
    def from_rows(self, rows: list[dict], subset: str | None = None, unified: dict | None = None) -> Any: ...

    def populations(self, c: Any) -> dict[str, np.ndarray]: ...

    def aggregate(self, c: Any, *, selected: int, ineligible: int, boot: Bootstrap) -> tuple[dict, dict]: ...

    def explain(self, row: dict, words: list) -> tuple[str, str]: ...

    def marks(self, row: dict, read: Callable[[str], bytes | None]) -> dict: ...


def time_marks(row: dict, read: Callable[[str], bytes | None] | None = None) -> dict:
    """The drill-down's marks every task shares: E, S and R where the row has them (a task's `marks` when it has
    no others)."""
    return {key[0]: row[key] for key in ("E_s", "S_s", "R_s") if row.get(key) is not None}


class Runs(NamedTuple):
    """What a task that segments more than one file (Task.detected; v1.5: both runs) gets as its segments: the
    subset (its metric table depends on it) and file -> each eligible sample's (k, 2) microsecond segments."""

    subset: str
    files: dict


@dataclass(frozen=True)
class Swept:
    """What `fdbu sweep` shows of a task with speech detection (its metric module's `SWEEP`): sweep.json keeps every
    metric; the console's tables show `shown`, and each grid point records the counts `counts_of` takes from the
    task's `aggregate` extra (sweep.csv's count columns, `counts`; the console's, `count_labels`)."""

    shown: dict[str, str]                 # metric -> the console's column label
    counts: tuple[str, ...]               # each point's counts, in order
    count_labels: dict[str, str]          # the counts the console shows -> their labels
    counts_of: Callable[[dict], dict]     # the task's aggregate extra -> each point's counts
