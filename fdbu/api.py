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
from pathlib import Path

from . import config


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


def _detector(cfg):
    from .cli import make_detector

    return make_detector(cfg)


def score(tree, *, write: bool = False, **settings) -> Result:
    """Score a reference tree (the keys of `fdbu score --help` as keyword arguments)."""
    from . import report
    from .pipeline import score_path
    from .tree import require

    cfg = config.build("score", {"tree": str(tree), "progress": False, **settings})
    require(Path(cfg.tree))
    outputs = report.outputs(Path(cfg.out) if cfg.out is not None else Path(cfg.tree), cfg.plot) if write else None
    scored = score_path(Path(cfg.tree), _detector(cfg), cfg.bootstrap.make())
    if outputs is not None:
        outputs.commit(report.files(scored, cfg.plot))
    return Result(scored.unified, scored.rows)


def sweep(tree, *, write: bool = False, **settings) -> SweepResult:
    """Sweep VAD settings over one tree or a list of trees (the keys of `fdbu sweep --help`)."""
    from .sensitivity import files, outputs as sweep_outputs, sweep as run
    from .tree import require

    trees = [str(t) for t in tree] if isinstance(tree, (list, tuple)) else str(tree)
    cfg = config.build("sweep", {"tree": trees, "progress": False, **settings})
    roots = [Path(t) for t in cfg.trees()]
    for root in roots:
        require(root)
    outputs = sweep_outputs(Path(cfg.out) if cfg.out is not None else roots[0], len(roots), cfg.plot) if write \
        else None
    result = run(roots, _detector(cfg), cfg.bootstrap.make(), cfg.sweep.points(), names=cfg.system_names())
    if outputs is not None:
        outputs.commit(files(result, cfg.plot))
    return SweepResult(result)


def compare(trees, *, write: bool = False, **settings) -> CompareResult:
    """Compare scored trees pair by pair (the keys of `fdbu compare --help`: names, baseline, out, compare={...})."""
    from .comparison import compare as run, files, load, outputs as compare_outputs

    cfg = config.build("compare", {"trees": [str(t) for t in trees], **settings})
    if write and cfg.out is None:
        from .errors import FdbuError

        raise FdbuError("config", None, "write=True needs out=DIR")
    outputs = compare_outputs(Path(cfg.out), cfg.plot) if write else None
    systems = [load(Path(t), name) for t, name in zip(cfg.trees, cfg.system_names())]
    result = run(systems, baseline=cfg.baseline, pairs=cfg.compare.pairs,
                 allow_different_samples=cfg.compare.allow_different_samples,
                 allow_mixed_transcripts=cfg.compare.allow_mixed_transcripts)
    if outputs is not None:
        outputs.commit(files(result, systems, cfg.plot))
    return CompareResult(result)
