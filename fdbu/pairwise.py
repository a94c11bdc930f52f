"""`fdbu compare`: scored trees of several systems, compared pair by pair on the same samples.

The spec's rule ("To compare two systems"): rows of unified-samples.jsonl are paired by
sample_id over the samples eligible in both trees, and a metric over the exercised samples
(its `Metric.over`) over those exercised in both. For every pair and every metric of every
subset: each system's record on the paired samples (unified.json's rules), the difference
B - A with its interval and the test that decides it (`fdbu.metrics.paired`), Holm's adjustment
over the headline metrics (`decide`: the marker is p_holm < alpha), warnings where the paired set
is small or a minority, and beside them what pairing does not fix: both
systems' coverage, exercised_rate and selected bounds from their unified.json, and for
interruption who was exercised. The per-sample components come back from the rows
(`from_rows` of each task's metric module), checked against unified.json first.
"""
from __future__ import annotations

import csv
import io
import itertools
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np

from . import scored, tasks
from .version import __version__
from .atomic import dumps
from .errors import FdbuError
from .settings import MAX_INT, WIDTH
from .metrics.paired import (ALPHA, MIN_BOOTSTRAP_PAIRS, PLUS_INF, UNDEFINED, min_discordant, difference,
                             holm, too_few)
from .metrics.stats import Bootstrap
from .metrics.table import SHARE, aggregate
from .outputs import Outputs
from .cells import csv_text, difference_text, fmt, p_text, record_text, split_reached
from .unified import ROWS_SHA256, SAMPLES, UNIFIED

# what may differ between the signatures of compared trees: the inputs, and fdbu's version (the
# definitions version pins the metric math); everything else (definitions, settings, speech
# detection, bootstrap, share interval, quantile rule) must be equal
MAY_DIFFER = ("inputs", "fdbu_version", "subsets", ROWS_SHA256, "transcripts")  # transcripts: `mixed_transcripts`
VIEW_HEAD = ("title", "source", "settings", "not_computable")  # what compared trees' views share (fdbu.views)
FILES = ("compare.json", "compare.csv")
FIGURES = ("compare-latency-curves", "compare-forest")
FORMATS = ("png", "pdf")
DIFFERENCE = ("b - a: system b's value minus system a's, over the samples paired for the metric (eligible in "
              "both; exercised in both for a metric over the exercised samples)")


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
    holding anything fdbu does not write (`fdbu.scored`)."""
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
            if key in ("interval", "resamples_kept"):
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
    from .views import VIEWS

    spec = VIEWS.get(view)
    has = spec is not None and spec.pooled is not None and "pooled" in unified.get("views", {}).get(view, {})
    return (spec.pooled_metric(),) if has and spec is not None else None


def _check_pooled(system: System) -> None:
    """A view's pooled share is what its subsets' rows give (`fdbu.views.pooled_share`, as score made it)."""
    from .views import VIEWS, pooled_share

    for view in system.unified.get("views", {}):
        spec, over = VIEWS[view], pooled_over(system.unified, view)
        if over:
            parts = [(subset, [r for r in system.rows.get(subset, []) if r["eligible"]],
                      spec.parts[tasks.subset(subset).task.name], len(system.rows.get(subset, []))) for subset in over]
            _same(system, {str(spec.pooled): pooled_share(spec, view, parts)},
                  system.unified["views"][view]["pooled"], f"its rows give the {view} view's ")


def view_scopes(unified: dict, subset: str) -> dict[str, "Scope"]:
    """The views unified.json holds numbers of on `subset` (fdbu.views), as scopes to compare."""
    from .views import VIEWS

    out = {}
    for view, entry in unified.get("views", {}).items():
        if subset in entry.get("subsets", {}):
            out[view] = Scope.view(subset, view, VIEWS[view].settings.of(entry["settings"]))
    return out


def _first_difference(a, b, path: str = "") -> str | None:
    """The first key path where two signature values differ, with both values."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in list(a) + [k for k in b if k not in a]:
            found = _first_difference(a.get(key), b.get(key), f"{path}.{key}" if path else key)
            if found:
                return found
        return None
    return None if a == b else f"{path}: {json.dumps(a)} vs {json.dumps(b)}"


def signature(systems: list[System]) -> dict:
    """The signature every tree shares (refused when any differs in more than its inputs)."""
    def head(s: System) -> dict:
        out = {k: v for k, v in s.unified.items() if k not in MAY_DIFFER}
        if "views" in out:  # a view's definitions and settings, not its numbers
            out["views"] = {n: {k: v[k] for k in VIEW_HEAD} for n, v in out["views"].items()}
        return out

    first = systems[0]
    for other in systems[1:]:
        found = _first_difference(head(first), head(other))
        if found:
            raise FdbuError(other.where, UNIFIED, f"was scored with other settings than {first.name} ({first.where}): "
                            f"{found}; compare needs trees scored with the same definitions, speech detection and "
                            "bootstrap settings")
    return head(first)


def mixed_transcripts(systems: list[System], allow: bool) -> bool:
    """Whether the trees' transcripts came from different sources (adopted from the official asr.py, fdbu asr,
    synth): refused unless `allow`, since a difference would then include the two ASR runs'."""
    def source(s: System) -> str:
        return (s.unified.get("transcripts") or {}).get("source", "unrecorded")

    first = systems[0]
    for other in systems[1:]:
        if source(other) != source(first) and not allow:
            raise FdbuError(other.where, UNIFIED, f"its transcripts are {source(other)!r}, {first.name}'s "
                            f"({first.where}) {source(first)!r}; pass compare.allow_mixed_transcripts=true to "
                            "compare them anyway (the differences then include the two transcriptions')")
    return len({source(s) for s in systems}) > 1


def _bootstrap(sig: dict) -> Bootstrap:
    """The trees' own bootstrap settings (equal in every tree): the comparison draws as unified.json did."""
    return Bootstrap(sig["bootstrap"]["resamples"], sig["bootstrap"]["seed"])


def _inputs(row: dict, module) -> tuple:
    return tuple(row.get(f) for f in module.INPUTS)


def _pairing(a: System, b: System, subset: str, order: dict[str, int], allow: bool) -> tuple[list[str], dict,
                                                                                           dict, dict]:
    """The sample ids both trees hold (same id, same dataset fields), in the first tree's order, what
    was dropped, and each tree's rows by id; refused unless `allow` when the trees hold different samples."""
    module = tasks.subset(subset).task.metric_module
    ra = {r["sample_id"]: r for r in a.rows.get(subset, [])}
    rb = {r["sample_id"]: r for r in b.rows.get(subset, [])}
    only_a = [i for i in ra if i not in rb]
    only_b = [i for i in rb if i not in ra]
    differ = [i for i in ra if i in rb and ra[i]["eligible"] and rb[i]["eligible"]
              and _inputs(ra[i], module) != _inputs(rb[i], module)]
    dropped = {}
    if only_a or only_b or differ:
        parts = [f"{len(ids)} only in {who}" for ids, who in ((only_a, a.name), (only_b, b.name)) if ids]
        if differ:
            parts.append(f"{len(differ)} with other dataset fields ({', '.join(module.INPUTS)}), e.g. {differ[0]}")
        example = (only_a or only_b or differ)[0]
        if not allow:
            raise FdbuError(b.where, SAMPLES, f"{subset}: the trees of {a.name} and {b.name} hold different samples "
                            f"({'; '.join(parts)}; e.g. {example}); pass compare.allow_different_samples=true to "
                            "compare the samples both hold")
        dropped = {f"only_in_{a.name}": only_a, f"only_in_{b.name}": only_b, "different_dataset_fields": differ}
    excluded = set(differ)
    common = [i for i in ra if i in rb and i not in excluded]
    position = {i: k for k, i in enumerate(ra)}
    common.sort(key=lambda i: (order.get(i, len(order)), position[i]))
    return common, dropped, ra, rb


def _context(s: System, subset: str, scope: "Scope | None" = None) -> dict:
    entry = s.unified["subsets"][subset]
    out = {"coverage": entry.get("coverage")}
    for pop in _populations(subset) if scope is None else ():  # a view's context is the subset's coverage
        rate = entry.get("metrics", {}).get(f"{pop}_rate")
        out[f"{pop}_rate"] = rate.get("value") if isinstance(rate, dict) else None
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
        from .views import VIEWS, Records

        part = VIEWS[view].parts[tasks.subset(subset).task.name]
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


def compare_pair(a: System, b: System, subset: str, order: dict[str, int], boot: Bootstrap, allow: bool,
                 alpha: float = ALPHA, scope: Scope | None = None) -> dict:
    """Every metric of one subset for the pair (a, b): b - a on the paired samples; `scope`: another benchmark's
    numbers on the subset (fdbu.views) instead of the unified metrics."""
    own = scope or Scope.unified(subset, a.unified)  # the trees share their settings (signature)
    common, dropped, ra, rb = _pairing(a, b, subset, order, allow)
    paired = [i for i in common if ra[i]["eligible"] and rb[i]["eligible"]]
    ca = own.components(a, [ra[i] for i in paired])
    cb = own.components(b, [rb[i] for i in paired])
    pa, pb = own.populations(ca), own.populations(cb)
    both = {k: pa[k] & pb[k] for k in pa}
    samples = {"in_both": len(common), "eligible_in_both": len(paired),
               f"eligible_only_in_{a.name}": sum(ra[i]["eligible"] and not rb[i]["eligible"] for i in common),
               f"eligible_only_in_{b.name}": sum(rb[i]["eligible"] and not ra[i]["eligible"] for i in common),
               "eligible_in_neither": sum(not ra[i]["eligible"] and not rb[i]["eligible"] for i in common)}
    populations = {pop: {"both": int(np.count_nonzero(pa[pop] & pb[pop])),
                         "only_a": int(np.count_nonzero(pa[pop] & ~pb[pop])),
                         "only_b": int(np.count_nonzero(~pa[pop] & pb[pop])),
                         "neither": int(np.count_nonzero(~pa[pop] & ~pb[pop]))} for pop in own.pop_names}
    table = own.table
    records = [aggregate(table, c, both, selected=len(paired), ineligible=0, boot=boot) for c in (ca, cb)]
    metrics = {}
    for m in table:
        rec_a, rec_b = ({k: v for k, v in r[m.name].items() if k != "selected_bounds"} for r in records)
        line = difference(m, ca, cb, both[m.over], boot, alpha)
        entry = {"kind": m.kind, "better": m.better, "headline": m.headline, "over": m.over,
                 "n": int(np.count_nonzero(both[m.over])), "a": rec_a, "b": rec_b, **line}
        if m.kind == SHARE:
            entry["selected_bounds"] = {"a": own.entry(a)["metrics"][m.name].get("selected_bounds"),
                                        "b": own.entry(b)["metrics"][m.name].get("selected_bounds")}
        metrics[m.name] = entry
    out: dict[str, Any] = {"samples": samples}
    if dropped:
        out["dropped"] = dropped
    if populations:
        out["populations"] = populations
    out["context"] = {"a": _context(a, subset, scope), "b": _context(b, subset, scope)}
    out["warnings"] = warnings(a, b, subset, samples, populations, alpha)
    out["metrics"] = metrics
    return out


def compare_pooled(a: System, b: System, view: str, subsets: list[str], order: dict, boot: Bootstrap, allow: bool,
                   alpha: float = ALPHA) -> dict:
    """A view's pooled share (VideoFDB's TOR-Alignment) for the pair: each subset's samples paired as compare_pair
    pairs them (eligible in both), pooled, and the one line decided as a share is (its own Holm family)."""
    from .views import VIEWS, Records

    spec = VIEWS[view]
    metric = spec.pooled_metric()
    rows_a, rows_b, in_both = [], [], 0
    for subset in subsets:
        common, _, ra, rb = _pairing(a, b, subset, order.get(subset, {}), allow)
        in_both += len(common)
        part = spec.parts[tasks.subset(subset).task.name]
        for i in common:
            if ra[i]["eligible"] and rb[i]["eligible"]:
                rows_a.append({"views": {view: {"passes": ra[i]["views"][view][str(part.passes)]}}})
                rows_b.append({"views": {view: {"passes": rb[i]["views"][view][str(part.passes)]}}})
    ca, cb = (Records(rows, view, {"passes": "flag"}) for rows in (rows_a, rows_b))
    both = {"eligible": np.ones(len(rows_a), bool)}
    records = [aggregate((metric,), c, both, selected=len(rows_a), ineligible=0, boot=boot)[metric.name]
               for c in (ca, cb)]
    line = difference(metric, ca, cb, both["eligible"], boot, alpha)
    rec_a, rec_b = ({k: v for k, v in r.items() if k != "selected_bounds"} for r in records)
    bounds = {side: s.unified["views"][view]["pooled"][metric.name].get("selected_bounds")
              for side, s in (("a", a), ("b", b))}
    entry = {"kind": metric.kind, "better": metric.better, "headline": metric.headline, "over": metric.over,
             "n": len(rows_a), "a": rec_a, "b": rec_b, **line, "selected_bounds": bounds}
    return {"samples": {"in_both": in_both, "eligible_in_both": len(rows_a)},
            "context": {"a": {"coverage": None}, "b": {"coverage": None}}, "over": subsets,
            "warnings": warnings_small(len(rows_a), alpha), "metrics": {metric.name: entry}}


def warnings_small(n: int, alpha: float) -> list[str]:
    """The small-paired-set warning (`warnings`' first)."""
    if 0 < n < MIN_BOOTSTRAP_PAIRS:
        return [f"small paired set: {n} samples eligible in both; pooled ratios and medians are tested from "
                f"{MIN_BOOTSTRAP_PAIRS} pairs, shares from {min_discordant(alpha)} discordant pairs"]
    return []


def warnings(a: System, b: System, subset: str, samples: dict, populations: dict, alpha: float) -> list[str]:
    """What the console says about a pair and subset whose paired set is small, or is a minority of the samples
    either system has eligible (or exercised)."""
    n = samples["eligible_in_both"]
    out = warnings_small(n, alpha)
    counts = {"eligible": (n, sum(r["eligible"] for r in a.rows[subset]), sum(r["eligible"] for r in b.rows[subset]))}
    for pop, t in populations.items():
        counts[pop] = (t["both"], t["both"] + t["only_a"], t["both"] + t["only_b"])
    for pop, (both, in_a, in_b) in counts.items():
        most = max(in_a, in_b)
        if most and 2 * both < most:
            out.append(f"the pairing drops most {pop} samples: {both} {pop} in both, of {in_a} in {a.name} and "
                       f"{in_b} in {b.name}; the comparison covers a minority of what each system was scored on")
    return out


def decide(pairs: list[dict], pairs_mode: str, alpha: float) -> None:
    """Holm's adjustment and the marker, in place: one family per subset and pair (each system against the
    baseline), or per subset across every pair (compare.pairs=all), of the headline lines whose test can decide;
    marker = p_holm < alpha. Every other line keeps its p (if any), p_holm null, no marker, and says why."""
    families: dict[str, list[dict]] = {}
    for pair in pairs:
        for subset, entry in sections(pair):
            for line in entry.get("metrics", {}).values():
                line["p_holm"], line["marker"], line["family"] = None, False, None
                if line["p"] is None or line["reason"] is not None:
                    continue
                if not line["headline"]:
                    line["reason"] = "not a headline metric: outside the Holm family, no marker"
                    continue
                line["family"] = f"{subset}, " + ("all pairs" if pairs_mode == "all" else f"{pair['b']} vs {pair['a']}")
                families.setdefault(line["family"], []).append(line)
    for lines in families.values():
        for line, adjusted in zip(lines, holm([x["p"] for x in lines])):
            line["p_holm"] = adjusted
            line["marker"] = cast(float, adjusted) < alpha  # every line in a family has a p


def sections(pair: dict) -> list[tuple[str, dict]]:
    """A pair's compared sections: each subset's unified metrics, then each view's numbers on it (its own Holm
    family, named "VIEW on SUBSET")."""
    return [*pair["subsets"].items(), *((f"{view} on {subset}", entry) for view, by in pair.get("views", {}).items()
                                        for subset, entry in by.items())]


def pairs_of(names: list[str], baseline: str, pairs: str) -> list[tuple[str, str]]:
    """(a, b) pairs, difference b - a: each system against the baseline, or every pair, the baseline first (so
    it is a in each of its pairs) and the others in the order given."""
    if pairs == "all":
        return list(itertools.combinations([baseline] + [n for n in names if n != baseline], 2))
    return [(baseline, n) for n in names if n != baseline]


def compare(systems: list[System], *, baseline: str | None = None, pairs: str = "baseline",
            allow_different_samples: bool = False, allow_mixed_transcripts: bool = False,
            alpha: float = ALPHA, progress: bool = False) -> dict:
    """compare.json as a dict; `progress`, a bar over the pairs' subsets on stderr (their paired bootstraps)."""
    from tqdm import tqdm

    sig = signature(systems)
    mixed = mixed_transcripts(systems, allow_mixed_transcripts)
    boot = _bootstrap(sig)
    by_name = {s.name: s for s in systems}
    baseline = baseline or systems[0].name
    head = {"generator": "fdbu", "fdbu_version": __version__, "kind": "compare", **sig}
    head["systems"] = [{"name": s.name, "fdbu_version": s.unified.get("fdbu_version"), "inputs": s.unified["inputs"],
                        "transcripts": s.unified.get("transcripts"), "sha256": s.sha256} for s in systems]
    head["mixed_transcripts"] = mixed
    head["comparison"] = {
        "baseline": baseline, "pairs": pairs, "difference": DIFFERENCE,
        "alpha": alpha,
        "interval": {"share": "exact conditional: the Clopper-Pearson 95% interval of the discordant pairs' split, "
                              "times (a_only + b_only) / n; it excludes 0 exactly when the McNemar p < 0.05",
                     "pooled_ratio and latency_quantiles": "paired percentile bootstrap: the draw of `bootstrap` "
                     "over the n paired samples, row r picking the same samples from both systems; the r-th and "
                     "(K + 1 - r)-th smallest of the K kept differences, r = ceil(K/40)"},
        "not_reached": "a median not reached is +infinity: +inf when only b's is not reached, -inf when only a's; a "
                       "resample where both are not reached is a tie (0); both point medians not reached: no "
                       "difference, interval or p (n/a, outside the family)",
        "test": {"share": "mcnemar_exact: min(1, 2 P(X <= min(a_only, b_only))), X ~ Binomial(a_only + b_only, "
                          "1/2); 1 without discordant pairs",
                 "pooled_ratio and latency_quantiles": "paired_bootstrap: min(1, 2 (min(k <= 0, k >= 0) + 1) / "
                                                       "(K + 1)) over the K kept resampled differences"},
        "too_few_pairs": f"no marker where the test cannot reach alpha: a share with fewer than "
                         f"{min_discordant(alpha)} discordant pairs, a pooled ratio or median over fewer than "
                         f"{MIN_BOOTSTRAP_PAIRS} pairs",
        "family": "Holm over the headline metrics whose test can decide: per subset"
                  + (", across all pairs" if pairs == "all" else " and pair") + "; marker: p_holm < alpha",
    }
    order = {subset: {r["sample_id"]: k for k, r in enumerate(rows)} for subset, rows in systems[0].rows.items()}
    head["pairs"] = []
    pairs_list = pairs_of([s.name for s in systems], baseline, pairs)
    bar = tqdm(total=len(pairs_list) * len(tasks.scored()), desc="compare", unit="subset",
               disable=None if progress else True)  # None: on a terminal only, never into a log
    for name_a, name_b in pairs_list:
        a, b = by_name[name_a], by_name[name_b]
        subsets = {}
        for subset in tasks.scored():
            bar.update()
            if subset not in a.rows and subset not in b.rows:
                continue
            if subset not in a.rows or subset not in b.rows:
                has, lacks = (a, b) if subset in a.rows else (b, a)
                if not allow_different_samples:
                    raise FdbuError(lacks.where, UNIFIED, f"has no {subset}, which {has.name} has; pass "
                                    "compare.allow_different_samples=true to compare the subsets both hold")
                subsets[subset] = {"dropped": {f"only_in_{has.name}": [r["sample_id"] for r in has.rows[subset]]}}
                continue
            subsets[subset] = compare_pair(a, b, subset, order.get(subset, {}), boot, allow_different_samples,
                                           alpha)
        pair: dict[str, Any] = {"a": name_a, "b": name_b, "subsets": subsets}
        views: dict[str, dict] = {view: {} for view in a.unified.get("views", {})}  # each view's subsets, in order
        for subset in (s for s in subsets if "metrics" in subsets[s]):
            for view, scope in view_scopes(a.unified, subset).items():
                views[view][subset] = compare_pair(a, b, subset, order.get(subset, {}), boot,
                                                   allow_different_samples, alpha, scope)
        for view, by in views.items():  # a pooled share (VideoFDB's TOR-Alignment) over the subsets compared
            over = [pooled_over(s.unified, view) for s in (a, b)]
            both = [s for s in over[0] if s in over[1] and s in by]
            if len(both) >= 2:  # over one subset it is that class's own line, already decided in its section
                by["pooled"] = compare_pooled(a, b, view, both, order, boot, allow_different_samples, alpha)
                left = sorted(set(over[0] + over[1]) - set(both))
                if left:
                    by["pooled"]["warnings"].append(f"pooled over the subsets both trees hold ({', '.join(both)}); "
                                                    f"left out: {', '.join(left)}")
        views = {view: by for view, by in views.items() if by}
        if views:
            pair["views"] = views
        head["pairs"].append(pair)
    bar.close()
    decide(head["pairs"], pairs, alpha)
    return head


# ---- reading a compare.json back (fdbu report's report.compare) ------------------------------------------------

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


def _line(line, path: str, metric, alpha: float) -> None:
    """One compared metric as the report reads it: the decision (marker, p, p_holm, reason) and the difference the
    forest draws, each of the type and range fdbu compare writes, and the metric what the registry declares."""
    for key, want in (("kind", metric.kind), ("better", metric.better), ("headline", metric.headline)):
        _at(line, key, path, ("bool" if isinstance(want, bool) else "str",), lambda v, w=want: v == w,
            f"{want!r} (the metric's declared {key})")
    _at(line, "n", path, ("int",), lambda v: 0 <= v <= MAX_INT, "a count of samples")
    unit = lambda v: 0.0 <= v <= 1.0  # noqa: E731
    p = _at(line, "p", path, ("null", "number"), lambda v: v is None or unit(v), "null or a p-value in [0, 1]")
    holm = _at(line, "p_holm", path, ("null", "number"), lambda v: v is None or unit(v), "null or a p-value in [0, 1]")
    _at(line, "reason", path, ("null", "str"), None, "null or a text")
    _at(line, "family", path, ("null", "str"), None, "null or a text")
    marker = _at(line, "marker", path, ("bool",), None, "true or false")
    if marker and (holm is None or p is None or not holm < alpha):
        raise _Bad(f"{path}.marker", f"is true, but p_holm {holm} is not below alpha {alpha}")
    d = _at(line, "difference", path, ("dict",), None, "an object")
    here = f"{path}.difference"
    _at(d, "value", here, ("null", "number"), None, "null or a finite number")
    # undefined: no pairs, or both medians not reached (fdbu.metrics.paired.paired_line); then no interval either
    flag = _at(d, "value_flag", here, ("null", "str"), lambda v: v in (*FLAGS, UNDEFINED),
               f"null, '+inf', '-inf' or '{UNDEFINED}'")
    interval = _at(d, "interval", here, ("null", "list"), lambda v: v is None or len(v) == 2, "null or [lo, hi]")
    _at(d, "interval_flags", here, ("null", "list"), lambda v: (v is None and interval is None) or
        (v is not None and len(v) == 2 and all(f in FLAGS for f in v)), "two of null, '+inf', '-inf' (null: no interval)")
    if flag == UNDEFINED and (d.get("value") is not None or interval is not None or p is not None or holm is not None
                              or marker):
        raise _Bad(f"{here}.value_flag", f"is '{UNDEFINED}', but a value, an interval, a p or a marker is given")
    for k in range(2 if interval is not None else 0):
        _at(dict(enumerate(interval)), k, f"{here}.interval", ("null", "number"), None, "null or a finite number")


def read_result(result, systems: list, where: str) -> dict:
    """A compare.json handed to `fdbu report` (report.compare), read as strictly as `fdbu compare` reads a
    scored tree: every key the report and its figures use, of the type and range fdbu compare writes (no
    NaN or infinity where it writes none), the pairs and metrics exactly those of these trees, and of
    exactly these trees (names and the SHA-256 of their unified.json and rows); anything else is refused in
    one line naming the file and the key."""
    try:
        if not isinstance(result, dict):
            raise _Bad("(top level)", "is not an object")
        _at(result, "generator", "", ("str",), lambda v: v == "fdbu", "'fdbu'")
        _at(result, "kind", "", ("str",), lambda v: v == "compare", "'compare'")
        listed = _at(result, "systems", "", ("list",), lambda v: len(v) > 0, "a list of the compared systems")
        theirs = {}
        for k, entry in enumerate(listed):
            name = _at(entry, "name", f"systems[{k}]", ("str",), None, "a name") if isinstance(entry, dict) else None
            if name is None:
                raise _Bad(f"systems[{k}]", "is not an object with a name and a sha256")
            theirs[name] = _at(entry, "sha256", f"systems[{k}]", ("str", "dict"), None, "the trees' SHA-256")
        mine = {s.name: s.sha256 for s in systems}
        if theirs != mine or len(listed) != len(theirs):
            raise FdbuError(where, "compare.json", f"compares {sorted(theirs)}, not these trees {sorted(mine)} as "
                            "they are now (names and the sha256 of unified.json and unified-samples.jsonl must "
                            "match); run fdbu compare again or leave report.compare out")
        names = [s.name for s in systems]
        c = _at(result, "comparison", "", ("dict",), None, "an object")
        baseline = _at(c, "baseline", "comparison", ("str",), lambda v: v in names, f"one of {names}")
        alpha = _at(c, "alpha", "comparison", NUMBER, lambda v: 0 < v < 1, "a number in (0, 1)")
        mode = _at(c, "pairs", "comparison", ("str",), lambda v: v in ("baseline", "all"), "'baseline' or 'all'")
        b = _at(result, "bootstrap", "", ("dict",), None, "an object")
        own = systems[0].unified.get("bootstrap", {})
        for key in ("resamples", "seed"):
            _at(b, key, "bootstrap", ("int",), lambda v, k=key: v == own.get(k), f"the trees' {key}, {own.get(key)}")
        pairs = _at(result, "pairs", "", ("list",), None, "a list")
        want = pairs_of(names, baseline, mode)
        got = []
        for k, pair in enumerate(pairs):
            path = f"pairs[{k}]"
            got.append((_at(pair, "a", path, ("str",), None, "a system"), _at(pair, "b", path, ("str",), None, "a system")))
            subsets = _at(pair, "subsets", path, ("dict",), None, "an object")
            for subset, entry in subsets.items():
                here = f"{path}.subsets.{subset}"
                if subset not in tasks.SUBSETS or not tasks.subset(subset).task.scored:
                    raise _Bad(here, "is not a subset fdbu compare compares")
                if not isinstance(entry, dict) or not ("metrics" in entry or "dropped" in entry):
                    raise _Bad(here, "is not an object with 'metrics' (or 'dropped')")
                if "metrics" not in entry:
                    continue
                lines = _at(entry, "metrics", here, ("dict",), None, "an object")
                declared = tasks.metric_table(subset, systems[0].unified if systems else None)
                if list(lines) != [m.name for m in declared]:
                    raise _Bad(f"{here}.metrics", f"names {sorted(lines)}, not the metrics of {subset} "
                               f"({', '.join(m.name for m in declared)})")
                for m in declared:
                    _at(lines, m.name, f"{here}.metrics", ("dict",), None, "an object")
                    _line(lines[m.name], f"{here}.metrics.{m.name}", m, alpha)
            for view, by in _at(pair, "views", path, ("dict",), None, "an object").items() if "views" in pair else ():
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
                    lines = _at(entry, "metrics", here, ("dict",), None, "an object")
                    if list(lines) != [m.name for m in table]:
                        raise _Bad(f"{here}.metrics", f"names {sorted(lines)}, not the {view} view's metrics")
                    for m in table:
                        _at(lines, m.name, f"{here}.metrics", ("dict",), None, "an object")
                        _line(lines[m.name], f"{here}.metrics.{m.name}", m, alpha)
        if got != want:
            raise _Bad("pairs", f"are {got}, not the pairs of {names} with baseline {baseline} ({mode})")
    except _Bad as e:
        path, problem = e.args
        raise FdbuError(where, "compare.json", f"{path} {problem}; it is not what fdbu compare wrote (run fdbu "
                        "compare again, or leave report.compare out)") from None
    return result


# ---- outputs ---------------------------------------------------------------------------------------------------

def names(plot: bool = True) -> list[str]:
    return list(FILES) + ([f"{f}.{ext}" for f in FIGURES for ext in FORMATS] if plot else [])


def outputs(out: Path, plot: bool = True) -> Outputs:
    """`fdbu compare`'s outputs in `out`, checked before any work; compare.json is their header."""
    return Outputs(out, "compare", names(plot), head="compare.json")


CSV_HEAD = ["a", "b", "subset", "metric", "kind", "better", "headline", "over", "n",
            "a_value", "a_lo", "a_hi", "b_value", "b_lo", "b_hi", "diff", "diff_lo", "diff_hi", "excludes_zero",
            "resamples_kept", "test", "p", "p_holm", "marker", "family", "reason", "discordant_a_only",
            "discordant_b_only", "sign_a_first", "sign_b_first", "sign_p",
            "a_value_not_reached", "a_lo_not_reached", "a_hi_not_reached",
            "b_value_not_reached", "b_lo_not_reached", "b_hi_not_reached",
            "diff_flag", "diff_lo_flag", "diff_hi_flag", "a_coverage", "b_coverage"]


def _population_names() -> list[str]:
    return list(dict.fromkeys(p for s in tasks.scored() for p in _populations(s)))


def csv_rows(result: dict) -> list[dict]:
    """One row per pair x subset x metric; numbers stay numbers (null and a flag where not reached)."""
    pops = _population_names()
    out = []
    for pair in result["pairs"]:
        for view, subset, entry in _csv_sections(pair):
            for name, m in entry.get("metrics", {}).items():
                row = {"a": pair["a"], "b": pair["b"], "subset": subset, "metric": name, "kind": m["kind"],
                       "better": m["better"], "headline": m["headline"], "over": m["over"], "n": m["n"]}
                flags = {}
                for side in ("a", "b"):
                    rec = m[side]
                    iv = rec["interval"] or [None, None]
                    for part, x in zip(("value", "lo", "hi"), (rec["value"], iv[0], iv[1])):
                        row[f"{side}_{part}"], flags[f"{side}_{part}_not_reached"] = split_reached(x)
                d = m["difference"]
                iv, ivf = d["interval"] or [None, None], d["interval_flags"] or [None, None]
                row.update({"diff": d["value"], "diff_lo": iv[0], "diff_hi": iv[1], "excludes_zero": d["excludes_zero"],
                            "resamples_kept": d["resamples_kept"], "test": m["test"], "p": m["p"],
                            "p_holm": m["p_holm"], "marker": m["marker"], "family": m["family"], "reason": m["reason"],
                            "discordant_a_only": m.get("discordant", {}).get("a_only"),
                            "discordant_b_only": m.get("discordant", {}).get("b_only"),
                            **{f"sign_{k}": m.get("sign_test", {}).get(k) for k in ("a_first", "b_first", "p")}})
                row.update(flags)
                row.update({"diff_flag": d["value_flag"], "diff_lo_flag": ivf[0], "diff_hi_flag": ivf[1]})
                ctx = entry["context"]
                row.update({"a_coverage": ctx["a"]["coverage"], "b_coverage": ctx["b"]["coverage"]})
                if view is not None:
                    row["view"] = view
                for pop in pops:
                    row[f"a_{pop}_rate"] = ctx["a"].get(f"{pop}_rate")
                    row[f"b_{pop}_rate"] = ctx["b"].get(f"{pop}_rate")
                bounds = m.get("selected_bounds", {})
                for side in ("a", "b"):
                    lo_hi = bounds.get(side) or [None, None]
                    row[f"{side}_bound_lo"], row[f"{side}_bound_hi"] = lo_hi
                for pop in pops:
                    table = entry.get("populations", {}).get(pop, {})
                    for cell in ("both", "only_a", "only_b", "neither"):
                        row[f"{pop}_{cell}"] = table.get(cell)
                out.append(row)
    return out


def _csv_sections(pair: dict) -> list[tuple[str | None, str, dict]]:
    """(view or None for the unified metrics, subset, entry): a view's lines carry its name in a `view` column,
    which compare.csv has only when the trees were scored with views."""
    return [*((None, s, e) for s, e in pair["subsets"].items()),
            *((v, s, e) for v, by in pair.get("views", {}).items() for s, e in by.items())]


def to_csv(result: dict) -> str:
    rows = csv_rows(result)
    pops = _population_names()
    head = (["view"] if any("view" in r for r in rows) else []) + CSV_HEAD + \
        [f"{s}_{p}_rate" for p in pops for s in ("a", "b")] + \
        ["a_bound_lo", "a_bound_hi", "b_bound_lo", "b_bound_hi"] + \
        [f"{p}_{c}" for p in pops for c in ("both", "only_a", "only_b", "neither")]
    buf = io.StringIO()
    w = csv.DictWriter(buf, head, lineterminator="\n")
    w.writeheader()
    for row in rows:
        w.writerow({k: "" if v is None else csv_text(v) if k in ("a", "b") else v for k, v in row.items()})
    return buf.getvalue()


def figures(result: dict, systems: list[System], width: str = WIDTH, progress: bool = False) -> dict[str, bytes]:
    """The comparison's figures by file name (FIGURES x FORMATS): the latency curves and the forest."""
    from tqdm import tqdm

    from .plot import compare_forest, compare_latency_curves

    with tqdm(total=2, desc="figures", unit="figure", disable=None if progress else True) as bar:
        made = {FIGURES[0]: compare_latency_curves(curves(systems, result), width=width)}
        bar.update()
        made[FIGURES[1]] = compare_forest(result, width=width)
        bar.update()
    return {f"{stem}.{ext}": made[stem][ext] for stem in FIGURES for ext in FORMATS}


def files(result: dict, systems: list[System], plot: bool = True, width: str = WIDTH,
          progress: bool = False) -> dict[str, bytes]:
    out = {"compare.json": dumps(result).encode(), "compare.csv": to_csv(result).encode()}
    if plot:
        out.update(figures(result, systems, width, progress))
    return out


def curves(systems: list[System], result: dict) -> list[dict]:
    """Response-latency curves F(t) of every system per subset, over the samples common to all systems (eligible
    in all; for interruption exercised in all), with pointwise bootstrap bands."""
    from .metrics.paired import cdf_band
    from .plot import latency_values

    boot = _bootstrap(result)
    out = []
    for subset in tasks.scored():
        task = tasks.subset(subset).task
        if task.latency is None or any(subset not in s.rows for s in systems):
            continue
        by_id = [{r["sample_id"]: r for r in s.rows[subset]} for s in systems]
        ids = [i for i in by_id[0] if all(i in rows and rows[i]["eligible"] for rows in by_id)]
        metric, values = latency_values(task, [components(s, subset, [rows[i] for i in ids])
                                               for s, rows in zip(systems, by_id)])
        horizon = [s.unified["subsets"][subset].get("min_observable_s") for s in systems]
        out.append({"subset": subset, "label": task.label, "over": metric.over,
                    "horizon_s": min((h for h in horizon if isinstance(h, (int, float))), default=None),
                    "systems": [{"name": s.name, **cdf_band(v, boot)} for s, v in zip(systems, values)]})
    return out


# ---- the console -----------------------------------------------------------------------------------------------

def _record(rec: dict) -> str:
    return record_text(rec["value"], rec["interval"])


DECISIONS = {"*": "Holm p < alpha", "few": "too few pairs: the test cannot reach alpha", "ctx": "a context metric: "
             "no test", "-": "not a headline metric: p unadjusted, no marker", "n/a": "no difference (both medians not "
             "reached, or no paired sample)"}


def decision(m: dict) -> str:
    """The console's decision column, a code the legend spells out (DECISIONS): the marker, or why a line has none
    (compare.json and compare.csv keep the whole reason)."""
    if m["marker"]:
        return "*"
    reason = m["reason"] or ""
    if too_few(m):
        return "few"
    if reason.startswith("context"):
        return "ctx"
    if reason.startswith("not a headline"):
        return "-"
    return "n/a" if reason else ""


ARROWS = {"lower": "\u2193", "higher": "\u2191", "context": "\u00b7"}


def leaderboard(result: dict) -> str:
    """Per pair and subset: both systems' values on the paired samples, the difference, p, Holm's p and the
    decision (the marker, or why there is none), with the subset's warnings."""
    alpha = result["comparison"]["alpha"]
    lines = [f"fdbu {result['fdbu_version']} compare | {result['definitions']} | bootstrap "
             f"{result['bootstrap']['resamples']} seed {result['bootstrap']['seed']} | alpha {alpha:g} | "
             + ", ".join(f"{s['name']}: manifest.json sha256:{s['inputs'].get('manifest.json', '')[:12]}"
                         for s in result["systems"])]
    if result.get("mixed_transcripts"):
        lines.append("mixed transcripts: " + ", ".join(f"{s['name']} {(s.get('transcripts') or {}).get('source')}"
                                                       for s in result["systems"]))
    for pair in result["pairs"]:
        a, b = pair["a"], pair["b"]
        for subset, entry in sections(pair):
            lines += ["", f"{subset}: {b} vs {a} (difference {b} - {a})"]
            if subset not in pair["subsets"]:  # a view's section (fdbu score views=)
                view = result.get("views", {}).get(subset.split(" on ")[0], {})
                lines.append(f"  in {view.get('title')}'s terms, not the unified metrics; source: {view.get('source')}")
            dropped = entry.get("dropped", {})
            if any(dropped.values()):
                lines.append("  dropped: " + "; ".join(f"{len(ids)} {key.replace('_', ' ')} (e.g. {ids[0]})"
                                                       for key, ids in dropped.items() if ids))
            if "metrics" not in entry:
                continue
            s = entry["samples"]
            text = f"  paired: {s['eligible_in_both']} eligible in both of {s['in_both']}"
            for pop, t in entry.get("populations", {}).items():
                text += (f"; {pop}: both {t['both']}, only {a} {t['only_a']}, only {b} {t['only_b']}, "
                         f"neither {t['neither']}")
            lines.append(text)
            ctx = entry["context"]
            text = f"  coverage {a} {fmt(ctx['a']['coverage'])}, {b} {fmt(ctx['b']['coverage'])}"
            for key in ctx["a"]:
                if key != "coverage":
                    text += f"; {key} {a} {fmt(ctx['a'][key])}, {b} {fmt(ctx['b'][key])}"
            # a view's pooled share (compare_pooled) has no coverage of its own: the subsets it pools instead
            lines.append(f"  pooled over {', '.join(entry['over'])}" if "over" in entry else text)
            lines += [f"  warning: {w}" for w in entry.get("warnings", [])]
            wa, wb = max(20, len(a)), max(20, len(b))
            label = {name: f"{name} {ARROWS[m['better']]}" for name, m in entry["metrics"].items()}
            # two tables of at most 80 columns: the values on the paired samples, then the difference and decision
            lines.append(f"  {'metric':<29} {'n':>4}  {a:<{wa}}  {b}")
            lines += [f"  {label[name]:<29} {m['n']:>4}  {_record(m['a']):<{wa}}  {_record(m['b']):<{wb}}".rstrip()
                      for name, m in entry["metrics"].items()]
            lines.append(f"  {'metric':<29} {'difference':<24} {'p':>6} {'Holm':>6}  decision")
            for name, m in entry["metrics"].items():
                ph = "" if m["p_holm"] is None else p_text(m["p_holm"])
                p = "" if m["p"] is None else p_text(m["p"])
                lines.append(f"  {label[name]:<29} {difference_text(m['difference']):<24} {p:>6} {ph:>6}  "
                             f"{decision(m)}".rstrip())
    lines += ["", "\u2193 lower is better, \u2191 higher, \u00b7 context; values on the paired samples with their 95% "
              "intervals; difference b - a with its 95% interval (shares: exact conditional, agreeing with McNemar; "
              "ratios and medians: paired bootstrap); p: exact McNemar (shares) or paired bootstrap; Holm: over the "
              "headline metrics of a subset" + (", across all pairs" if result["comparison"]["pairs"] == "all" else "")
              + f"; decision: * Holm p < {alpha:g}, " + ", ".join(f"{k} {v}" for k, v in DECISIONS.items() if k != "*")
              + f"; n/r: not reached; {PLUS_INF}/-inf: only one median not reached; {UNDEFINED}: both (README: How "
              "compare decides)"]
    return "\n".join(lines)
