"""A compare.json read back (`fdbu report`'s report.compare), as strictly as `fdbu compare` reads a scored tree
(fdbu.scoring.scored): every key the report and its figures use, of the type and range fdbu compare writes, the pairs and
metrics exactly those of these trees; anything else refused in one line naming the file and the key."""
from __future__ import annotations

import json
import math

from .. import tasks
from ..errors import FdbuError
from ..metrics.paired import UNDEFINED
from .marks import family_name
from ..config.settings import HOLM_FAMILIES, HOLM_FAMILY, MAX_INT, WIDTHS
from .systems import family_sections, pairs_of, pooled_over, pooled_table, view_scopes

FLAGS = (None, "+inf", "-inf")


class _Bad(Exception):
    """A key of compare.json that is not what fdbu compare writes: (path, problem)."""


def _is(value, kinds: tuple) -> bool:
    """Whether `value` is of one of `kinds`: "null", "bool", "int", "number" (int or finite float; a bool is
    neither), "str", "list", "dict"."""
    number = isinstance(value, (int, float)) and not isinstance(value, bool) and (
        isinstance(value, int) or math.isfinite(value))
    return any({"null": value is None, "bool": type(value) is bool, "int": number and isinstance(value, int),
                "number": number, "str": isinstance(value, str), "list": isinstance(value, list),
                "dict": isinstance(value, dict)}[k] for k in kinds)


def _at(doc, key, path: str, kinds: tuple, check=None, what: str = ""):
    """doc[key], refused unless it is of one of `kinds` and passes `check`."""
    here = f"{path}.{key}" if path else str(key)
    if not isinstance(doc, dict) or key not in doc:
        raise _Bad(here, "is missing")
    value = doc[key]
    if not _is(value, kinds) or (check is not None and not check(value)):
        shown = json.dumps(value, allow_nan=True, default=str)
        raise _Bad(here, f"is {shown if len(shown) <= 40 else shown[:37] + '...'}, not {what}")
    return value


NUMBER = ("number",)
_UNIT = lambda v: v is None or 0.0 <= v <= 1.0  # noqa: E731
# a compared line's keys beyond the metric's declared kind, better and headline, and its difference's: (key, the
# JSON types it may be, the check, what it must be), as read_result checks them and the docs' schema page lists them
LINE = (("n", ("int",), lambda v: 0 <= v <= MAX_INT, "a count of samples"),
        ("p", ("null", "number"), _UNIT, "null or a p-value in [0, 1]"),
        ("p_holm", ("null", "number"), _UNIT, "null or a p-value in [0, 1]"),
        ("reason", ("null", "str"), None, "null or a text"),
        ("family", ("null", "str"), None, "null or a text"),
        ("marker", ("bool",), None, "true or false"),
        ("difference", ("dict",), None, "an object"))
DIFFERENCE = (("value", ("null", "number"), None, "null or a finite number"),
              # undefined: no pairs, or both medians not reached (fdbu.metrics.paired.paired_line); then no interval
              ("value_flag", ("null", "str"), lambda v: v in (*FLAGS, UNDEFINED), f"null, '+inf', '-inf' or '{UNDEFINED}'"),
              ("interval", ("null", "list"), lambda v: v is None or len(v) == 2, "null or [lo, hi]"),
              ("interval_flags", ("null", "list"), lambda v: v is None or (len(v) == 2 and all(f in FLAGS for f in v)),
               "two of null, '+inf', '-inf' (null: no interval)"))


# compare.json's keys above its lines: path -> (the JSON types it may be, what it must be), as read_result checks them
# and the docs' schema page lists them (where a check depends on the trees, the reader's message names them)
SHAPE = {"generator": (("str",), "'fdbu'"), "kind": (("str",), "'compare'"),
         "systems": (("list",), "a list of the compared systems"), "systems[k].name": (("str",), "a name"),
         "systems[k].sha256": (("str", "dict"), "the trees' SHA-256"),
         "comparison": (("dict",), "an object"), "comparison.baseline": (("str",), "one of the systems' names"),
         "comparison.alpha": (NUMBER, "a number in (0, 1)"), "comparison.pairs": (("str",), "'baseline' or 'all'"),
         "comparison.holm_family": (("str",), f"one of {list(HOLM_FAMILIES)}"),
         "bootstrap": (("dict",), "an object"), "bootstrap.resamples": (("int",), "the trees' resamples"),
         "bootstrap.seed": (("int",), "the trees' seed"), "pairs": (("list",), "a list"),
         "pairs[k].a": (("str",), "a system"), "pairs[k].b": (("str",), "a system"),
         "pairs[k].subsets": (("dict",), "an object"), "pairs[k].entries": (("dict",), "an object"),
         "pairs[k].views": (("dict",), "an object"),
         "figures": (("dict",), "an object, where compare drew its figures (an older compare.json may lack it)"),
         "figures.width": (("str",), f"one of {list(WIDTHS)}"),
         "figures.sha256": (("dict",), "each figure file's SHA-256 (64 lowercase hex digits), all four")}


def _of(doc, name: str, at: str, check=None, what: str | None = None):
    """doc's key `name` (a SHAPE path) read at `at`: of SHAPE's types, passing `check`; `what` in place of SHAPE's
    words where the check depends on the trees."""
    kinds, said = SHAPE[name]
    return _at(doc, name.rsplit(".", 1)[-1], at, kinds, check, said if what is None else what)


def _line(line, path: str, metric, alpha: float) -> None:
    """One compared metric as the report reads it: the decision (marker, p, p_holm, reason) and the difference the
    forest draws, each of the type and range fdbu compare writes, and the metric what the registry declares."""
    for key, want in (("kind", metric.kind), ("better", metric.better), ("headline", metric.headline)):
        _at(line, key, path, ("bool" if isinstance(want, bool) else "str",), lambda v, w=want: v == w,
            f"{want!r} (the metric's declared {key})")
    got = {key: _at(line, key, path, kinds, check, what) for key, kinds, check, what in LINE}
    p, holm, marker, d = got["p"], got["p_holm"], got["marker"], got["difference"]
    if marker and (holm is None or p is None or not holm < alpha):
        raise _Bad(f"{path}.marker", f"is true, but p_holm {holm} is not below alpha {alpha}")
    here = f"{path}.difference"
    diff = {key: _at(d, key, here, kinds, check, what) for key, kinds, check, what in DIFFERENCE}
    flag, interval = diff["value_flag"], diff["interval"]
    if diff["interval_flags"] is None and interval is not None:
        raise _Bad(f"{here}.interval_flags", f"is null, not {DIFFERENCE[3][3]}")
    if flag == UNDEFINED and (d.get("value") is not None or interval is not None or p is not None or holm is not None
                              or marker):
        raise _Bad(f"{here}.value_flag", f"is '{UNDEFINED}', but a value, an interval, a p or a marker is given")
    for k in range(2 if interval is not None else 0):
        _at(dict(enumerate(interval)), k, f"{here}.interval", ("null", "number"), None, "null or a finite number")


def _table(entry, here: str, declared, what: str, alpha: float) -> None:
    """A section's `metrics`: exactly the declared lines, in order, each as fdbu compare writes it."""
    lines = _at(entry, "metrics", here, ("dict",), None, "an object")
    if list(lines) != [m.name for m in declared]:
        raise _Bad(f"{here}.metrics", f"names {sorted(lines)}, not {what}")
    for m in declared:
        _at(lines, m.name, f"{here}.metrics", ("dict",), None, "an object")
        _line(lines[m.name], f"{here}.metrics.{m.name}", m, alpha)


def _pair(pair, path: str, systems: list, alpha: float) -> tuple:
    """One pair of a compare.json handed to the report, checked (its subsets' metrics, its family entries' compared
    lines, its views' numbers); -> its (a, b)."""
    ab = (_of(pair, "pairs[k].a", path), _of(pair, "pairs[k].b", path))
    subsets = _of(pair, "pairs[k].subsets", path)
    for subset, entry in subsets.items():
        here = f"{path}.subsets.{subset}"
        if subset not in tasks.SUBSETS or not tasks.subset(subset).task.scored:
            raise _Bad(here, "is not a subset fdbu compare compares")
        if not isinstance(entry, dict) or not ("metrics" in entry or "dropped" in entry):
            raise _Bad(here, "is not an object with 'metrics' (or 'dropped')")
        if "metrics" not in entry:
            continue
        declared = tasks.metric_table(subset, systems[0].unified if systems else None)
        _table(entry, here, declared, f"the metrics of {subset} ({', '.join(m.name for m in declared)})",
               alpha)
    for key, by in _of(pair, "pairs[k].entries", path).items() if "entries" in pair else ():
        for subset, entry in by.items() if isinstance(by, dict) else [("", None)]:
            here = f"{path}.entries.{key}.{subset}"
            compared = next((e.compared for e in tasks.family(subset).entries if e.key == key),
                            None) if "metrics" in subsets.get(subset, {}) else None
            if compared is None:
                raise _Bad(here, "is not a family entry fdbu compare compares, on a subset compared")
            declared = compared.lines(subset, systems[0].unified)
            _table(entry, here, declared, f"the compared lines of {key} "
                   f"({', '.join(m.name for m in declared)})", alpha)
    for view, by in _of(pair, "pairs[k].views", path).items() if "views" in pair else ():
        for subset, entry in by.items() if isinstance(by, dict) else [("", None)]:
            here = f"{path}.views.{view}.{subset}"
            table = pooled_table(systems[0].unified, view) if subset == "pooled" else None
            scope = view_scopes(systems[0].unified, subset).get(view) if subset in tasks.SUBSETS else None
            table = scope.table if scope is not None else table
            if table is None:
                raise _Bad(here, "is not a view these trees were scored with, on a subset it covers")
            if subset == "pooled":  # the subsets it pooled: two or more of the view's, each once
                pooled_in = pooled_over(systems[0].unified, view)
                _at(entry, "over", here, ("list",), lambda v, known=pooled_in: len(v) >= 2 and
                    len(set(map(str, v))) == len(v) and all(x in known for x in v),
                    f"two or more of {pooled_in}, each once")
            _table(entry, here, table, f"the {view} view's metrics", alpha)
    return ab


def _figures(result: dict) -> None:
    from ..scoring.scored import HEX64
    from .files import FIGURE_FILES

    f = _of(result, "figures", "")
    _of(f, "figures.width", "figures", lambda v: v in WIDTHS)
    _of(f, "figures.sha256", "figures", lambda v: set(v) == set(FIGURE_FILES) and all(
        isinstance(x, str) and HEX64.fullmatch(x) for x in v.values()))


def read_result(result, systems: list, where: str) -> dict:
    """A compare.json handed to `fdbu report` (report.compare), read as strictly as `fdbu compare` reads a
    scored tree: every key the report and its figures use, of the type and range fdbu compare writes (no
    NaN or infinity where it writes none), the pairs and metrics exactly those of these trees, and of
    exactly these trees (names and the SHA-256 of their unified.json and rows); anything else is refused in
    one line naming the file and the key."""
    try:
        if not isinstance(result, dict):
            raise _Bad("(top level)", "is not an object")
        _of(result, "generator", "", lambda v: v == "fdbu")
        _of(result, "kind", "", lambda v: v == "compare")
        listed = _of(result, "systems", "", lambda v: len(v) > 0)
        theirs = {}
        for k, entry in enumerate(listed):
            name = _of(entry, "systems[k].name", f"systems[{k}]") if isinstance(entry, dict) else None
            if name is None:
                raise _Bad(f"systems[{k}]", "is not an object with a name and a sha256")
            theirs[name] = _of(entry, "systems[k].sha256", f"systems[{k}]")
        mine = {s.name: s.sha256 for s in systems}
        if theirs != mine or len(listed) != len(theirs):
            raise FdbuError(where, "compare.json", f"compares {sorted(theirs)}, not these trees {sorted(mine)} as "
                            "they are now (names and the sha256 of unified.json and unified-samples.jsonl must "
                            "match); run fdbu compare again or leave report.compare out")
        names = [s.name for s in systems]
        c = _of(result, "comparison", "")
        baseline = _of(c, "comparison.baseline", "comparison", lambda v: v in names, f"one of {names}")
        alpha = _of(c, "comparison.alpha", "comparison", lambda v: 0 < v < 1)
        mode = _of(c, "comparison.pairs", "comparison", lambda v: v in ("baseline", "all"))
        c.setdefault("holm_family", HOLM_FAMILY)  # before compare.family, every compare.json decided per subset
        _of(c, "comparison.holm_family", "comparison", lambda v: v in HOLM_FAMILIES)
        b = _of(result, "bootstrap", "")
        own = systems[0].unified.get("bootstrap", {})
        for key in ("resamples", "seed"):
            _of(b, f"bootstrap.{key}", "bootstrap", lambda v, k=key: v == own.get(k), f"the trees' {key}, {own.get(key)}")
        pairs = _of(result, "pairs", "")
        want = pairs_of(names, baseline, mode)
        got = []
        for k, pair in enumerate(pairs):
            got.append(_pair(pair, f"pairs[{k}]", systems, alpha))
        if got != want:
            raise _Bad("pairs", f"are {got}, not the pairs of {names} with baseline {baseline} ({mode})")
        for k, pair in enumerate(pairs):  # each decided line in the family comparison.holm_family names
            for section_family, view, (name, entry) in family_sections(pair):
                for metric, line in entry.get("metrics", {}).items():
                    want_family = family_name(c["holm_family"], mode, pair, section_family, view)
                    if line["family"] is not None and line["family"] != want_family:
                        raise _Bad(f"pairs[{k}] {name}: {metric}.family", f"is {line['family']!r}, not "
                                   f"{want_family!r} (comparison.holm_family {c['holm_family']})")
        if "figures" in result:  # what the report takes as they are where the files still match (files.taken)
            _figures(result)
    except _Bad as e:
        path, problem = e.args
        raise FdbuError(where, "compare.json", f"{path} {problem}; it is not what fdbu compare wrote (run fdbu "
                        "compare again, or leave report.compare out)") from None
    return result
