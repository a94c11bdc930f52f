"""The pieces every view is made of (fdbu.views): a part per task, the view, and a part's records as columns."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..family import Group
from ..metrics.table import SHARE, Metric
from ..common.timebase import seconds, to_us

INF = np.iinfo(np.int64).max


class ViewSettings:
    """What every view's settings share: the settings that differ from the defaults, as the signature lists them
    (`<view>.<key>=<value>`); a view's settings dataclass names its view (`VIEW`) and writes its `header()`."""

    VIEW: str = ""

    def header(self) -> dict:
        raise NotImplementedError

    def non_default(self) -> list[str]:
        default = type(self)().header()
        return [f"{self.VIEW}.{k}={v}" for k, v in self.header().items() if v != default[k]]


@dataclass(frozen=True)
class Part:
    """A view's numbers on one task."""

    task: str
    table: Callable[[Any], tuple[Metric, ...]]         # settings -> the declared metrics
    records: Callable[[list, Any, Any, Any], list[dict]]  # (eligible samples, task components, settings, speech
    #                                                        segments or None) -> a record per sample
    fields: dict[str, str]                             # a record's fields -> kinds (fdbu.scoring.scored.KINDS)
    populations: Callable[["Records"], dict[str, np.ndarray]]  # the samples each metric is over, as masks
    passes: str | None = None                          # the record field a pooled share of the view counts
    segments: bool = False                             # it reads Silero's segments of output.wav, also where its task
    #                                                    detects no speech (VideoFDB's stay-silent on the pause subsets)
    covers: tuple[str, ...] | None = None              # the subsets of its task it is defined on (None: all of them;
    #                                                    VideoFDB's continue-speaking: v1.5's backchannel and background)
    label: str = ""                                    # the paper's name for what it measures (a timing class)


@dataclass(frozen=True)
class View:
    name: str
    title: str                 # for people: the paper, short
    source: str                # the paper and section the definitions come from
    settings: Any              # the default settings (a frozen dataclass with header() and non_default())
    config: type               # its settings group's dataclass (`<name>.*` of fdbu score): `settings()` gives them
    parts: dict[str, Part]     # task name -> part
    pooled: str | None = None  # a share over every part's `passes` (VideoFDB's TOR-Alignment)
    not_computable: tuple[str, ...] = field(default=())  # the paper's numbers fdbu cannot give offline, and why

    def part(self, task: str, subset: str) -> Part | None:
        """The part computed on `subset` (of `task`): its task's, where that part covers the subset (every reader asks
        here)."""
        part = self.parts.get(task)
        return part if part is not None and (part.covers is None or subset in part.covers) else None

    @property
    def group(self) -> Group:
        """Its settings as a config group of fdbu score (`fdbench.reply_within_s=...`), recorded in its section."""
        return Group(self.name, f"{self.title}'s open choices (views=[{self.name}])", self.config,
                     lambda head: type(self.settings).of(head) if head else self.settings, ("score",))

    def pooled_metric(self) -> Metric:
        """The pooled share as a declared metric (the readers check its record by it)."""
        return Metric(str(self.pooled), SHARE, "higher", "eligible", f"{self.title}: the share of samples passing "
                      "their class, pooled over the classes computed on the tree", lambda c: c.passes, headline=True)


class Records:
    """A part's records and unified rows as columns: `c.field` is an array over the eligible samples (flags as
    bool; seconds as int64 microseconds, INF for null), `c.row(field)` the same from the unified row."""

    def __init__(self, rows: list[dict], view: str, fields: dict[str, str]):
        self._rows = rows
        self._columns = {name: self._column([r["views"][view][name] for r in rows], kind)
                         for name, kind in fields.items()}

    def __getattr__(self, name: str) -> np.ndarray:
        try:
            return self.__dict__["_columns"][name]
        except KeyError:
            raise AttributeError(name) from None

    @staticmethod
    def _column(values: list, kind: str) -> np.ndarray:
        if kind.startswith("flag"):
            return np.array([bool(v) for v in values], bool)
        if kind.startswith("text"):
            return np.array(values, object)
        if kind.startswith("count"):
            return np.array(values, np.int64)
        if kind.startswith("unit"):
            return np.array([np.nan if v is None else float(v) for v in values], float)
        return np.array([INF if v is None else to_us(v) for v in values], np.int64)

    def row(self, name: str, kind: str = "seconds?") -> np.ndarray:
        return self._column([r[name] for r in self._rows], kind)

    def __len__(self) -> int:
        return len(self._rows)


def us(value: int) -> float | None:
    """Microseconds to a record's seconds: INF is null."""
    return None if value == INF else seconds(int(value))
