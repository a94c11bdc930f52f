"""`fdbu compare`: scored trees of several systems, compared pair by pair on the same samples.

The spec's rule ("To compare two systems"): rows of unified-samples.jsonl are paired by
sample_id over the samples eligible in both trees, and a metric over the exercised samples
(its `Metric.over`) over those exercised in both. For every pair and every metric of every
subset: each system's record on the paired samples (unified.json's rules), the difference
B - A with its paired bootstrap interval and a p-value (`fdbu.metrics.paired`), Holm's
adjustment over the metrics of the subset, and beside them what pairing does not fix: both
systems' coverage, exercised_rate and selected bounds from their unified.json, and for
interruption who was exercised. The per-sample components come back from the rows
(`from_rows` of each task's metric module), checked against unified.json first.
"""
from __future__ import annotations

import csv
import io
import itertools
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import __version__, tasks
from .atomic import dumps, sha256_bytes
from .errors import FdbuError
from .metrics.paired import PLUS_INF, UNDEFINED, difference, holm
from .metrics.stats import NOT_REACHED, Bootstrap
from .metrics.table import SHARE, aggregate
from .outputs import Outputs, interrupted
from .readers import parse_json
from .report import SAMPLES, UNIFIED, fmt

# what may differ between the signatures of compared trees: the inputs, and fdbu's version (the
# definitions version pins the metric math); everything else (definitions, settings, speech
# detection, bootstrap, share interval, quantile rule) must be equal
MAY_DIFFER = ("inputs", "fdbu_version", "subsets", "transcripts")  # transcripts: `mixed_transcripts`
FILES = ("compare.json", "compare.csv")
FIGURES = ("compare-latency-curves", "compare-forest")
FORMATS = ("png", "pdf")
PAIRS = ("baseline", "all")
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


def default_names(trees: list[str]) -> list[str]:
    """A name per tree from its path: the folder name, or as many trailing parts as make the names differ;
    the same path given twice gets #2, #3."""
    parts = [Path(t).parts or (str(t),) for t in trees]
    for k in range(1, max(len(p) for p in parts) + 1):
        names = ["/".join(p[-k:]) for p in parts]
        if len(set(names)) == len(names):
            return names
    seen: dict[str, int] = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name}#{seen[name]}")
    return out


def _read(root: Path, file: str) -> bytes:
    path = root / file
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise FdbuError(str(root), file, f"is missing: the tree is not scored (run fdbu score tree={root})") from None
    except OSError as e:
        raise FdbuError(str(root), file, f"cannot be read: {e.strerror or e}") from None


def _row_problem(row) -> str | None:
    if not isinstance(row, dict):
        return "is not a JSON object"
    for key, kind in (("sample_id", str), ("subset", str), ("eligible", bool)):
        if not isinstance(row.get(key), kind):
            return f"has no {key}"
    return None


def load(root: Path, name: str) -> System:
    """A scored tree: unified.json and unified-samples.jsonl, refused when missing, not fdbu's, or stale."""
    root = Path(root)
    where = str(root)
    if not root.is_dir():
        raise FdbuError(where, None, "is not a directory")
    staging = interrupted(root)
    if staging:
        raise FdbuError(where, staging, "a scoring run was stopped while moving its outputs in (some may be "
                        "new, some old): rerun fdbu score on this tree, which finishes the move")
    raw = _read(root, UNIFIED)
    unified = parse_json(raw, where, UNIFIED)
    if (not isinstance(unified, dict) or unified.get("generator") != "fdbu" or "kind" in unified
            or not isinstance(unified.get("subsets"), dict) or not isinstance(unified.get("inputs"), dict)):
        raise FdbuError(where, UNIFIED, "is not a unified.json written by fdbu score")
    b = unified.get("bootstrap")
    if not (isinstance(b, dict) and all(isinstance(b.get(k), int) and not isinstance(b.get(k), bool)
                                        for k in ("resamples", "seed")) and b["resamples"] >= 1 and b["seed"] >= 0):
        raise FdbuError(where, UNIFIED, "has no bootstrap settings (resamples, seed) fdbu can use")
    for file in ("manifest.json", "asr.json"):  # a tree rescored since, or changed after scoring
        path = root / file
        if path.is_file() and sha256_bytes(path.read_bytes()) != unified["inputs"].get(file):
            raise FdbuError(where, file, f"changed after the tree was scored (unified.json was computed from "
                            f"sha256:{str(unified['inputs'].get(file))[:12]}); run fdbu score again")
    raw_rows = _read(root, SAMPLES)
    rows: dict[str, list[dict]] = {}
    for k, line in enumerate(raw_rows.splitlines(), 1):
        row = parse_json(line, where, f"{SAMPLES} line {k}")
        problem = _row_problem(row)
        if problem:
            raise FdbuError(where, SAMPLES, f"line {k} {problem}")
        rows.setdefault(row["subset"], []).append(row)
    if set(rows) != set(unified["subsets"]):
        raise FdbuError(where, SAMPLES, f"holds the subsets {sorted(rows)}, unified.json {sorted(unified['subsets'])}; "
                        "the two files are not from one run (run fdbu score again)")
    for subset in rows:
        if subset not in tasks.SUBSETS or not tasks.subset(subset).task.scored:
            raise FdbuError(where, SAMPLES, f"subset {subset} is not a scored subset fdbu knows")
    system = System(name, root, unified, rows, {UNIFIED: sha256_bytes(raw), SAMPLES: sha256_bytes(raw_rows)})
    _check_rows(system)
    return system


def components(system: System, subset: str, rows: list[dict]):
    """The components of these (eligible) rows; a row lacking a field is refused, naming its sample."""
    module = tasks.subset(subset).task.metrics
    try:
        return module.from_rows(rows)
    except (KeyError, TypeError, ValueError, IndexError) as e:
        for row in rows:
            try:
                module.from_rows([row])
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
        module = tasks.subset(subset).task.metrics
        c = components(system, subset, eligible)
        metrics, _ = module.aggregate(c, selected=len(rows), ineligible=len(rows) - len(eligible),
                                      boot=Bootstrap(1, seed))
        theirs = entry.get("metrics", {})
        for name, mine in metrics.items():
            other = theirs.get(name)
            for key, value in mine.items():
                if key in ("interval", "resamples_kept"):
                    continue
                if not isinstance(other, dict) or other.get(key) != value:
                    said = other.get(key) if isinstance(other, dict) else None
                    raise FdbuError(system.where, SAMPLES, f"{subset}: its rows give {name} {key} {value!r}, "
                                    f"unified.json {said!r}; the two files are not from one run (run fdbu score again)")


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
        return {k: v for k, v in s.unified.items() if k not in MAY_DIFFER}

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
    module = tasks.subset(subset).task.metrics
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


def _context(s: System, subset: str) -> dict:
    entry = s.unified["subsets"][subset]
    out = {"coverage": entry.get("coverage")}
    for pop in _populations(subset):
        rate = entry.get("metrics", {}).get(f"{pop}_rate")
        out[f"{pop}_rate"] = rate.get("value") if isinstance(rate, dict) else None
    return out


def _populations(subset: str) -> list[str]:
    """The populations other than the eligible samples that the subset's metrics are over."""
    table = tasks.subset(subset).task.metrics.METRICS
    return list(dict.fromkeys(m.over for m in table if m.over != "eligible"))


def compare_pair(a: System, b: System, subset: str, order: dict[str, int], boot: Bootstrap, allow: bool) -> dict:
    """Every metric of one subset for the pair (a, b): b - a on the paired samples."""
    module = tasks.subset(subset).task.metrics
    common, dropped, ra, rb = _pairing(a, b, subset, order, allow)
    paired = [i for i in common if ra[i]["eligible"] and rb[i]["eligible"]]
    ca = components(a, subset, [ra[i] for i in paired])
    cb = components(b, subset, [rb[i] for i in paired])
    pa, pb = module.populations(ca), module.populations(cb)
    both = {k: pa[k] & pb[k] for k in pa}
    samples = {"in_both": len(common), "eligible_in_both": len(paired),
               f"eligible_only_in_{a.name}": sum(ra[i]["eligible"] and not rb[i]["eligible"] for i in common),
               f"eligible_only_in_{b.name}": sum(rb[i]["eligible"] and not ra[i]["eligible"] for i in common),
               "eligible_in_neither": sum(not ra[i]["eligible"] and not rb[i]["eligible"] for i in common)}
    populations = {pop: {"both": int(np.count_nonzero(pa[pop] & pb[pop])),
                         "only_a": int(np.count_nonzero(pa[pop] & ~pb[pop])),
                         "only_b": int(np.count_nonzero(~pa[pop] & pb[pop])),
                         "neither": int(np.count_nonzero(~pa[pop] & ~pb[pop]))} for pop in _populations(subset)}
    records = [aggregate(module.METRICS, c, both, selected=len(paired), ineligible=0, boot=boot) for c in (ca, cb)]
    metrics = {}
    for m in module.METRICS:
        rec_a, rec_b = ({k: v for k, v in r[m.name].items() if k != "selected_bounds"} for r in records)
        d = difference(m, ca, cb, both[m.over], boot)
        test = {k: d.pop(k) for k in ("test", "p", "discordant") if k in d}
        entry = {"kind": m.kind, "better": m.better, "over": m.over, "n": int(np.count_nonzero(both[m.over])),
                 "a": rec_a, "b": rec_b, "difference": d, **test}
        if m.kind == SHARE:
            entry["selected_bounds"] = {"a": a.unified["subsets"][subset]["metrics"][m.name].get("selected_bounds"),
                                        "b": b.unified["subsets"][subset]["metrics"][m.name].get("selected_bounds")}
        metrics[m.name] = entry
    for name, adjusted in zip(metrics, holm([e["p"] for e in metrics.values()])):
        metrics[name]["p_holm"] = adjusted
    out = {"samples": samples}
    if dropped:
        out["dropped"] = dropped
    if populations:
        out["populations"] = populations
    out["context"] = {"a": _context(a, subset), "b": _context(b, subset)}
    out["metrics"] = metrics
    return out


def pairs_of(names: list[str], baseline: str, pairs: str) -> list[tuple[str, str]]:
    """(a, b) pairs, difference b - a: each system against the baseline, or every pair in the order given."""
    if pairs == "all":
        return list(itertools.combinations(names, 2))
    return [(baseline, n) for n in names if n != baseline]


def compare(systems: list[System], *, baseline: str | None = None, pairs: str = "baseline",
            allow_different_samples: bool = False, allow_mixed_transcripts: bool = False) -> dict:
    """compare.json as a dict."""
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
        "paired_bootstrap": "the draw of `bootstrap` over the n paired samples, row r picking the same samples from "
                            "both systems; interval: Q(0.025) and Q(0.975) of the kept differences",
        "not_reached": "a median not reached is +infinity: +inf when only b's is not reached, -inf when only a's, "
                       "undefined (null) when both; a resample where both are not reached is skipped",
        "p_value": {"share": "exact McNemar: min(1, 2 P(X <= min(a_only, b_only))), X ~ Binomial(a_only + b_only, "
                             "1/2); 1 without discordant pairs",
                    "pooled_ratio and latency_quantiles": "paired bootstrap: min(1, 2 min(share of kept resampled "
                                                          "differences <= 0, share >= 0))"},
        "multiple_comparisons": "Holm over the metrics of a subset, per pair (p_holm beside p)",
    }
    order = {subset: {r["sample_id"]: k for k, r in enumerate(rows)} for subset, rows in systems[0].rows.items()}
    head["pairs"] = []
    for name_a, name_b in pairs_of([s.name for s in systems], baseline, pairs):
        a, b = by_name[name_a], by_name[name_b]
        subsets = {}
        for subset in tasks.scored():
            if subset not in a.rows and subset not in b.rows:
                continue
            if subset not in a.rows or subset not in b.rows:
                has, lacks = (a, b) if subset in a.rows else (b, a)
                if not allow_different_samples:
                    raise FdbuError(lacks.where, UNIFIED, f"has no {subset}, which {has.name} has; pass "
                                    "compare.allow_different_samples=true to compare the subsets both hold")
                subsets[subset] = {"dropped": {f"only_in_{has.name}": [r["sample_id"] for r in has.rows[subset]]}}
                continue
            subsets[subset] = compare_pair(a, b, subset, order.get(subset, {}), boot, allow_different_samples)
        head["pairs"].append({"a": name_a, "b": name_b, "subsets": subsets})
    return head


# ---- outputs ---------------------------------------------------------------------------------------------------

def names(plot: bool = True) -> list[str]:
    return list(FILES) + ([f"{f}.{ext}" for f in FIGURES for ext in FORMATS] if plot else [])


def outputs(out: Path, plot: bool = True) -> Outputs:
    """`fdbu compare`'s outputs in `out`, checked before any work; compare.json is their header."""
    return Outputs(out, "compare", names(plot), head="compare.json")


def _split(x) -> tuple[float | None, bool]:
    """A record's number for the CSV: (number or None, not reached)."""
    return (None, True) if x == NOT_REACHED else (x, False)


CSV_HEAD = ["a", "b", "subset", "metric", "kind", "better", "over", "n",
            "a_value", "a_lo", "a_hi", "b_value", "b_lo", "b_hi", "diff", "diff_lo", "diff_hi", "excludes_zero",
            "resamples_kept", "test", "p", "p_holm", "discordant_a_only", "discordant_b_only",
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
        for subset, entry in pair["subsets"].items():
            for name, m in entry.get("metrics", {}).items():
                row = {"a": pair["a"], "b": pair["b"], "subset": subset, "metric": name, "kind": m["kind"],
                       "better": m["better"], "over": m["over"], "n": m["n"]}
                flags = {}
                for side in ("a", "b"):
                    rec = m[side]
                    iv = rec["interval"] or [None, None]
                    for part, x in zip(("value", "lo", "hi"), (rec["value"], iv[0], iv[1])):
                        row[f"{side}_{part}"], flags[f"{side}_{part}_not_reached"] = _split(x)
                d = m["difference"]
                iv, ivf = d["interval"] or [None, None], d["interval_flags"] or [None, None]
                row.update({"diff": d["value"], "diff_lo": iv[0], "diff_hi": iv[1], "excludes_zero": d["excludes_zero"],
                            "resamples_kept": d["resamples_kept"], "test": m["test"], "p": m["p"],
                            "p_holm": m["p_holm"],
                            "discordant_a_only": m.get("discordant", {}).get("a_only"),
                            "discordant_b_only": m.get("discordant", {}).get("b_only")})
                row.update(flags)
                row.update({"diff_flag": d["value_flag"], "diff_lo_flag": ivf[0], "diff_hi_flag": ivf[1]})
                ctx = entry["context"]
                row.update({"a_coverage": ctx["a"]["coverage"], "b_coverage": ctx["b"]["coverage"]})
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


def to_csv(result: dict) -> str:
    rows = csv_rows(result)
    pops = _population_names()
    head = CSV_HEAD + [f"{s}_{p}_rate" for p in pops for s in ("a", "b")] + \
        ["a_bound_lo", "a_bound_hi", "b_bound_lo", "b_bound_hi"] + \
        [f"{p}_{c}" for p in pops for c in ("both", "only_a", "only_b", "neither")]
    buf = io.StringIO()
    w = csv.DictWriter(buf, head, lineterminator="\n")
    w.writeheader()
    for row in rows:
        w.writerow({k: "" if v is None else v for k, v in row.items()})
    return buf.getvalue()


def files(result: dict, systems: list[System], plot: bool = True) -> dict[str, bytes]:
    out = {"compare.json": dumps(result).encode(), "compare.csv": to_csv(result).encode()}
    if plot:
        from .plot import compare_forest, compare_latency_curves

        for stem, figure in (("compare-latency-curves", compare_latency_curves(curves(systems, result))),
                             ("compare-forest", compare_forest(result))):
            for ext in FORMATS:
                out[f"{stem}.{ext}"] = figure[ext]
    return out


def curves(systems: list[System], result: dict) -> list[dict]:
    """Response-latency curves F(t) of every system per subset, over the samples common to all systems (eligible
    in all; for interruption exercised in all), with pointwise bootstrap bands."""
    from .metrics.paired import cdf_band

    boot = _bootstrap(result)
    out = []
    for subset in tasks.scored():
        module = tasks.subset(subset).task.metrics
        metric = next((m for m in module.METRICS if m.name == "response_latency_s"), None)
        if metric is None or any(subset not in s.rows for s in systems):
            continue
        by_id = [{r["sample_id"]: r for r in s.rows[subset]} for s in systems]
        ids = [i for i in by_id[0] if all(i in rows and rows[i]["eligible"] for rows in by_id)]
        comps = [components(s, subset, [rows[i] for i in ids]) for s, rows in zip(systems, by_id)]
        mask = np.ones(len(ids), bool)
        for c in comps:
            mask &= module.populations(c)[metric.over]
        horizon = [s.unified["subsets"][subset].get("min_observable_s") for s in systems]
        out.append({"subset": subset, "label": tasks.subset(subset).task.label, "over": metric.over,
                    "horizon_s": min((h for h in horizon if isinstance(h, (int, float))), default=None),
                    "systems": [{"name": s.name, **cdf_band(np.asarray(metric.values(c))[mask], boot)}
                                for s, c in zip(systems, comps)]})
    return out


# ---- the console -----------------------------------------------------------------------------------------------

def _num(x, digits: int = 3) -> str:
    return "n/r" if x == NOT_REACHED else fmt(x, digits)


def _record(rec: dict) -> str:
    iv = rec["interval"]
    return _num(rec["value"]) + ("" if iv is None else f" [{_num(iv[0])}, {_num(iv[1])}]")


def _diff_part(x, flag) -> str:
    if flag is not None:
        return flag
    return "n/a" if x is None else f"{x:+.3f}"


def _difference(d: dict) -> str:
    text = _diff_part(d["value"], d["value_flag"])
    if d["interval"] is not None:
        text += f" [{_diff_part(d['interval'][0], d['interval_flags'][0])}, " \
                f"{_diff_part(d['interval'][1], d['interval_flags'][1])}]"
    return text + (" *" if d["excludes_zero"] else "")


def leaderboard(result: dict) -> str:
    """Per pair and subset: both systems' values on the paired samples, the difference, p and Holm's p."""
    lines = [f"fdbu {result['fdbu_version']} compare | {result['definitions']} | bootstrap "
             f"{result['bootstrap']['resamples']} seed {result['bootstrap']['seed']} | "
             + ", ".join(f"{s['name']}: manifest.json sha256:{s['inputs'].get('manifest.json', '')[:12]}"
                         for s in result["systems"])]
    if result.get("mixed_transcripts"):
        lines.append("mixed transcripts: " + ", ".join(f"{s['name']} {(s.get('transcripts') or {}).get('source')}"
                                                       for s in result["systems"]))
    for pair in result["pairs"]:
        a, b = pair["a"], pair["b"]
        for subset, entry in pair["subsets"].items():
            lines += ["", f"{subset}: {b} vs {a} (difference {b} - {a})"]
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
            lines.append(text)
            wa = max(24, len(a))
            wb = max(24, len(b))
            lines.append(f"  {'metric':<28} {'better':<8}{'n':>5}  {a:<{wa}} {b:<{wb}} {'difference':<28} "
                         f"{'p':>6} {'Holm':>6}")
            for name, m in entry["metrics"].items():
                p = "n/a" if m["p"] is None else f"{m['p']:.3f}"
                ph = "n/a" if m["p_holm"] is None else f"{m['p_holm']:.3f}"
                lines.append(f"  {name:<28} {m['better']:<8}{m['n']:>5}  {_record(m['a']):<{wa}} "
                             f"{_record(m['b']):<{wb}} {_difference(m['difference']):<28} {p:>6} {ph:>6}")
    lines += ["", "values on the paired samples with their 95% intervals; difference b - a with its 95% paired "
              "bootstrap interval; * the interval excludes 0; p: exact McNemar (shares) or paired bootstrap; "
              f"Holm: over the metrics of the subset; n/r: not reached; {PLUS_INF}/-inf: only one median not "
              f"reached; {UNDEFINED}: both"]
    return "\n".join(lines)
