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

import json
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from ..common import faults
from .. import tasks
from ..version import __version__
from ..errors import FdbuError
from .marks import FAMILY_RULES, family_name
from ..metrics.paired import ALPHA, MIN_BOOTSTRAP_PAIRS, min_discordant, difference, holm
from ..metrics.stats import Bootstrap
from ..metrics.table import SHARE, aggregate
from ..scoring.scored import ROWS_SHA256, SAMPLES, UNIFIED
from ..config.settings import HOLM_FAMILY
from .systems import Scope, System, _bootstrap, _populations, family_sections, pairs_of, pooled_over, view_scopes


@dataclass(frozen=True)
class Pairing:
    """How every pair of one comparison is paired and tested: the first tree's manifest order per subset (the
    samples' order in each paired set), the bootstrap, whether trees with different samples may be compared on
    those both hold (compare.allow_different_samples), and alpha."""
    order: dict[str, dict[str, int]]
    boot: Bootstrap
    allow: bool = False
    alpha: float = ALPHA

# what may differ between the signatures of compared trees: the inputs, and fdbu's version (the
# definitions version pins the metric math); everything else (definitions, settings, speech
# detection, bootstrap, share interval, quantile rule) must be equal
MAY_DIFFER = ("inputs", "fdbu_version", "subsets", ROWS_SHA256, "transcripts")  # transcripts: `mixed_transcripts`
VIEW_HEAD = ("title", "source", "settings", "not_computable")  # what compared trees' views share (fdbu.views)
DIFFERENCE = ("b - a: system b's value minus system a's, over the samples paired for the metric (eligible in "
              "both; exercised in both for a metric over the exercised samples)")


def _first_difference(a, b, path: str = "") -> str | None:
    """The first key path where two signature values differ, with both values. The header's summary word `settings`
    ("spec" or "non-default") last: the setting itself (`non_default`, a view's settings) is what the refusal names
    (issue 75: it said `settings: "spec" vs "non-default"`)."""
    if isinstance(a, dict) and isinstance(b, dict):
        keys = list(a) + [k for k in b if k not in a]
        if not path:
            keys = [k for k in keys if k != "settings"] + [k for k in keys if k == "settings"]
        for key in keys:
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
    # each population's rate where the subset's metrics have one (v2's populations have none: not shown as n/a)
    names = {m.name for m in tasks.metric_table(subset, s.unified)}
    for pop in _populations(subset) if scope is None else ():  # a view's context is the subset's coverage
        if f"{pop}_rate" not in names:
            continue
        rate = entry.get("metrics", {}).get(f"{pop}_rate")
        out[f"{pop}_rate"] = rate.get("value") if isinstance(rate, dict) else None
    return out


def compare_pair(a: System, b: System, subset: str, how: Pairing, scope: Scope | None = None) -> dict:
    """Every metric of one subset for the pair (a, b): b - a on the paired samples; `scope`: another benchmark's
    numbers on the subset (fdbu.views) instead of the unified metrics."""
    boot, alpha = how.boot, how.alpha
    own = scope or Scope.unified(subset, a.unified)  # the trees share their settings (signature)
    common, dropped, ra, rb = _pairing(a, b, subset, how.order.get(subset, {}), how.allow)
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
    out["warnings"] = warnings(a, b, subset, out, alpha)
    out["metrics"] = metrics
    return out


def compare_pooled(a: System, b: System, view: str, subsets: list[str], how: Pairing) -> dict:
    """A view's pooled share (VideoFDB's TOR-Alignment) for the pair: each subset's samples paired as compare_pair
    pairs them (eligible in both), pooled, and the one line decided as a share is (its own Holm family)."""
    from ..views import VIEWS, Records, part_on

    boot, alpha = how.boot, how.alpha
    spec = VIEWS[view]
    metric = spec.pooled_metric()
    rows_a, rows_b, in_both = [], [], 0
    for subset in subsets:
        common, _, ra, rb = _pairing(a, b, subset, how.order.get(subset, {}), how.allow)
        in_both += len(common)
        part = part_on(spec, subset)
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


def compare_entries(a: System, b: System, subsets: list[str], how: Pairing) -> dict[str, dict]:
    """The family entries that say how two systems' entries compare (`Entry.compared`: v1.5's matched controls), on
    each subset compared: {entry key: {subset: section}}, each section's lines in the subset's Holm family."""
    out: dict[str, dict] = {}
    for subset in subsets:
        for extra in tasks.family(subset).entries:
            if extra.compared is None:
                continue
            common, _, ra, rb = _pairing(a, b, subset, how.order.get(subset, {}), how.allow)
            paired = [i for i in common if ra[i]["eligible"] and rb[i]["eligible"]]
            section = extra.compared.compare([ra[i] for i in paired], [rb[i] for i in paired], subset, a.unified,
                                             how.boot, how.alpha)
            section["context"] = {"a": _context(a, subset), "b": _context(b, subset)}
            out.setdefault(extra.key, {})[subset] = section
    return out


def warnings_small(n: int, alpha: float, floor: int | None = None) -> list[str]:
    """The small-paired-set warning (`warnings`' first); `floor`: the pairs the subset's metrics are marked from
    (Metric.min_pairs; v2's session lines: 50), where they have one, said instead of the tests' own rules."""
    if floor is not None and 0 < n < floor:
        return [f"small paired set: {n} samples eligible in both; this subset's lines are marked from {floor} "
                "paired samples (their calibration, docs), below it only their p is shown"]
    if 0 < n < MIN_BOOTSTRAP_PAIRS:
        return [f"small paired set: {n} samples eligible in both; medians are tested from {MIN_BOOTSTRAP_PAIRS} "
                f"pairs, shares and pooled ratios from {min_discordant(alpha)} pairs that differ"]
    return []


def warnings(a: System, b: System, subset: str, section: dict, alpha: float) -> list[str]:
    """What the console says about a pair and subset whose paired set is small, or is a minority of the samples
    either system has eligible (or exercised): from the section's paired samples and populations."""
    n = section["samples"]["eligible_in_both"]
    populations = section.get("populations", {})
    floors = [m.min_pairs for m in tasks.metric_table(subset, a.unified) if m.headline and m.min_pairs is not None]
    out = warnings_small(n, alpha, max(floors, default=None))
    counts = {"eligible": (n, sum(r["eligible"] for r in a.rows[subset]), sum(r["eligible"] for r in b.rows[subset]))}
    for pop, t in populations.items():
        counts[pop] = (t["both"], t["both"] + t["only_a"], t["both"] + t["only_b"])
    for pop, (both, in_a, in_b) in counts.items():
        most = max(in_a, in_b)
        if most and 2 * both < most:
            out.append(f"the pairing drops most {pop} samples: {both} {pop} in both, of {in_a} in {a.name} and "
                       f"{in_b} in {b.name}; the comparison covers a minority of what each system was scored on")
    return out


def decide(pairs: list[dict], pairs_mode: str, alpha: float, family: str = HOLM_FAMILY) -> None:
    """Holm's adjustment and the marker, in place, over the headline lines whose test can decide; marker = p_holm <
    alpha. One family (compare.family) per subset and pair (across every pair with compare.pairs=all), per pair
    over every subset, or over the whole board; a view's lines (another benchmark's terms) are a family apart in
    each. Every other line keeps its p (if any), p_holm null, no marker, and says why."""
    families: dict[str, list[dict]] = {}
    for pair in pairs:
        for section_family, view, (_, entry) in family_sections(pair):
            for line in entry.get("metrics", {}).values():
                line["p_holm"], line["marker"], line["family"] = None, False, None
                if line["p"] is None or line["reason"] is not None:
                    continue
                if not line["headline"]:
                    line["reason"] = "not a headline metric: outside the Holm family, no marker"
                    continue
                line["family"] = family_name(family, pairs_mode, pair, section_family, view)
                families.setdefault(line["family"], []).append(line)
    for lines in families.values():
        for line, adjusted in zip(lines, holm([x["p"] for x in lines])):
            line["p_holm"] = adjusted
            line["marker"] = cast(float, adjusted) < alpha  # every line in a family has a p


def _comparison(baseline: str, pairs: str, alpha: float, family: str) -> dict:
    """compare.json's `comparison`: what each line's interval, test and marker are, in words and formulas."""
    return {
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
                 "pooled_ratio": "signflip_permutation: (1 + #{|T*| >= |T| (1 - 1e-9)}) / (K' + 1), T the "
                                 "difference over its delta-method standard error, over K draws of integers(0, 2, "
                                 "(K, n)) from default_rng(seed), each swapping the drawn pairs' (numerator, "
                                 "denominator) between the systems, K' (draws_kept) those with both denominators > 0",
                 "latency_quantiles": "paired_bootstrap: min(1, 2 (min(k <= 0, k >= 0) + 1) / (K + 1)) over the K "
                                      "kept resampled differences"},
        "too_few_pairs": f"no marker where the test cannot reach alpha: a share with fewer than "
                         f"{min_discordant(alpha)} discordant pairs, a pooled ratio with fewer than "
                         f"{min_discordant(alpha)} pairs whose values differ, a median over fewer than "
                         f"{MIN_BOOTSTRAP_PAIRS} pairs; and below a metric's own floor where it sets one "
                         "(Metric.min_pairs: v2's session lines), its p shown",
        "entries": "a family's entries compared where it says how (v1.5's matched controls, `entries.control`): over "
                   "the samples in both systems' controls, each system's event run - clean run, then b - a; "
                   "event_attributable_stop_rate_k: signflip_exact, the exact sign-flip test of the per-sample "
                   "differences (the exact McNemar test where they are -1, 0, 1), with the paired bootstrap's "
                   "expanded percentile interval; stop_latency_shift_s: paired_bootstrap; the headline lines in the "
                   "subset's family",
        "holm_family": family,
        "family": "Holm over the headline metrics whose test can decide: " + FAMILY_RULES[family][pairs]
                  + "; marker: p_holm < alpha",
    }


def _compare_views(a: System, b: System, compared: list[str], how: Pairing) -> dict[str, dict]:
    """Each view's numbers (fdbu.views) compared on the subsets compared, and a view's pooled share (VideoFDB's
    TOR-Alignment) over them; the views with nothing compared left out."""
    views: dict[str, dict] = {view: {} for view in a.unified.get("views", {})}  # each view's subsets, in order
    for subset in compared:
        for view, scope in view_scopes(a.unified, subset).items():
            views[view][subset] = compare_pair(a, b, subset, how, scope)
    for view, by in views.items():
        over = [pooled_over(s.unified, view) for s in (a, b)]
        both = [s for s in over[0] if s in over[1] and s in by]
        if len(both) >= 2:  # over one subset it is that class's own line, already decided in its section
            by["pooled"] = compare_pooled(a, b, view, both, how)
            left = sorted(set(over[0] + over[1]) - set(both))
            if left:
                by["pooled"]["warnings"].append(f"pooled over the subsets both trees hold ({', '.join(both)}); "
                                                f"left out: {', '.join(left)}")
    return {view: by for view, by in views.items() if by}


def compare(systems: list[System], *, baseline: str | None = None, pairs: str = "baseline",
            allow_different_samples: bool = False, allow_mixed_transcripts: bool = False,
            alpha: float = ALPHA, family: str = HOLM_FAMILY, progress: bool = False) -> dict:
    """compare.json as a dict; `progress`, a bar over the pairs' subsets on stderr (their paired bootstraps)."""
    from ..common.progress import Bar

    sig = signature(systems)
    mixed = mixed_transcripts(systems, allow_mixed_transcripts)
    boot = _bootstrap(sig)
    by_name = {s.name: s for s in systems}
    baseline = baseline or systems[0].name
    head = {"generator": "fdbu", "fdbu_version": __version__, "kind": "compare", **sig}
    head["systems"] = [{"name": s.name, "fdbu_version": s.unified.get("fdbu_version"), "inputs": s.unified["inputs"],
                        "transcripts": s.unified.get("transcripts"), "sha256": s.sha256} for s in systems]
    head["mixed_transcripts"] = mixed
    head["comparison"] = _comparison(baseline, pairs, alpha, family)
    order = {subset: {r["sample_id"]: k for k, r in enumerate(rows)} for subset, rows in systems[0].rows.items()}
    how = Pairing(order, boot, allow_different_samples, alpha)
    head["pairs"] = []
    pairs_list = pairs_of([s.name for s in systems], baseline, pairs)
    bar = Bar(total=len(pairs_list) * len(tasks.scored()), desc="compare", unit="subset",
               disable=None if progress else True)  # None: on a terminal only, never into a log
    with bar:  # closed before an error or a Ctrl-C's message: no bar is drawn again under it
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
                subsets[subset] = compare_pair(a, b, subset, how)
                faults.point(f"compare:subset:{len(subsets)}")
            pair: dict[str, Any] = {"a": name_a, "b": name_b, "subsets": subsets}
            entries = compare_entries(a, b, [s for s in subsets if "metrics" in subsets[s]], how)
            if entries:
                pair["entries"] = entries
            views = _compare_views(a, b, [s for s in subsets if "metrics" in subsets[s]], how)
            if views:
                pair["views"] = views
            head["pairs"].append(pair)
    decide(head["pairs"], pairs, alpha, family)
    return head
