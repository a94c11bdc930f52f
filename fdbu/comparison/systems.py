"""Scored trees as `fdbu compare` and `fdbu report` read them: a `System` (a tree's unified.json and rows, read and
checked by fdbu.scoring.scored, and the rows shown to give unified.json's numbers back), and the `Scope` of one subset's
comparison: its unified metrics (its task's module) or another benchmark's numbers on it (fdbu.views); and the
shape of a comparison every reader of one shares (its pairs, a pair's sections, the trees' bootstrap)."""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..scoring import scored
from .. import tasks
from ..errors import FdbuError
from ..metrics.stats import Bootstrap
from ..metrics.table import aggregate
from ..scoring.scored import SAMPLES


@dataclass
class System:
    """One scored tree: its unified.json and its rows by subset (file order, which is manifest order)."""

    name: str
    root: Path
    unified: dict
    rows: dict[str, list[dict]]
    sha256: dict[str, str]

    @property
    def where(self) -> str:
        return str(self.root)


def load(root: Path, name: str) -> System:
    """A scored tree: unified.json and unified-samples.jsonl, refused when missing, not fdbu's, stale, or
    holding anything fdbu does not write (`fdbu.scoring.scored`)."""
    unified, rows, sha256 = scored.read(Path(root))
    system = System(name, Path(root), unified, rows, sha256)
    _check_rows(system)
    _check_pooled(system)
    return system


def components(system: System, subset: str, rows: list[dict]):
    """The components of these (eligible) rows; a row lacking a field is refused, naming its sample."""
    module = tasks.subset(subset).task.metric_module
    try:
        return module.from_rows(rows, subset, system.unified)
    except (KeyError, TypeError, ValueError, IndexError) as e:
        for row in rows:
            try:
                module.from_rows([row], subset, system.unified)
            except (KeyError, TypeError, ValueError, IndexError):
                raise FdbuError(system.where, SAMPLES, f"{row['sample_id']}: the row lacks a field or has a value "
                                f"of the wrong type ({type(e).__name__}: {e})") from None
        raise


def _check_rows(system: System) -> None:
    """The rows must give unified.json's numbers back (every field but the bootstrap intervals), so the
    comparison is made from the run unified.json reports."""
    seed = system.unified["bootstrap"]["seed"]
    for subset, rows in system.rows.items():
        entry = system.unified["subsets"][subset]
        eligible = [r for r in rows if r["eligible"]]
        module = tasks.subset(subset).task.metric_module
        c = components(system, subset, eligible)
        metrics, _ = module.aggregate(c, selected=len(rows), ineligible=len(rows) - len(eligible),
                                      boot=Bootstrap(1, seed))
        _same(system, metrics, entry.get("metrics", {}), f"{subset}: its rows give ")
        for view, scope in view_scopes(system.unified, subset).items():  # and each view's numbers (fdbu.views)
            c = scope.components(system, eligible)
            mine = aggregate(scope.table, c, scope.populations(c), selected=len(rows),
                             ineligible=len(rows) - len(eligible), boot=Bootstrap(1, seed))
            _same(system, mine, scope.entry(system).get("metrics", {}), f"{subset}: its rows give the {view} view's ")


def _same(system: System, mine: dict, theirs: dict, said: str) -> None:
    """Each record the rows give equals unified.json's, every field but the bootstrap's (interval, resamples
    kept); else one line naming the first field that differs."""
    for name, rec in mine.items():
        other = theirs.get(name)
        for key, value in rec.items():
            if key.endswith("interval") or key == "resamples_kept":  # the bootstrap's
                continue
            if not isinstance(other, dict) or other.get(key) != value:
                got = other.get(key) if isinstance(other, dict) else None
                raise FdbuError(system.where, SAMPLES, f"{said}{name} {key} {value!r}, unified.json {got!r}; the two "
                                "files are not from one run (run fdbu score again)")


def pooled_over(unified: dict, view: str) -> list[str]:
    """The subsets a tree's view pools (its pooled share's `over`), none when it has no pooled share."""
    pooled: dict = unified.get("views", {}).get(view, {}).get("pooled") or {}
    first: dict = next(iter(pooled.values()), {})
    return list(first.get("over", []))


def pooled_table(unified: dict, view: str) -> tuple | None:
    """A view's pooled share as a table of one metric, where unified.json has it (compare.json's "pooled")."""
    from ..views import VIEWS

    spec = VIEWS.get(view)
    has = spec is not None and spec.pooled is not None and "pooled" in unified.get("views", {}).get(view, {})
    return (spec.pooled_metric(),) if has and spec is not None else None


def _check_pooled(system: System) -> None:
    """A view's pooled share is what its subsets' rows give (`fdbu.views.pooled_share`, as score made it)."""
    from ..views import VIEWS, part_on, pooled_share

    for view in system.unified.get("views", {}):
        spec, over = VIEWS[view], pooled_over(system.unified, view)
        if over:
            parts = [(subset, [r for r in system.rows.get(subset, []) if r["eligible"]],
                      part_on(spec, subset), len(system.rows.get(subset, []))) for subset in over]
            _same(system, {str(spec.pooled): pooled_share(spec, view, parts)},
                  system.unified["views"][view]["pooled"], f"its rows give the {view} view's ")


def view_scopes(unified: dict, subset: str) -> dict[str, "Scope"]:
    """The views unified.json holds numbers of on `subset` (fdbu.views), as scopes to compare."""
    from ..views import VIEWS

    out = {}
    for view, entry in unified.get("views", {}).items():
        if subset in entry.get("subsets", {}):
            out[view] = Scope.view(subset, view, VIEWS[view].settings.of(entry["settings"]))
    return out


def _populations(subset: str) -> list[str]:
    """The populations other than the eligible samples that the subset's metrics are over."""
    table = tasks.metric_table(subset)
    return list(dict.fromkeys(m.over for m in table if m.over != "eligible"))


@dataclass(frozen=True)
class Scope:
    """What a comparison of one subset reads: the unified metrics (its task's module), or another benchmark's
    numbers on it (fdbu.views): the declared table, the components of rows, the populations, and the unified.json
    entry whose records the selected bounds come from."""

    subset: str
    table: tuple
    components: Any       # (system, eligible rows) -> components
    populations: Any      # components -> {population: mask}
    entry: Any            # system -> the unified.json entry holding "metrics"
    pop_names: tuple

    @staticmethod
    def unified(subset: str, settings: dict | None = None) -> "Scope":
        module = tasks.subset(subset).task.metric_module
        return Scope(subset, tasks.metric_table(subset, settings), lambda s, rows: components(s, subset, rows),
                     module.populations, lambda s: s.unified["subsets"][subset], tuple(_populations(subset)))

    @staticmethod
    def view(subset: str, view: str, settings: Any) -> "Scope":
        from ..views import VIEWS, Records, part_on

        part = part_on(VIEWS[view], subset)
        table = part.table(settings)

        def read(s: System, rows: list[dict]):
            try:
                return Records(rows, view, part.fields)
            except (KeyError, TypeError, ValueError, OverflowError) as e:
                bad = next((r for r in rows if not isinstance(r.get("views"), dict)
                            or not isinstance(r["views"].get(view), dict)), rows[0])
                raise FdbuError(s.where, SAMPLES, f"{bad['sample_id']}: the row lacks the {view} record or one of "
                                f"its fields ({type(e).__name__}: {e}); run fdbu score views=[{view}] again") from None
        return Scope(subset, table, read, part.populations, lambda s: s.unified["views"][view]["subsets"][subset],
                     tuple(dict.fromkeys(m.over for m in table if m.over != "eligible")))


def _bootstrap(sig: dict) -> Bootstrap:
    """The trees' own bootstrap settings (equal in every tree): the comparison draws as unified.json did."""
    return Bootstrap(sig["bootstrap"]["resamples"], sig["bootstrap"]["seed"])


def sections(pair: dict) -> list[tuple[str, dict]]:
    """A pair's compared sections: each subset's unified metrics, then each family entry compared on it (v1.5's
    matched control, "control on SUBSET": in the subset's Holm family), then each view's numbers on it (its own Holm
    family, named "VIEW on SUBSET")."""
    return [name_entry for _, _, name_entry in family_sections(pair)]


def family_sections(pair: dict) -> list[tuple[str, str | None, tuple[str, dict]]]:
    """`sections` with the subset's Holm family each belongs to (compare.family=subset: a subset's and its entries'
    lines one family, a view's section its own) and the view it is in terms of (None: the unified metrics)."""
    return [*((s, None, (s, e)) for s, e in pair["subsets"].items()),
            *((s, None, (f"{key} on {s}", e)) for key, by in pair.get("entries", {}).items() for s, e in by.items()),
            *((f"{view} on {s}", view, (f"{view} on {s}", e)) for view, by in pair.get("views", {}).items()
              for s, e in by.items())]


def pairs_of(names: list[str], baseline: str, pairs: str) -> list[tuple[str, str]]:
    """(a, b) pairs, difference b - a: each system against the baseline, or every pair, the baseline first (so
    it is a in each of its pairs) and the others in the order given."""
    if pairs == "all":
        return list(itertools.combinations([baseline] + [n for n in names if n != baseline], 2))
    return [(baseline, n) for n in names if n != baseline]
