"""The Python API, for notebooks: the same configs, checks and pipeline as the CLI, results in memory.

    import fdbu
    result = fdbu.score("runs/modelA", vad={"threshold": 0.4})
    frames = result.to_pandas()          # {"pause_handling": DataFrame, "turn_taking": ..., ...}
    result.metrics()                     # one row per subset and metric
    fdbu.compare(["runs/A", "runs/B"], names=["A", "B"]).to_pandas()   # paired differences

Settings are the command's keys as keyword arguments (groups as dicts); they are validated
by `fdbu.config.store`, so a bad value raises `FdbuError` with the same one-line message the CLI
prints. Nothing is written unless `write=True` (then exactly what the CLI writes).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import commands
from .config import keys as config_keys
from .registry import Call
from .config.settings import NOT_REACHED
from .registry import load_plugins

load_plugins()  # a plugin's families and subsets are the API's too (FDBU_PLUGINS, entry points "fdbu.plugins")


# A DataFrame's columns and dtypes are declared, never read from the data (docs: DataFrames), so code written
# against one system's frame runs on another's. Kinds: text (pandas "string"), bool ("boolean"), int ("int64",
# never missing), Int64 (nullable whole numbers), float ("float64", NaN where missing), reach (float64 with NaN
# where "not reached", and a boolean `<column>_not_reached` beside it), inf (float64, +-inf where the row's
# `<column>_flag` says so), object (lists: segments, reasons).
ROW_KINDS = {"seconds": "float", "count": "Int64", "flag": "bool", "outcome": "text", "text": "text",
             "segments": "object", "unit": "float", "ratio": "float"}


def _typed(rows: list[dict], schema: dict[str, str]):
    """`rows` as a DataFrame of exactly `schema`'s columns and dtypes, whatever the values."""
    import pandas as pd

    nan = float("nan")
    data = {}
    for col, kind in schema.items():
        vals = [r.get(col) for r in rows]
        if kind == "reach":
            data[col] = pd.Series([nan if v is None or v == NOT_REACHED else float(v) for v in vals], dtype="float64")
            data[f"{col}_not_reached"] = pd.Series([v == NOT_REACHED for v in vals], dtype="boolean")
        elif kind == "inf":
            from .metrics.paired import signed

            flags: list[Any] = [r.get(f"{col}_flag") for r in rows]  # "+inf", "-inf", "undefined" or None
            data[col] = pd.Series([nan if x is None else float(x) for x in map(signed, vals, flags)], dtype="float64")
        elif kind == "float":
            data[col] = pd.Series([nan if v is None else float(v) for v in vals], dtype="float64")
        elif kind == "int":
            data[col] = pd.Series(vals, dtype="int64")
        elif kind == "Int64":
            data[col] = pd.Series(pd.array(vals, dtype="Int64"))
        elif kind == "bool":
            data[col] = pd.Series(pd.array(vals, dtype="boolean"))
        elif kind == "text":
            data[col] = pd.Series(pd.array([None if v is None else str(v) for v in vals], dtype="string"))
        else:
            data[col] = pd.Series(vals, dtype=object)
    return pd.DataFrame(data)


def row_schema(task: str) -> dict[str, str]:
    """A task's per-sample rows (unified-samples.jsonl): its declared row fields (its metric module's ROW)."""
    from .tasks import task as task_named

    fields = {k: ROW_KINDS[v.rstrip("?")] for k, v in task_named(task).metric_module.ROW.items()}
    return {"sample_id": "text", "subset": "text", "task": "text", "eligible": "bool", **fields, "reasons": "object"}


METRICS_SCHEMA = {"system": "text", "view": "text", "subset": "text", "task": "text", "metric": "text", "kind": "text", "better": "text",
                  "value": "reach", "lo": "reach", "hi": "reach", "p90": "reach", "count": "int", "n": "Int64"}


def sweep_schema(result: dict) -> dict[str, str]:
    """sweep.csv's columns: a latency metric's value, interval and p90 can be not reached (a flag each)."""
    from .scoring.sweep import counts_of
    from .tasks import metric_table

    subset = result["trees"][0]["subset"]
    out = {"system": "text", "threshold": "float", "neg_threshold": "float", "min_silence_duration_ms": "float",
           "min_speech_duration_ms": "float", "speech_pad_ms": "float", "spec_settings": "bool",
           **dict.fromkeys(counts_of(subset), "int")}
    for m in metric_table(subset, result):
        kind = "reach" if m.kind == "latency_quantiles" else "float"
        out.update({f"{m.name}_{part}": kind for part in ("value", "lo", "hi", "p90")})
    from .scoring.sweep import entry_lines

    for n, _ in entry_lines(result["trees"][0]["points"][0]):  # a family's entry (v1.5: event - clean), +-inf as inf
        out.update({f"{n}_diff": "inf", f"{n}_diff_flag": "text", f"{n}_diff_lo": "inf", f"{n}_diff_lo_flag": "text",
                    f"{n}_diff_hi": "inf", f"{n}_diff_hi_flag": "text", f"{n}_p": "float", f"{n}_p_holm": "float",
                    f"{n}_marker": "bool"})
    return out


def compare_schema() -> dict[str, str]:
    """compare.csv's columns: values with their not-reached flags, the difference with +-inf kept (and its
    flags as text), tests, Holm and the marker, the contexts and pairing tables."""
    from .comparison.files import CSV_HEAD, _population_names

    kinds = {"n": "int", "headline": "bool", "excludes_zero": "bool", "marker": "bool", "diff": "inf",
             "diff_lo": "inf", "diff_hi": "inf", "p": "float", "p_holm": "float", "sign_p": "float",
             "a_coverage": "float", "b_coverage": "float", "resamples_kept": "Int64", "discordant_a_only": "Int64",
             "discordant_b_only": "Int64", "differing_pairs": "Int64", "sign_a_first": "Int64", "sign_b_first": "Int64"}
    # null: the unified metrics; else the view, or the family entry compared (compare.csv has each only when used)
    out = {"view": "text", "entry": "text"}
    for col in CSV_HEAD:
        if col in kinds:
            out[col] = kinds[col]
        elif col.endswith("_not_reached"):
            out[col] = "bool"
        elif col.startswith(("a_", "b_")):
            out[col] = "float"
        else:
            out[col] = "text"
    pops = _population_names()
    out.update({f"{s}_{p}_rate": "float" for p in pops for s in ("a", "b")})
    out.update(dict.fromkeys(["a_bound_lo", "a_bound_hi", "b_bound_lo", "b_bound_hi"], "float"))
    out.update({f"{p}_{c}": "Int64" for p in pops for c in ("both", "only_a", "only_b", "neither")})
    return out


@dataclass
class Result:
    """What `fdbu score` computes: unified.json (as a dict) and unified-samples.jsonl (as rows)."""

    unified: dict
    rows: list[dict]
    system: str = "system"  # the name in metrics(): the tree's folder name

    def to_pandas(self) -> dict:
        """Per-sample rows, one DataFrame per task (eligible and ineligible rows, manifest order)."""
        tasks = dict.fromkeys(r["task"] for r in self.rows)
        return {task: _typed([r for r in self.rows if r["task"] == task], row_schema(task)) for task in tasks}

    def metrics(self):
        """One row per subset and metric: the system, the view ("unified", or another benchmark's terms: fdbu score
        views=), value, 95% interval, p90 (latencies), count and n; "not reached" is NaN with a `*_not_reached` flag
        beside it. A view's pooled share (VideoFDB's TOR_alignment) has subset "pooled"."""
        rows = []
        sections = [("unified", subset, entry["task"], entry["metrics"]) for subset, entry in
                    self.unified["subsets"].items()]
        for view, v in self.unified.get("views", {}).items():
            sections += [(view, subset, self.unified["subsets"][subset]["task"], e["metrics"])
                         for subset, e in v["subsets"].items()]
            sections += [(view, "pooled", None, v["pooled"])] if "pooled" in v else []
        for view, subset, task, metrics in sections:
            for name, m in metrics.items():
                iv = m["interval"] or [None, None]
                row = {"system": self.system, "view": view, "subset": subset, "task": task, "metric": name,
                       "kind": m["kind"], "better": m["better"]}
                row.update({"value": m["value"], "lo": iv[0], "hi": iv[1], "p90": m.get("p90")})
                rows.append({**row, "count": m["count"], "n": m.get("n")})
        return _typed(rows, METRICS_SCHEMA)

    def entries(self, key: str):
        """A family's entry of each subset (fdbu.family.Entry; v1.5's matched control, docs: Definition 58) as one
        row per subset and line: the system, the entry's own columns (v1.5: the pairs, each run's rate), the
        difference with its interval (+-inf kept as inf), p, Holm p and the marker. Empty for a tree without it."""
        from .tasks import FAMILIES

        extra = next((e for f in FAMILIES.values() for e in f.entries if e.key == key), None)
        if extra is None:
            raise KeyError(f"{key!r}: no family's entry has this key (fdbu.tasks.FAMILIES)")
        rows = []
        for subset, entry in self.unified["subsets"].items():
            if key not in entry:
                continue
            for name, line in extra.lines(entry[key]).items():
                d = line["difference"]
                iv, flags = d["interval"] or [None, None], d["interval_flags"] or [None, None]
                rows.append({"system": self.system, "subset": subset, "line": name, **extra.row(entry[key], line),
                             "diff": d["value"], "diff_flag": d["value_flag"], "diff_lo": iv[0],
                             "diff_lo_flag": flags[0], "diff_hi": iv[1], "diff_hi_flag": flags[1], "p": line["p"],
                             "p_holm": line["p_holm"], "marker": line["marker"], "reason": line["reason"]})
        return _typed(rows, {"system": "text", "subset": "text", "line": "text", **extra.columns, **LINE_SCHEMA})

    def __getattr__(self, key: str):
        """Each family's entry as a method named by its key: `result.control()` is v1.5's matched control."""
        from .tasks import FAMILIES

        if not any(e.key == key for f in FAMILIES.values() for e in f.entries):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {key!r}")
        return lambda: self.entries(key)

    def __dir__(self):
        from .tasks import FAMILIES

        return sorted({*super().__dir__(), *(e.key for f in FAMILIES.values() for e in f.entries)})


LINE_SCHEMA = {"diff": "inf", "diff_flag": "text", "diff_lo": "inf", "diff_lo_flag": "text", "diff_hi": "inf",
               "diff_hi_flag": "text", "p": "float", "p_holm": "float", "marker": "bool", "reason": "text"}


@dataclass
class SweepResult:
    """What `fdbu sweep` computes (sweep.json as a dict)."""

    sweep: dict

    def to_pandas(self):
        """One row per tree and grid point (the columns of sweep.csv, numeric columns numeric)."""
        from .scoring.sweep import csv_rows

        return _typed(csv_rows(self.sweep), sweep_schema(self.sweep))


@dataclass
class CompareResult:
    """What `fdbu compare` computes: compare.json (as a dict)."""

    compare: dict

    def to_pandas(self):
        """One row per pair, subset and metric (the columns of compare.csv; "not reached" is NaN with a flag)."""
        from .comparison.files import csv_rows

        return _typed(csv_rows(self.compare), compare_schema())

    def leaderboard(self) -> str:
        """The console leaderboard `fdbu compare` prints."""
        from .comparison.files import leaderboard

        return leaderboard(self.compare)


def _paths(value, key: str, many: bool | str):
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


def _required(command: str, key: str, value, settings: dict) -> None:
    """A missing first argument, in the CLI's words: most often a misspelt keyword (`tre=`) took its place."""
    if value is not None:
        return
    from .config.keys import did_you_mean, known_keys
    from .config.store import CONFIGS
    from .errors import FdbuError

    keys = {k.split(".")[0] for k in known_keys(CONFIGS[command])}
    unknown = [k for k in settings if k not in keys]
    if unknown:
        raise FdbuError("config", None, f"{unknown[0]} is not a setting{did_you_mean(unknown[0], command)}")
    raise FdbuError("config", None, f"{key} is required: fdbu.{command}({key}=...)")


def _flags(**flags) -> None:
    from .errors import FdbuError

    for key, value in flags.items():
        if not isinstance(value, bool):
            raise FdbuError("config", None, f"{key}={value!r}: True or False")


def score(tree=None, *, write: bool = False, **settings) -> Result:
    """Score a reference tree, as `fdbu score` does.

    Parameters: `tree`, the reference tree (str or Path); `write`, also write unified.json and
    unified-samples.jsonl (and with plot=True the figure) into `out` or the tree, exactly as the CLI;
    `**settings`, any key of `fdbu score --help` (groups as dicts: vad={"threshold": 0.4},
    bootstrap={"resamples": 2000, "seed": 0}, device="cpu", out="reports/A").

    Returns a `Result`: `.unified` (unified.json as a dict), `.rows` (its per-sample rows),
    `.to_pandas()` (a DataFrame per task), `.metrics()` (one row per subset and metric) and, for v1.5
    subsets, `.control()` (the matched control, one row per subset and line).
    Raises `FdbuError` with the CLI's one-line message for a bad tree or setting.

        >>> r = fdbu.score("runs/modelA", vad={"threshold": 0.4})
        >>> r.metrics().query("metric == 'response_latency_s'")[["subset", "value", "lo", "hi"]]
    """
    from pathlib import Path

    _required("score", "tree", tree, settings)
    _flags(write=write)
    cfg = config_keys.build("score", {"tree": _paths(tree, "tree", False), "progress": False, **settings})
    scored = commands.score.run(cfg, Call(write=write)).value
    return Result(scored.unified, scored.rows, Path(cfg.tree).resolve().name)


def sweep(tree=None, *, write: bool = False, **settings) -> SweepResult:
    """Sweep the speech-detection settings over one tree or a list of trees, as `fdbu sweep` does.

    Parameters: `tree`, a reference tree or a list of them; `write`, also write sweep.json, sweep.csv
    and the heatmaps into `out` (needed for several trees) or the tree; `**settings`, any key of
    `fdbu sweep --help` (sweep={"threshold": [0.4, 0.5], "min_silence_duration_ms": [100, 200]}, names=[...]).

    Returns a `SweepResult`: `.sweep` (sweep.json as a dict) and `.to_pandas()` (one row per tree
    and grid point, numeric columns numeric, "not reached" NaN with a flag).

        >>> fdbu.sweep(["runs/A", "runs/B"], sweep={"threshold": [0.4, 0.5]}).to_pandas()
    """
    _required("sweep", "tree", tree, settings)
    _flags(write=write)
    cfg = config_keys.build("sweep", {"tree": _paths(tree, "tree", True), "progress": False, **settings})
    return SweepResult(commands.sweep.run(cfg, Call(write=write)).value)


def compare(trees=None, *, write: bool = False, **settings) -> CompareResult:
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
    _required("compare", "trees", trees, settings)
    _flags(write=write)
    cfg = config_keys.build("compare", {"trees": _paths(trees, "trees", "only"), "progress": False, **settings})
    if write and cfg.out is None:
        from .errors import FdbuError

        raise FdbuError("config", None, "write=True needs out=DIR")
    return CompareResult(commands.compare.run(cfg, Call(write=write)).value)


def report(trees=None, out=None, **settings):
    """Write the report of scored trees, as `fdbu report` does: the static site (index.html to open from disk)
    and the leaderboard as Markdown, LaTeX and CSV.

    Parameters: `trees`, a list of scored trees; `out`, the report folder (created if missing; refused if it
    holds what fdbu would not overwrite); `**settings`, any key of `fdbu report --help` (names=[...],
    baseline="A", report={"format": ["html", "md"], "compare": "reports/cmp"}, plot=False, width="column").

    Returns the report folder as a `pathlib.Path`. Raises `FdbuError` with the CLI's one-line message.

        >>> fdbu.report(["runs/A", "runs/B"], "reports/site", names=["A", "B"])
    """
    from pathlib import Path

    _required("report", "trees", trees, settings)
    _required("report", "out", out, settings)
    cfg = config_keys.build("report", {"trees": _paths(trees, "trees", "only"), "out": _paths(out, "out", False),
                                  "progress": False,
                                  **settings})
    commands.report.run(cfg)
    return Path(cfg.out)
