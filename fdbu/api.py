"""The Python API, for notebooks: the same configs, checks and pipeline as the CLI, results in memory.

    import fdbu
    result = fdbu.score("runs/modelA", vad={"threshold": 0.4})
    frames = result.to_pandas()          # {"pause_handling": DataFrame, "turn_taking": ..., ...}
    result.metrics()                     # one row per subset and metric
    fdbu.compare(["runs/A", "runs/B"], names=["A", "B"]).to_pandas()   # paired differences

Settings are the command's keys as keyword arguments (groups as dicts); they are validated
by `fdbu.config`, so a bad value raises `FdbuError` with the same one-line message the CLI
prints. Nothing is written unless `write=True` (then exactly what the CLI writes).
"""
from __future__ import annotations

from dataclasses import dataclass

from . import commands, config
from .settings import NOT_REACHED


def _frame(rows: list[dict]):
    """Rows as a DataFrame a notebook can compute on: flags boolean, whole numbers integer (nullable Int64
    where some are missing), other numbers float; a column of numbers holding "not reached" is float with
    NaN there and a boolean `<column>_not_reached` beside it; a column with no value at all is float NaN."""
    import pandas as pd

    frame = pd.DataFrame(rows)
    flags = {}
    for name in list(frame.columns):  # the types are read from the rows (the frame has made ints with None floats)
        values = [v for v in (r.get(name) for r in rows) if v is not None and v == v]
        numbers = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
        reached = [v for v in values if not (isinstance(v, str) and v == NOT_REACHED)]
        if not values:
            frame[name] = pd.Series([float("nan")] * len(frame), index=frame.index, dtype="float64")
        elif all(isinstance(v, bool) for v in values):
            frame[name] = frame[name].astype("boolean")
        elif len(numbers) == len(values) and all(isinstance(v, int) for v in numbers):
            frame[name] = frame[name].astype("Int64" if len(values) < len(frame) else "int64")
        elif len(numbers) == len(values):
            frame[name] = pd.to_numeric(frame[name]).astype("float64")
        elif len(numbers) == len(reached):  # numbers, and "not reached"
            flags[f"{name}_not_reached"] = frame[name].map(lambda v: v == NOT_REACHED).astype("boolean")
            frame[name] = frame[name].map(lambda v: float("nan") if v is None or v == NOT_REACHED else float(v))
    for name, flag in flags.items():
        if name not in frame.columns:
            frame.insert(frame.columns.get_loc(name[:-len("_not_reached")]) + 1, name, flag)
    return frame


@dataclass
class Result:
    """What `fdbu score` computes: unified.json (as a dict) and unified-samples.jsonl (as rows)."""

    unified: dict
    rows: list[dict]
    system: str = "system"  # the name in metrics(): the tree's folder name

    def to_pandas(self) -> dict:
        """Per-sample rows, one DataFrame per task (eligible and ineligible rows, manifest order)."""
        tasks = dict.fromkeys(r["task"] for r in self.rows)
        return {task: _frame([r for r in self.rows if r["task"] == task]) for task in tasks}

    def metrics(self):
        """One row per subset and metric: the system, value, 95% interval, p90 (latencies), count and n;
        "not reached" is NaN with a `*_not_reached` flag beside it."""
        rows = []
        for subset, entry in self.unified["subsets"].items():
            for name, m in entry["metrics"].items():
                iv = m["interval"] or [None, None]
                row = {"system": self.system, "subset": subset, "task": entry["task"], "metric": name,
                       "kind": m["kind"], "better": m["better"]}
                for key, x in (("value", m["value"]), ("lo", iv[0]), ("hi", iv[1]), ("p90", m.get("p90"))):
                    row[key] = None if x == NOT_REACHED else x
                    row[f"{key}_not_reached"] = x == NOT_REACHED
                rows.append({**row, "count": m["count"], "n": m.get("n")})
        return _frame(rows)


@dataclass
class SweepResult:
    """What `fdbu sweep` computes (sweep.json as a dict)."""

    sweep: dict

    def to_pandas(self):
        """One row per tree and grid point (the columns of sweep.csv, numeric columns numeric)."""
        from .sensitivity import csv_rows

        return _frame(csv_rows(self.sweep))


@dataclass
class CompareResult:
    """What `fdbu compare` computes: compare.json (as a dict)."""

    compare: dict

    def to_pandas(self):
        """One row per pair, subset and metric (the columns of compare.csv; "not reached" is NaN with a flag)."""
        from .comparison import csv_rows

        return _frame(csv_rows(self.compare))

    def leaderboard(self) -> str:
        """The console leaderboard `fdbu compare` prints."""
        from .comparison import leaderboard

        return leaderboard(self.compare)


def _paths(value, key: str, many: bool):
    """A path (str or os.PathLike), or with `many` a list of them, as strings; anything else is refused as
    the CLI refuses it (FdbuError), not left to fail inside."""
    import os

    from .errors import FdbuError

    def one(p) -> str:
        if not isinstance(p, (str, os.PathLike)) or not str(p):
            raise FdbuError("config", None, f"{key}={p!r}: a path (str or pathlib.Path)")
        return str(p)

    if many and isinstance(value, (list, tuple)):
        return [one(p) for p in value]
    if many == "only":
        raise FdbuError("config", None, f"{key}={value!r}: a list of paths (str or pathlib.Path)")
    return one(value)


def _flags(**flags) -> None:
    from .errors import FdbuError

    for key, value in flags.items():
        if not isinstance(value, bool):
            raise FdbuError("config", None, f"{key}={value!r}: True or False")


def score(tree, *, write: bool = False, **settings) -> Result:
    """Score a reference tree, as `fdbu score` does.

    Parameters: `tree`, the reference tree (str or Path); `write`, also write unified.json and
    unified-samples.jsonl (and with plot=True the figure) into `out` or the tree, exactly as the CLI;
    `**settings`, any key of `fdbu score --help` (groups as dicts: vad={"threshold": 0.4},
    bootstrap={"resamples": 2000, "seed": 0}, device="cpu", out="reports/A").

    Returns a `Result`: `.unified` (unified.json as a dict), `.rows` (its per-sample rows),
    `.to_pandas()` (a DataFrame per task) and `.metrics()` (one row per subset and metric).
    Raises `FdbuError` with the CLI's one-line message for a bad tree or setting.

        >>> r = fdbu.score("runs/modelA", vad={"threshold": 0.4})
        >>> r.metrics().query("metric == 'response_latency_s'")[["subset", "value", "lo", "hi"]]
    """
    from pathlib import Path

    _flags(write=write)
    cfg = config.build("score", {"tree": _paths(tree, "tree", False), "progress": False, **settings})
    scored = commands.score(cfg, write=write).value
    return Result(scored.unified, scored.rows, Path(cfg.tree).resolve().name)


def sweep(tree, *, write: bool = False, **settings) -> SweepResult:
    """Sweep the speech-detection settings over one tree or a list of trees, as `fdbu sweep` does.

    Parameters: `tree`, a reference tree or a list of them; `write`, also write sweep.json, sweep.csv
    and the heatmaps into `out` (needed for several trees) or the tree; `**settings`, any key of
    `fdbu sweep --help` (sweep={"thresholds": [0.4, 0.5], "min_silence_ms": [100, 200]}, names=[...]).

    Returns a `SweepResult`: `.sweep` (sweep.json as a dict) and `.to_pandas()` (one row per tree
    and grid point, numeric columns numeric, "not reached" NaN with a flag).

        >>> fdbu.sweep(["runs/A", "runs/B"], sweep={"thresholds": [0.4, 0.5]}).to_pandas()
    """
    _flags(write=write)
    cfg = config.build("sweep", {"tree": _paths(tree, "tree", True), "progress": False, **settings})
    return SweepResult(commands.sweep(cfg, write=write).value)


def compare(trees, *, write: bool = False, **settings) -> CompareResult:
    """Compare scored trees pair by pair, as `fdbu compare` does.

    Parameters: `trees`, a list of scored trees (each holds unified.json and unified-samples.jsonl);
    `write`, also write compare.json, compare.csv and the figures into `out` (required then);
    `**settings`, any key of `fdbu compare --help` (names=[...], baseline="A",
    compare={"pairs": "all", "alpha": 0.05}).

    Returns a `CompareResult`: `.compare` (compare.json as a dict), `.to_pandas()` (one row per
    pair, subset and metric: values, difference, interval, p, Holm p, marker) and `.leaderboard()`
    (the console's text).

        >>> fdbu.compare(["runs/A", "runs/B"], names=["A", "B"]).to_pandas().query("marker")
    """
    _flags(write=write)
    cfg = config.build("compare", {"trees": _paths(trees, "trees", "only"), **settings})
    if write and cfg.out is None:
        from .errors import FdbuError

        raise FdbuError("config", None, "write=True needs out=DIR")
    return CompareResult(commands.compare(cfg, write=write).value)


def report(trees, out, **settings):
    """Write the report of scored trees, as `fdbu report` does: the static site (index.html to open from disk)
    and the leaderboard as Markdown, LaTeX and CSV.

    Parameters: `trees`, a list of scored trees; `out`, the report folder (created if missing; refused if it
    holds what fdbu would not overwrite); `**settings`, any key of `fdbu report --help` (names=[...],
    baseline="A", report={"format": ["html", "md"], "compare": "reports/cmp"}, plot=False, width="column").

    Returns the report folder as a `pathlib.Path`. Raises `FdbuError` with the CLI's one-line message.

        >>> fdbu.report(["runs/A", "runs/B"], "reports/site", names=["A", "B"])
    """
    from pathlib import Path

    cfg = config.build("report", {"trees": _paths(trees, "trees", "only"), "out": _paths(out, "out", False),
                                  **settings})
    commands.report(cfg)
    return Path(cfg.out)
