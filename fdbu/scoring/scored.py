"""Reading a scored tree back (unified.json + unified-samples.jsonl), as strictly as a tree is read.

`fdbu compare` computes from these files, so every value it uses is checked here first: its type,
its range, integers that fit in 64 bits, and that the two files are from one run (unified.json
records the rows' SHA-256, its counts are the rows', its records are what the rows give back,
`systems._check_rows`). A
failure is one line naming the tree, the file, the line or key, and the problem (`FdbuError`);
nothing here raises anything else, whatever the files hold.
"""
from __future__ import annotations

import math
import re
from pathlib import Path
from typing import NoReturn

from .. import tasks
from ..common.atomic import sha256_bytes
from ..config.settings import MAX_INT, MAX_RESAMPLES
from ..errors import FdbuError
from ..metrics.stats import NOT_REACHED
from ..common.outputs import interrupted
from ..tree.readers import MAX_SECONDS, short, parse_json
from ..common.atomic import regular

UNIFIED = "unified.json"
SAMPLES = "unified-samples.jsonl"
ROWS_SHA256 = "samples_sha256"  # unified.json's key for the SHA-256 of unified-samples.jsonl
HEX64 = re.compile(r"[0-9a-f]{64}")


def _number(v) -> bool:
    """A finite number no larger than an int64 (an integer of any size is compared exactly, never converted)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return False
    return abs(v) <= MAX_INT and (isinstance(v, int) or math.isfinite(v))


def _pair(kind):
    return lambda v: isinstance(v, list) and len(v) == 2 and all(KINDS[kind][0](x) for x in v)


# kind -> (test, what it must be); a kind ending in "?" may also be null
KINDS = {
    "count": (lambda v: isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= MAX_INT,
              "a whole number from 0 to 2^63 - 1"),
    "seconds": (lambda v: _number(v) and 0 <= v <= MAX_SECONDS, f"a number of seconds from 0 to {MAX_SECONDS:.0e}"),
    "unit": (lambda v: _number(v) and 0 <= v <= 1, "a number from 0 to 1"),
    "ratio": (lambda v: _number(v) and v >= 0, "a finite number >= 0"),
    "quantile": (lambda v: v == NOT_REACHED or (_number(v) and 0 <= v <= MAX_SECONDS),
                 f"seconds or {NOT_REACHED!r}"),
    "flag": (lambda v: isinstance(v, bool), "true or false"),
    "number": (_number, "a finite number"),
    "text": (lambda v: isinstance(v, str), "a string"),
    "sha256": (lambda v: isinstance(v, str) and HEX64.fullmatch(v) is not None, "a SHA-256 hex digest"),
    "segments": (lambda v: isinstance(v, list) and all(_pair("seconds")(p) and p[0] <= p[1] for p in v),
                 "a list of [start, end] seconds"),
}
# a list of rows of numbers, nulls or NOT_REACHED (v2's judged events with the timing inside each)
KINDS["number rows"] = (lambda v: isinstance(v, list) and all(isinstance(r, list) and all(
    x is None or x == NOT_REACHED or _number(x) for x in r) for r in v), f"a list of rows of numbers, nulls or "
    f"{NOT_REACHED!r}")
KINDS["texts"] = (lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v), "a list of strings")
KINDS["counts"] = (lambda v: isinstance(v, dict) and all(KINDS["count"][0](x) for x in v.values()),
                   "an object of whole numbers from 0 to 2^63 - 1")
# another benchmark's times can be negative (FD-Bench's onset before E, VideoFDB's yield latency; fdbu.views)
KINDS["signed seconds"] = (lambda v: _number(v) and abs(v) <= MAX_SECONDS,
                           f"a number of seconds from -{MAX_SECONDS:.0e} to {MAX_SECONDS:.0e}")
KINDS["signed quantile"] = (lambda v: v == NOT_REACHED or KINDS["signed seconds"][0](v),
                            f"signed seconds or {NOT_REACHED!r}")
for _k in ("unit", "ratio", "quantile", "signed quantile"):
    KINDS[f"{_k} pair"] = (_pair(_k), f"a list of two: {KINDS[_k][1]}")

# the fields of a metric record unified.json holds beyond those the rows give back (checked equal)
RECORDS = {"share": {"interval": "unit pair?"}, "pooled_ratio": {"interval": "ratio pair?",
                                                                  "resamples_kept": "count"},
           "latency_quantiles": {"interval": "quantile pair?"}}
VIEW_RECORDS = {**RECORDS, "latency_quantiles": {"interval": "signed quantile pair?"}}
ENTRY = {"coverage": "unit", "min_observable_s": "seconds?"}
COUNTS = ("declared", "selected", "eligible", "ineligible")
# unified.json's header, each object's fields (the reader checks them; the docs' schema page lists them); a kind
# ending in "?" may also be null or absent
HEADER = {"fdbu_version": "text", "definitions": "text", ROWS_SHA256: "sha256", "settings": "text",
          "non_default": "texts?", "quantile_rule": "text"}
INPUTS = {"manifest.json": "sha256", "asr.json": "sha256"}
TRANSCRIPTS = {"source": "text", "model": "text?"}  # optional: where the words came from (compare, the report)
BOOTSTRAP = {"resamples": "count", "seed": "count", "method": "text", "confidence": "unit", "draw": "text"}
SHARE_INTERVAL = {"method": "text", "z": "number"}
SPEECH_DETECTION = {"silero_vad_version": "text", "model_file": "text", "model_sha256": "sha256", "torch_version": "text?"}
SPEECH_SETTINGS = {"threshold": "unit", "min_speech_duration_ms": "number", "min_silence_duration_ms": "number",
                   "speech_pad_ms": "number", "sampling_rate": "count"}  # speech_detection.settings: score prints them
COUNTED = {"ineligible_reasons": "counts", "outcomes": "counts?", "exercised": "count?"}  # a subset's counts, more


class _Reader:
    """Checks of one file of one tree, each refusal naming the tree, the file and the key or line."""

    def __init__(self, root: Path, file: str):
        self.where, self.file = str(root), file

    def refuse(self, at: str, problem: str) -> NoReturn:
        raise FdbuError(self.where, self.file, f"{at} {problem}".strip())

    def value(self, doc, key, kind: str, at: str, outcomes=()):
        """doc[key] checked against its kind; `at` names it in the message."""
        if not isinstance(doc, dict) or key not in doc:
            self.refuse(at, "is missing")
        v = doc[key]
        optional = kind.endswith("?")
        kind = kind.rstrip("?")
        if optional and v is None:
            return v
        if kind == "outcome":
            ok, what = v in outcomes, f"one of {', '.join(outcomes)}"
        else:
            test, what = KINDS[kind]
            ok = test(v)
        if not ok:
            self.refuse(at, f"is {short(v)}, not {what}{' or null' if optional else ''}")
        return v

    def ok(self, kind: str, value) -> bool:
        """Whether `value` is of `kind` (KINDS): for a hook's own checks (a family's entry, fdbu.family.Entry)."""
        return KINDS[kind][0](value)

    def fields(self, doc, schema: dict, at: str, outcomes=()) -> None:
        for key, kind in schema.items():
            self.value(doc, key, kind, f"{at}{key}", outcomes)

    def obj(self, doc, key, at: str) -> dict:
        v = doc.get(key) if isinstance(doc, dict) else None
        if not isinstance(v, dict):
            self.refuse(at, "is missing or not an object")
        return v


def _file(root: Path, file: str) -> bytes:
    path = root / file
    try:
        regular(path, str(root), file)
        return path.read_bytes()
    except FileNotFoundError:
        raise FdbuError(str(root), file, f"is missing: the tree is not scored (run fdbu score tree={root})") from None
    except OSError as e:  # permission denied, an I/O error
        raise FdbuError(str(root), file, f"cannot be read: {e.strerror or e}") from None


def _odd_number(doc, at: str = "") -> str | None:
    """The first key path holding NaN, an infinity or an integer beyond 64 bits (fdbu writes none; they would
    break the arithmetic or compare.json), with the value."""
    if isinstance(doc, dict):
        found = (_odd_number(v, f"{at}.{k}" if at else str(k)) for k, v in doc.items())
    elif isinstance(doc, list):
        found = (_odd_number(v, f"{at}[{i}]") for i, v in enumerate(doc))
    else:
        bad = isinstance(doc, (int, float)) and not isinstance(doc, bool) and not _number(doc)
        return f"{at} is {short(doc)}" if bad else None
    return next((f for f in found if f), None)


def _present(schema: dict, doc: dict) -> dict:
    """`schema` less its optional keys (a kind ending in "?") that `doc` leaves out."""
    return {k: v for k, v in schema.items() if k in doc or not v.endswith("?")}


def _unified(root: Path, raw: bytes) -> dict:
    r = _Reader(root, UNIFIED)
    doc = parse_json(raw, r.where, UNIFIED)
    if not isinstance(doc, dict) or doc.get("generator") != "fdbu" or "kind" in doc:
        r.refuse("", "is not a unified.json written by fdbu score")
    try:
        odd = _odd_number(doc)
    except RecursionError:
        r.refuse("", "is nested too deeply to be a file fdbu writes")
    if odd:
        r.refuse(f"{odd};", "fdbu writes only finite numbers and integers of 64 bits")
    r.fields(doc, _present(HEADER, doc), "")
    r.fields(r.obj(doc, "inputs", "inputs"), INPUTS, "inputs.")
    vad = r.obj(doc, "speech_detection", "speech_detection")
    r.fields(vad, _present(SPEECH_DETECTION, vad), "speech_detection.")
    r.fields(r.obj(vad, "settings", "speech_detection.settings"), SPEECH_SETTINGS, "speech_detection.settings.")
    r.fields(r.obj(doc, "share_interval", "share_interval"), SHARE_INTERVAL, "share_interval.")
    if "transcripts" in doc:  # where the words came from: compare and the report read it
        from ..config.settings import SOURCES

        r.fields(r.obj(doc, "transcripts", "transcripts"), TRANSCRIPTS, "transcripts.")
        if doc["transcripts"]["source"] not in SOURCES:
            r.refuse("transcripts.source", f"is {short(doc['transcripts']['source'])}, not one of {', '.join(SOURCES)}")
    boot = r.obj(doc, "bootstrap", "bootstrap")
    r.fields(boot, BOOTSTRAP, "bootstrap.")
    if not 1 <= boot["resamples"] <= MAX_RESAMPLES:
        r.refuse("bootstrap.resamples", f"is {boot['resamples']}, not from 1 to {MAX_RESAMPLES}")
    _definitions(r, doc)
    for subset, entry in r.obj(doc, "subsets", "subsets").items():
        at = f"subsets.{subset}"
        if subset not in tasks.SUBSETS or not tasks.subset(subset).task.scored:
            r.refuse(at, "is not a scored subset fdbu knows")
        if not isinstance(entry, dict):
            r.refuse(at, "is not an object")
        task = tasks.subset(subset).task
        if entry.get("task") != task.name:
            r.refuse(f"{at}.task", f"is {short(entry.get('task'))}, not {task.name!r}")
        r.fields(entry, _present(ENTRY, entry), f"{at}.")
        counts = r.obj(entry, "counts", f"{at}.counts")
        r.fields(counts, {**dict.fromkeys(COUNTS, "count"), **_present(COUNTED, counts)}, f"{at}.counts.")
        metrics = r.obj(entry, "metrics", f"{at}.metrics")
        _records(r, metrics, tasks.metric_table(subset, doc), f"{at}.metrics", RECORDS)
        for extra in tasks.family(subset).entries:  # a family's entries (v1.5's matched control), its own check
            extra.check(r, entry, at, doc)
    if "views" in doc:
        _views(r, doc)
    return doc


def _definitions(r: "_Reader", doc: dict) -> None:
    """A tree scored under other definitions than this fdbu's (an older release of a family's: its numbers or
    entries differ) is refused with what to do, not read field by field against today's."""
    from ..version import DEFINITIONS_VERSION, VIEWS_DEFINITIONS

    subsets = [s for s in r.obj(doc, "subsets", "subsets") if s in tasks.SUBSETS]
    names = [DEFINITIONS_VERSION, *(f.definitions for f in tasks.families_of(subsets) if f.definitions)]
    if "views" in doc:
        if not str(doc["definitions"]).endswith(f"+{VIEWS_DEFINITIONS}"):
            return  # the views' own check says what their section lacks (`_views`)
        names.append(VIEWS_DEFINITIONS)
    if doc["definitions"] != "+".join(names):
        r.refuse("definitions", f"is {short(doc['definitions'])}, not this fdbu's {'+'.join(names)!r} for its "
                 "subsets: it was scored by another release of fdbu; run fdbu score again")


def _views(r: "_Reader", doc: dict) -> None:
    """Other benchmarks' numbers (fdbu.views): each view fdbu knows, under its definitions, with the settings it
    was computed with, and a record of every declared metric of each subset it covers."""
    from ..version import VIEWS_DEFINITIONS
    from ..views import VIEWS, part_of, part_on

    if not str(doc["definitions"]).endswith(f"+{VIEWS_DEFINITIONS}"):
        r.refuse("definitions", f"is {short(doc['definitions'])}, without +{VIEWS_DEFINITIONS} beside its views")
    for name, entry in r.obj(doc, "views", "views").items():
        at = f"views.{name}"
        if name not in VIEWS or not isinstance(entry, dict):
            r.refuse(at, f"is not one of fdbu's views ({', '.join(VIEWS)}) as an object")
        view = VIEWS[name]
        r.fields(entry, {"title": "text", "source": "text"}, f"{at}.")
        listed = entry.get("not_computable")
        if not (isinstance(listed, list) and all(isinstance(x, str) for x in listed)):
            r.refuse(f"{at}.not_computable", f"is {short(listed)}, not a list of texts")
        head = r.obj(entry, "settings", f"{at}.settings")
        r.fields(head, view.settings.KINDS, f"{at}.settings.")
        try:
            settings = view.settings.of(head)
        except ValueError as e:  # a choice fdbu does not write (fdbench.stop_by, videofdb.backchannel_words)
            r.refuse(f"{at}.settings", f"holds {e}")
        covered = [s for s in doc["subsets"] if part_of(view, s) is not None]
        subsets = r.obj(entry, "subsets", f"{at}.subsets")
        if list(subsets) != covered:
            r.refuse(f"{at}.subsets", f"are {short(list(subsets))}, not the scored subsets the {name} view covers "
                     f"({', '.join(covered) or 'none'})")
        for subset, part_entry in subsets.items():
            here = f"{at}.subsets.{subset}"
            part = part_on(view, subset)
            r.fields(r.obj(part_entry, "counts", f"{here}.counts"), {"selected": "count", "eligible": "count"},
                     f"{here}.counts.")
            _view_metrics(r, r.obj(part_entry, "metrics", f"{here}.metrics"), part.table(settings), f"{here}.metrics")
        passing = [s for s in covered if part_on(view, s).passes is not None]
        if view.pooled is not None and passing:  # score writes it exactly then, over exactly those subsets
            pooled = r.obj(entry, "pooled", f"{at}.pooled")
            if list(pooled) != [view.pooled]:
                r.refuse(f"{at}.pooled", f"names {short(list(pooled))}, not [{view.pooled!r}]")
            _view_metrics(r, pooled, (view.pooled_metric(),), f"{at}.pooled")
            record, here = pooled[view.pooled], f"{at}.pooled.{view.pooled}"
            r.fields(record, {"class_mean": "unit?", "class_mean_interval": "unit pair?"}, f"{here}.")
            classes = r.obj(record, "classes", f"{here}.classes")
            for label in classes:
                r.fields(r.obj(classes, label, f"{here}.classes.{label}"),
                         {"count": "count", "n": "count", "value": "unit?"}, f"{here}.classes.{label}.")
            over = pooled[view.pooled].get("over")
            if over != passing:
                r.refuse(f"{at}.pooled.{view.pooled}.over", f"is {short(over)}, not the subsets it pools "
                         f"({', '.join(passing)})")
        elif "pooled" in entry:
            r.refuse(f"{at}.pooled", f"is there, but the {name} view pools nothing on these subsets")


def _records(r: "_Reader", metrics: dict, table, at: str, kinds: dict) -> list[dict]:
    """Each declared metric's record: there, its fields of `kinds`, its kind and direction the table's."""
    out = []
    for m in table:
        record = r.obj(metrics, m.name, f"{at}.{m.name}")
        r.fields(record, kinds[m.kind], f"{at}.{m.name}.")
        for key, want in (("kind", m.kind), ("better", m.better)):
            if record.get(key) != want:
                r.refuse(f"{at}.{m.name}.{key}", f"is {short(record.get(key))}, not {want!r}")
        out.append(record)
    return out


def _view_metrics(r: "_Reader", metrics: dict, table, at: str) -> None:
    """A view's metric records: each declared one, of its kind and direction, with its count, n and value."""
    for m, record in zip(table, _records(r, metrics, table, at, VIEW_RECORDS)):
        r.fields(record, {"count": "count"}, f"{at}.{m.name}.")
        if m.kind == "share":
            r.fields(record, {"n": "count", "value": "unit?"}, f"{at}.{m.name}.")
        elif m.kind == "latency_quantiles":
            r.fields(record, {"value": "signed quantile?"}, f"{at}.{m.name}.")


def _view_records(r: "_Reader", unified: dict, rows: dict[str, list[dict]]) -> None:
    """Each eligible row of a subset a view covers holds that view's record, its fields of their kinds."""
    from ..views import VIEWS, part_on

    for name, entry in unified.get("views", {}).items():
        for subset in entry["subsets"]:
            part = part_on(VIEWS[name], subset)
            for row in rows.get(subset, []):
                if row["eligible"]:
                    at = f"{row['sample_id']} views.{name}"
                    record = r.obj(r.obj(row, "views", f"{row['sample_id']} views"), name, at)
                    r.fields(record, part.fields, f"{at}.")


def _rows(root: Path, raw: bytes) -> dict[str, list[dict]]:
    r = _Reader(root, SAMPLES)
    rows: dict[str, list[dict]] = {}
    seen = set()
    for k, line in enumerate(raw.splitlines(), 1):
        at = f"line {k}"
        row = parse_json(line, r.where, f"{SAMPLES} {at}")
        if not isinstance(row, dict):
            r.refuse(at, "is not a JSON object")
        sid, subset = r.value(row, "sample_id", "text", f"{at} sample_id"), r.value(row, "subset", "text",
                                                                                    f"{at} subset")
        if subset not in tasks.SUBSETS or not tasks.subset(subset).task.scored:
            r.refuse(f"{at} subset", f"{short(subset)} is not a scored subset fdbu knows")
        if not sid.startswith(subset + "/") or sid in seen:
            r.refuse(f"{at} sample_id", f"{short(sid)} is not '{subset}/<id>' or is listed twice")
        seen.add(sid)
        task = tasks.subset(subset).task
        if row.get("task") != task.name:
            r.refuse(f"{at} ({sid}) task", f"is {short(row.get('task'))}, not {task.name!r}")
        if r.value(row, "eligible", "flag", f"{at} ({sid}) eligible"):
            outcomes = tuple(getattr(task.metrics, "OUTCOMES", {}).values())
            r.fields(row, task.metric_module.ROW, f"{at} ({sid}) ", outcomes)  # its module declares them
        rows.setdefault(subset, []).append(row)
    return rows


def _paired(root: Path, unified: dict, rows: dict[str, list[dict]]) -> None:
    """unified.json's counts are the rows' (the same run wrote both)."""
    r = _Reader(root, SAMPLES)
    if set(rows) != set(unified["subsets"]):
        r.refuse("", f"holds the subsets {sorted(rows)}, unified.json {sorted(unified['subsets'])}; the two files "
                 "are not from one run (run fdbu score again)")
    for subset, subset_rows in rows.items():
        counts = unified["subsets"][subset]["counts"]
        eligible = sum(row["eligible"] for row in subset_rows)
        mine = {"selected": len(subset_rows), "eligible": eligible, "ineligible": len(subset_rows) - eligible}
        mine["coverage"] = eligible / len(subset_rows)
        theirs = {**counts, "coverage": unified["subsets"][subset]["coverage"]}
        for key, n in mine.items():
            if theirs[key] != n:
                r.refuse(subset, f"its rows give {key} {n}, unified.json {theirs[key]}; the two files are not from "
                         "one run (run fdbu score again)")


def read(root: Path) -> tuple[dict, dict[str, list[dict]], dict[str, str]]:
    """(unified.json, rows by subset in file order, both files' SHA-256) of a scored tree, every value checked."""
    root = Path(root)
    where = str(root)
    try:
        if not root.is_dir():
            raise FdbuError(where, None, "is not a directory")
        staging = interrupted(root)
    except OSError as e:  # a folder above it this user may not enter
        raise FdbuError(where, None, f"cannot be read: {e.strerror or e}") from None
    if staging:
        raise FdbuError(where, staging, "a scoring run was stopped while moving its outputs in (some may be "
                        "new, some old): rerun fdbu score on this tree, which finishes the move")
    raw = _file(root, UNIFIED)
    unified = _unified(root, raw)
    for file in ("manifest.json", "asr.json"):  # a tree rescored since, or changed after scoring
        if (root / file).exists() and sha256_bytes(_file(root, file)) != unified["inputs"][file]:
            raise FdbuError(where, file, f"changed after the tree was scored (unified.json was computed from "
                            f"sha256:{unified['inputs'][file][:12]}); run fdbu score again")
    raw_rows = _file(root, SAMPLES)
    rows_sha256 = sha256_bytes(raw_rows)
    if rows_sha256 != unified[ROWS_SHA256]:
        raise FdbuError(where, SAMPLES, f"has SHA-256 {rows_sha256[:12]}..., not the {ROWS_SHA256} "
                        f"{unified[ROWS_SHA256][:12]}... unified.json records; the two files are not from one run "
                        "(run fdbu score again)")
    rows = _rows(root, raw_rows)
    _paired(root, unified, rows)
    _view_records(_Reader(root, SAMPLES), unified, rows)
    return unified, rows, {UNIFIED: sha256_bytes(raw), SAMPLES: rows_sha256}
