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


def _frame(rows: list[dict]):
    """Rows as a DataFrame whose numeric columns are numeric (null -> NaN) and flags boolean."""
    import pandas as pd

    frame = pd.DataFrame(rows)
    for name in frame.columns:
        values = [v for v in frame[name] if v is not None and v == v]
        if values and all(isinstance(v, bool) for v in values):
            frame[name] = frame[name].astype("boolean")
        elif values and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            frame[name] = pd.to_numeric(frame[name])
    return frame


@dataclass
class Result:
    """What `fdbu score` computes: unified.json (as a dict) and unified-samples.jsonl (as rows)."""

    unified: dict
    rows: list[dict]

    def to_pandas(self) -> dict:
        """Per-sample rows, one DataFrame per task (eligible and ineligible rows, manifest order)."""
        tasks = dict.fromkeys(r["task"] for r in self.rows)
        return {task: _frame([r for r in self.rows if r["task"] == task]) for task in tasks}

    def metrics(self):
        """One row per subset and metric: value, interval, count; "not reached" is NaN with a flag."""
        rows = []
        for subset, entry in self.unified["subsets"].items():
            for name, m in entry["metrics"].items():
                iv = m["interval"] or [None, None]
                reached = [x != "not reached" for x in (m["value"], iv[0], iv[1])]
                num = [None if not ok else x for x, ok in zip((m["value"], iv[0], iv[1]), reached)]
                rows.append({"subset": subset, "task": entry["task"], "metric": name, "kind": m["kind"],
                             "better": m["better"], "value": num[0], "lo": num[1], "hi": num[2],
                             "value_not_reached": not reached[0], "hi_not_reached": not reached[2],
                             "count": m["count"], "n": m.get("n")})
        return _frame(rows)


@dataclass
class SweepResult:
    """What `fdbu sweep` computes (sweep.json as a dict)."""

    sweep: dict

    def to_pandas(self):
        """One row per tree and grid point (the columns of sweep.csv, numeric columns numeric)."""
        import csv
        import io

        from .sensitivity import to_csv

        rows = list(csv.DictReader(io.StringIO(to_csv(self.sweep))))
        for r in rows:
            for k, v in r.items():
                if v == "":
                    r[k] = None
                elif v in ("True", "False"):
                    r[k] = v == "True"
                else:
                    try:
                        r[k] = float(v)
                    except ValueError:
                        pass
        return _frame(rows)


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
    """Score a reference tree (the keys of `fdbu score --help` as keyword arguments)."""
    _flags(write=write)
    cfg = config.build("score", {"tree": _paths(tree, "tree", False), "progress": False, **settings})
    scored = commands.score(cfg, write=write).value
    return Result(scored.unified, scored.rows)


def sweep(tree, *, write: bool = False, **settings) -> SweepResult:
    """Sweep VAD settings over one tree or a list of trees (the keys of `fdbu sweep --help`)."""
    _flags(write=write)
    cfg = config.build("sweep", {"tree": _paths(tree, "tree", True), "progress": False, **settings})
    return SweepResult(commands.sweep(cfg, write=write).value)


def compare(trees, *, write: bool = False, **settings) -> CompareResult:
    """Compare scored trees pair by pair (the keys of `fdbu compare --help`: names, baseline, out, compare={...})."""
    _flags(write=write)
    cfg = config.build("compare", {"trees": _paths(trees, "trees", "only"), **settings})
    if write and cfg.out is None:
        from .errors import FdbuError

        raise FdbuError("config", None, "write=True needs out=DIR")
    return CompareResult(commands.compare(cfg, write=write).value)
