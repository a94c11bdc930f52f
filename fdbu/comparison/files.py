"""`fdbu compare`'s outputs: compare.json, compare.csv (one row per pair, subset and metric, typed), the figures
(the systems' latency curves, the forest of differences) and the console's leaderboard."""
from __future__ import annotations

import csv
import io
from pathlib import Path

from .. import tasks
from ..common.atomic import dumps
from .marks import holm_note
from ..common.cells import csv_text, difference_text, fmt, p_text, record_text, split_reached
from ..metrics.paired import MIN_BOOTSTRAP_PAIRS, PLUS_INF, UNDEFINED, below_floor, signed, too_few
from ..common.outputs import Outputs
from ..config.settings import WIDTH
from .systems import System, _bootstrap, _populations, components, sections
from ..views import chosen, chosen_text

FILES = ("compare.json", "compare.csv")
FIGURES = ("compare-latency-curves", "compare-forest")
FORMATS = ("png", "pdf")
FIGURE_FILES = tuple(f"{stem}.{ext}" for stem in FIGURES for ext in FORMATS)  # what compare.json's `figures` records


def names(plot: bool = True) -> list[str]:
    return list(FILES) + (list(FIGURE_FILES) if plot else [])


def outputs(out: Path, plot: bool = True) -> Outputs:
    """`fdbu compare`'s outputs in `out`, checked before any work; compare.json is their header."""
    return Outputs(out, "compare", names(plot), head="compare.json")


CSV_HEAD = ["a", "b", "subset", "metric", "kind", "better", "headline", "over", "n",
            "a_value", "a_lo", "a_hi", "b_value", "b_lo", "b_hi", "diff", "diff_lo", "diff_hi", "excludes_zero",
            "resamples_kept", "test", "p", "p_holm", "marker", "family", "reason", "discordant_a_only",
            "discordant_b_only", "differing_pairs", "sign_a_first", "sign_b_first", "sign_p",
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
        for view, key, subset, entry in _csv_sections(pair):
            for name, m in entry.get("metrics", {}).items():
                row = {"a": pair["a"], "b": pair["b"], "subset": subset, "metric": name, "kind": m["kind"],
                       "better": m["better"], "headline": m["headline"], "over": m["over"], "n": m["n"]}
                flags = {}
                for side in ("a", "b"):
                    rec = m[side]
                    if "value_flag" in rec:  # a system's own control line (event - clean): +-inf as a float
                        rec = {"value": signed(rec["value"], rec["value_flag"]), "interval": rec["interval"] and [
                            signed(x, f) for x, f in zip(rec["interval"], rec["interval_flags"])]}
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
                            "differing_pairs": m.get("differing_pairs"),
                            **{f"sign_{k}": m.get("sign_test", {}).get(k) for k in ("a_first", "b_first", "p")}})
                row.update(flags)
                row.update({"diff_flag": d["value_flag"], "diff_lo_flag": ivf[0], "diff_hi_flag": ivf[1]})
                ctx = entry["context"]
                row.update({"a_coverage": ctx["a"]["coverage"], "b_coverage": ctx["b"]["coverage"]})
                if view is not None:
                    row["view"] = view
                if key is not None:
                    row["entry"] = key
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


def _csv_sections(pair: dict) -> list[tuple[str | None, str | None, str, dict]]:
    """(view or None, family entry or None, subset, section): a view's lines carry its name in a `view` column, a
    family entry's compared lines (v1.5's matched control) its key in an `entry` column; compare.csv has each
    column only when some row needs it."""
    return [*((None, None, s, e) for s, e in pair["subsets"].items()),
            *((None, k, s, e) for k, by in pair.get("entries", {}).items() for s, e in by.items()),
            *((v, None, s, e) for v, by in pair.get("views", {}).items() for s, e in by.items())]


def to_csv(result: dict) -> str:
    rows = csv_rows(result)
    pops = _population_names()
    head = (["view"] if any("view" in r for r in rows) else []) + \
        (["entry"] if any("entry" in r for r in rows) else []) + CSV_HEAD + \
        [f"{s}_{p}_rate" for p in pops for s in ("a", "b")] + \
        ["a_bound_lo", "a_bound_hi", "b_bound_lo", "b_bound_hi"] + \
        [f"{p}_{c}" for p in pops for c in ("both", "only_a", "only_b", "neither")]
    buf = io.StringIO()
    w = csv.DictWriter(buf, head, lineterminator="\n")
    w.writeheader()
    for row in rows:  # a flag with no value (no interval to exclude 0) is False, so pandas reads the column as bool
        w.writerow({k: False if v is None and k in CSV_FLAGS else "" if v is None else csv_text(v) if k in ("a", "b")
                    else v for k, v in row.items()})
    return buf.getvalue()


CSV_FLAGS = ("headline", "excludes_zero", "marker")


def figures(result: dict, systems: list[System], width: str = WIDTH, progress: bool = False) -> dict[str, bytes]:
    """The comparison's figures by file name (FIGURES x FORMATS): the latency curves and the forest."""
    from ..common.progress import figure_bar, figure_step

    from ..figures.forest import compare_forest

    from ..figures.plot import compare_latency_curves

    with figure_bar(len(FIGURES), progress) as bar:
        made = {FIGURES[0]: compare_latency_curves(curves(systems, result), width=width, tick=figure_step(bar, 0))}
        made[FIGURES[1]] = compare_forest(result, width=width, tick=figure_step(bar, 1))
    return {f"{stem}.{ext}": made[stem][ext] for stem in FIGURES for ext in FORMATS}


def files(result: dict, systems: list[System], plot: bool = True, width: str = WIDTH,
          progress: bool = False) -> dict[str, bytes]:
    """compare's files; with figures, compare.json records them (`figures`: their width and SHA-256), so that
    `fdbu report report.compare=DIR` at that width takes them as they are instead of drawing them again (`taken`)."""
    drawn = figures(result, systems, width, progress) if plot else {}
    head = {**result, "figures": drawn_record(drawn, width)} if drawn else result
    return {"compare.json": dumps(head).encode(), "compare.csv": to_csv(result).encode(), **drawn}


def drawn_record(drawn: dict[str, bytes], width: str) -> dict:
    """compare.json's `figures`: the width they were drawn at and each file's SHA-256."""
    from ..common.atomic import sha256_bytes

    return {"width": width, "sha256": {name: sha256_bytes(data) for name, data in drawn.items()}}


def taken(result: dict, folder: Path, width: str) -> dict[str, bytes] | None:
    """The figures `fdbu compare` drew into `folder`, where its compare.json (`result`, as `read_result` checked it)
    records drawing all of them at `width` and each file holds the bytes it records: the figures `figures` would draw
    again from this compare.json and these trees (the demo's report: 1.8 s of its 2.3). None, and the report draws
    them, where any is missing, changed, not a regular file, or drawn at another width."""
    from ..common.atomic import regular_bytes, sha256_bytes

    record = result.get("figures")
    if not isinstance(record, dict) or record.get("width") != width:
        return None
    out = {}
    for name in FIGURE_FILES:
        try:
            data = regular_bytes(folder / name)  # None for a FIFO, which would block the read
        except OSError:
            return None
        if data is None or sha256_bytes(data) != record["sha256"].get(name):
            return None
        out[name] = data
    return out


def curves(systems: list[System], result: dict) -> list[dict]:
    """Response-latency curves F(t) of every system per subset, over the samples common to all systems (eligible
    in all; for interruption exercised in all), with pointwise bootstrap bands."""
    from ..metrics.paired import cdf_band
    from ..figures.plot import latency_values

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


def _record(rec: dict) -> str:
    """A system's value on the paired samples with its interval; a family entry's record (a system's own matched
    control, event - clean) is a paired difference, +-inf where one side's median is not reached."""
    if "value_flag" in rec:
        iv = rec["interval"] and [signed(x, f) for x, f in zip(rec["interval"], rec["interval_flags"])]
        return record_text(signed(rec["value"], rec["value_flag"]), iv)
    return record_text(rec["value"], rec["interval"])


DECISIONS = {"*": "Holm p < alpha", "few": "no marker: too few pairs for the line's test (a share: fewer discordant "
             "pairs than the exact test needs to reach alpha, or a pooled ratio: fewer pairs whose values differ than "
             "the sign-flip test needs, its p shown and valid at any n; a median: fewer "
             f"than {MIN_BOOTSTRAP_PAIRS} pairs, below which the bootstrap p is not calibrated and not shown)", "ctx": "a context metric: "
             "no test", "-": "not a headline metric: p unadjusted, no marker", "n/a": "no difference (both medians not "
             "reached, or no paired sample)",
             "min": "no marker: fewer pairs than the line's metric is marked from (v2's session lines: 50 paired "
             "sessions, from which their calibration holds alpha), its p shown"}


def decision(m: dict) -> str:
    """The console's decision column, a code the legend spells out (DECISIONS): the marker, or why a line has none
    (compare.json and compare.csv keep the whole reason)."""
    if m["marker"]:
        return "*"
    reason = m["reason"] or ""
    if below_floor(m):
        return "min"
    if too_few(m):
        return "few"
    if reason.startswith("context"):
        return "ctx"
    if reason.startswith("not a headline"):
        return "-"
    return "n/a" if reason else ""


ARROWS = {"lower": "\u2193", "higher": "\u2191", "context": "\u00b7"}


def _tables(a: str, b: str, metrics: dict, console=lambda name: name) -> list[str]:
    """A section's two tables of at most 80 columns: the values on the paired samples, then the difference and
    decision; `console` shortens a line's name (a family entry's hook, `Compared.console`)."""
    wa, wb = max(20, len(a)), max(20, len(b))
    label = {name: f"{console(name)} {ARROWS[m['better']]}" for name, m in metrics.items()}
    width = 29  # a longer name (v2's backchannels_per_examiner_turn) on a line of its own, its row under it

    def named(name: str, row: str) -> list[str]:
        if len(label[name]) <= width:
            return [f"  {label[name]:<{width}} {row}".rstrip()]
        return [f"  {label[name]}", f"  {'':<{width}} {row}".rstrip()]

    lines = [f"  {'metric':<{width}} {'n':>4}  {a:<{wa}}  {b}"]
    for name, m in metrics.items():
        lines += named(name, f"{m['n']:>4}  {_record(m['a']):<{wa}}  {_record(m['b']):<{wb}}")
    lines.append(f"  {'metric':<{width}} {'difference':<24} {'p':>6} {'Holm':>6}  decision")
    for name, m in metrics.items():
        ph = "" if m["p_holm"] is None else p_text(m["p_holm"])
        p = "" if m["p"] is None else p_text(m["p"])
        lines += named(name, f"{difference_text(m['difference']):<24} {p:>6} {ph:>6}  {decision(m)}")
    return lines


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
    legends: dict[str, None] = {}  # each family entry's legend once, in the order shown
    shown = {decision(m) for pair in result["pairs"] for _, entry in sections(pair)
             for m in entry.get("metrics", {}).values()}  # the decision codes the tables use (a floor's: said if so)
    for pair in result["pairs"]:
        a, b = pair["a"], pair["b"]
        hooks = _compared(pair)
        for subset, entry in sections(pair):
            lines += ["", f"{subset}: {b} vs {a} (difference {b} - {a})"]
            if subset not in pair["subsets"] and id(entry) not in hooks:  # a view's section (fdbu score views=)
                name = subset.split(" on ")[0]
                view = result.get("views", {}).get(name, {})
                lines.append(f"  in {view.get('title')}'s terms{chosen_text(chosen(name, view.get('settings')))}, not "
                             f"the unified metrics; source: {view.get('source')}")
            lines += _dropped(entry.get("dropped", {}))
            if "metrics" not in entry:
                continue
            if id(entry) in hooks:  # a family entry compared (v1.5's matched control): its own line on what it is over
                lines += [f"  {entry['note']}", *(f"  warning: {w}" for w in entry.get("warnings", []))]
                lines += _tables(a, b, entry["metrics"], hooks[id(entry)].console)
                legends[hooks[id(entry)].legend] = None
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
            lines += _tables(a, b, entry["metrics"])
    lines += ["", "\u2193 lower is better, \u2191 higher, \u00b7 context; values on the paired samples with their 95% "
              "intervals; difference b - a with its 95% interval (shares: exact conditional, agreeing with McNemar; "
              "ratios and medians: paired bootstrap); p: exact McNemar (shares), sign-flip permutation (ratios) or "
              "paired bootstrap (medians); " + holm_note(result["comparison"], _subsets_shown(result),
                                                             any("views" in p for p in result["pairs"]))
              + f"; decision: * Holm p < {alpha:g}, " + ", ".join(f"{k} {v}" for k, v in DECISIONS.items()
                                                                  if k != "*" and (k != "min" or "min" in shown))
              + f"; n/r: not reached; {PLUS_INF}/-inf: only one median not reached; {UNDEFINED}: both (docs: How "
              "compare decides)" + "".join(f"; {legend}" for legend in legends if legend)]
    return "\n".join(lines)


def _dropped(dropped: dict[str, list[str]]) -> list[str]:
    """The line naming the samples a section dropped, with an example of each kind; none where none was."""
    if not any(dropped.values()):
        return []
    return ["  dropped: " + "; ".join(f"{len(ids)} {key.replace('_', ' ')} (e.g. {ids[0]})"
                                     for key, ids in dropped.items() if ids)]


def _subsets_shown(result: dict) -> int:
    """How many subsets a pair's marks are shown over (the most of any pair)."""
    return max((sum("metrics" in e for e in p["subsets"].values()) for p in result["pairs"]), default=1)


def _compared(pair: dict) -> dict:
    """A pair's family entry sections (by id) -> the entry's `Compared` hook: how the console names and explains
    them."""
    return {id(section): next(e.compared for e in tasks.family(subset).entries if e.key == key)
            for key, by in pair.get("entries", {}).items() for subset, section in by.items()}
