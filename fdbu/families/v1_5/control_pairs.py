"""Two systems' matched controls compared (v1.5, docs: Definitions 87-90): which system stops *because of* the
overlap more often, and whose stop the event brings forward more. The lines `fdbu compare` adds to each v1.5
subset (the `control` entry's `compare` hook, fdbu.family.Compared), in the subset's Holm family; and the entry
itself (`ENTRY`, the family registers it).

Over the samples in both systems' matched controls (each system's own pairs: matched, exercised in both runs, runs
agreeing before the event as overlap.min_agreement asks), per sample and system the event-attributable outcome
X = stopped within k in the event run - in the clean run (-1, 0 or 1); the line is B's mean X - A's, decided by
the exact sign-flip test of the per-sample differences (the exact McNemar test where they are -1, 0, 1), with the
paired bootstrap's interval. The stop latency shift (the event run's median stop latency - the clean run's) is
compared as B's shift - A's, over the same resampled samples for both (paired bootstrap, its p and interval).
"""
from __future__ import annotations

from typing import Any, cast

import numpy as np

from ...kernels import INF
from ...common.timebase import seconds
from ...family import Compared, Entry
from .control import ATTRIBUTABLE, COMPARED_LEGEND, HEADLINE, SHIFT, check_entry, console, console_name, control_better, control_lines, label, lines, report_label
from .metrics import Components, from_rows, stopped_within
from ...metrics.paired import MINUS_INF, NO_PAIRS, PLUS_INF, TOO_FEW, MIN_BOOTSTRAP_PAIRS, bootstrap_p, expanded_ranks, interval_ranks, min_discordant, paired_line, resampled_differences, signed, signflip_exact, too_few_pairs
from ...metrics.stats import MEDIAN, Bootstrap, rank
from ...metrics.table import LATENCY, POOLED_RATIO, SHARE

SIGNFLIP = "signflip_exact"
OVER = "control pairs in both"  # what each line is over: the samples in both systems' matched controls
# the fewest samples in both controls with which the shift's paired bootstrap test marks
# (benchmarks/control_compare_calibration.py: its null rejection rate at n = 30)
MIN_SHIFT_PAIRS = MIN_BOOTSTRAP_PAIRS
BOTH_NOT_REACHED = ("a system's median stop latencies are not reached in either run (its speech covering o_s mostly "
                    "runs to the end in both): its shift, and so the difference, is not a number")


def _record(line: dict) -> dict:
    """One system's own control line on the joint pairs (event - clean), as the compared line's `a` or `b` record:
    its value and interval (null beside a +-inf flag)."""
    d = line["difference"]
    return {"value": d["value"], "interval": d["interval"], "value_flag": d["value_flag"],
            "interval_flags": d["interval_flags"]}


def attributable_line(xa: np.ndarray, xb: np.ndarray, boot: Bootstrap, alpha: float) -> dict:
    """B - A of the mean event-attributable outcome over the joint pairs (xa, xb in {-1, 0, 1}): the exact sign-flip
    test of d = xb - xa, and the expanded percentile interval of the paired bootstrap's mean differences
    (`expanded_ranks`: the plain percentile interval leaves 0 out of a true null's interval in 10% of datasets of
    8 pairs)."""
    n = len(xa)
    d = xb - xa
    out: dict[str, Any] = {"value": None, "value_flag": None, "interval": None, "interval_flags": None,
                           "excludes_zero": None, "resamples_kept": None}
    test: dict[str, Any] = {"test": SIGNFLIP, "p": None, "reason": None,
                            "discordant": {"a_only": int(np.count_nonzero(d < 0)), "b_only": int(np.count_nonzero(d > 0))}}
    if n == 0:
        out["value_flag"] = "undefined"
        test["reason"] = NO_PAIRS
        return {"difference": out, **test}
    ones = np.ones(n, np.int64)
    out["value"] = int(xb.sum()) / n - int(xa.sum()) / n
    kept = resampled_differences(POOLED_RATIO, (np.ascontiguousarray(xa, np.int64), ones),
                                 (np.ascontiguousarray(xb, np.int64), ones), n, boot)
    out["resamples_kept"] = len(kept)
    lo, hi = expanded_ranks(len(kept), n)
    out["interval"], out["interval_flags"] = [float(kept[lo - 1]), float(kept[hi - 1])], [None, None]
    out["excludes_zero"] = bool(out["interval"][0] > 0 or out["interval"][1] < 0)
    test["p"] = signflip_exact(d)
    informative = int(np.count_nonzero(d))
    if informative < min_discordant(alpha):
        test["reason"] = (f"{TOO_FEW} pairs: {informative} where the systems' event-attributable outcomes differ, and "
                          f"the exact sign-flip test cannot give p < {alpha:g} with fewer than {min_discordant(alpha)}")
    return {"difference": out, **test}


def extended_difference(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """x - y elementwise on int64 microseconds extended by +-INF (kernels.INF): compare's rule for latencies (docs:
    How compare decides) and for shifts of them: +INF where only x is +INF or only y is -INF, -INF where only x is
    -INF or only y is +INF, a tie (0) where both are the same infinity, else the difference."""
    x, y = np.asarray(x, np.int64), np.asarray(y, np.int64)
    finite = (np.abs(x) != INF) & (np.abs(y) != INF)
    same = (x == y) & ~finite
    up = ((x == INF) | (y == -INF)) & ~same
    return np.where(finite, np.where(finite, x, 0) - np.where(finite, y, 0), np.where(same, 0, np.where(up, INF, -INF)))


def _shifts(ev: np.ndarray, cl: np.ndarray, idx: np.ndarray, r: int) -> np.ndarray:
    """Each resample's shift: the event run's median stop latency - the clean run's (the r-th smallest of each), +INF
    where only the event run's is not reached, -INF where only the clean run's is, a tie (0) where both are."""
    me = np.partition(ev[idx], r - 1, axis=1)[:, r - 1]
    mc = np.partition(cl[idx], r - 1, axis=1)[:, r - 1]
    return extended_difference(me, mc)


def shift_line(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray], boot: Bootstrap,
               alpha: float) -> dict:
    """B's stop latency shift - A's over the joint pairs (each (event, clean) int64 microseconds, INF for a stop not
    observed): the paired bootstrap over resampled samples, the same rows for both systems and both runs, with
    compare's rule for medians not reached (`extended_difference`, every resample kept); no difference where one
    system's two point medians are both not reached (its shift is not a number)."""
    n = len(a[0])
    out: dict[str, Any] = {"value": None, "value_flag": None, "interval": None, "interval_flags": None,
                           "excludes_zero": None, "resamples_kept": None}
    test: dict[str, Any] = {"test": "paired_bootstrap", "p": None, "reason": None}
    r = rank(MEDIAN, n) if n else 0
    everything = np.arange(n)[None, :]
    both_never = n and any(np.partition(ev, r - 1)[r - 1] == INF and np.partition(cl, r - 1)[r - 1] == INF
                           for ev, cl in (a, b))
    if n == 0 or both_never:
        out["value_flag"] = "undefined"
        test["reason"] = NO_PAIRS if n == 0 else BOTH_NOT_REACHED
        return {"difference": out, **test}
    point = int(extended_difference(_shifts(*b, everything, r), _shifts(*a, everything, r))[0])
    out["value"], out["value_flag"] = extended(point)
    kept = np.sort(boot.over(n, lambda idx: extended_difference(_shifts(*b, idx, r), _shifts(*a, idx, r))))
    out["resamples_kept"] = len(kept)
    lo, hi = interval_ranks(len(kept))
    (x, fx), (y, fy) = extended(int(kept[lo - 1])), extended(int(kept[hi - 1]))
    out["interval"], out["interval_flags"] = [x, y], [fx, fy]
    out["excludes_zero"] = bool(cast(float, signed(x, fx)) > 0 or cast(float, signed(y, fy)) < 0)
    test["p"] = bootstrap_p(kept)
    if n < MIN_SHIFT_PAIRS:  # no p below it: not calibrated there (issue 54, item 3)
        test["p"], test["reason"] = None, too_few_pairs(n)
    elif 2 / (len(kept) + 1) >= alpha:
        test["reason"] = f"{TOO_FEW} resamples: {len(kept)} cannot give p < {alpha:g}"
    return {"difference": out, **test}


def extended(us: int) -> tuple[float | None, str | None]:
    """Microseconds extended by +-INF as a line's number: seconds, or None beside its +inf or -inf flag."""
    return (None, PLUS_INF) if us == INF else (None, MINUS_INF) if us == -INF else (seconds(us), None)


def compare(rows_a: list[dict], rows_b: list[dict], subset: str, unified: dict, boot: Bootstrap,
            alpha: float) -> dict:
    """The compared lines of one v1.5 subset for a pair of systems: `rows_a`, `rows_b` the samples eligible in
    both, in the same order. Returns the section compare.json holds under the pair's `entries.control`: the
    samples in each control and in both, why the others are left out, and each line as compare's other lines
    (both systems' records, the difference, the test, p, the reason)."""
    ca, cb = (from_rows(rows, subset, unified) for rows in (rows_a, rows_b))
    return compare_components(ca, cb, subset, unified, boot, alpha)


def compare_components(ca: Components, cb: Components, subset: str, unified: dict | None, boot: Bootstrap,
                       alpha: float) -> dict:
    """`compare` from both systems' components over the same samples, in the same order (what the calibration
    benchmark drives)."""
    n_all = len(ca.o_s)
    joint = ca.pairs & cb.pairs
    n = int(np.count_nonzero(joint))
    samples = {"eligible_in_both": n_all, "control_a": int(np.count_nonzero(ca.pairs)),
               "control_b": int(np.count_nonzero(cb.pairs)), "in_both_controls": n}
    metrics: dict[str, dict] = {}
    for line in lines(subset, unified):
        if line.kind == ATTRIBUTABLE:
            k = ca.settings.within_us[[f"event_attributable_stop_rate_{label(x)}" for x in
                                       ca.settings.within_us].index(line.name)]
            runs = [tuple(stopped_within(r, k)[joint].astype(np.int64) for r in (c.event, c.clean)) for c in (ca, cb)]
            ones = np.ones(n, np.int64)
            own = [paired_line(SHARE, (cl, ones), (ev, ones), n, boot, alpha) for ev, cl in runs]
            body = attributable_line(runs[0][0] - runs[0][1], runs[1][0] - runs[1][1], boot, alpha)
        else:
            stops = [tuple(np.ascontiguousarray(r.stop_us[joint]) for r in (c.event, c.clean)) for c in (ca, cb)]
            own = [paired_line(LATENCY, cl, ev, n, boot, alpha) for ev, cl in stops]
            body = shift_line((stops[0][0], stops[0][1]), (stops[1][0], stops[1][1]), boot, alpha)
        metrics[line.name] = {"kind": line.kind, "better": line.better, "headline": line.headline, "over": OVER,
                              "n": n, "a": _record(own[0]), "b": _record(own[1]), **body}
    said = (f"in both matched controls: {n} of {n_all} samples eligible in both (a's control "
            f"{samples['control_a']}, b's {samples['control_b']})")
    warnings = []
    left = n_all - n
    if left:
        unmatched = ~(ca.matched & cb.matched)
        unexercised = ~unmatched & ~(ca.both & cb.both)  # both: exercised in both runs and matched
        disagreeing = ~joint & ~unmatched & ~unexercised
        said = "; ".join(f"{count} {why}" for count, why in (
            (int(np.count_nonzero(unexercised)), "not exercised in both runs of a system"),
            (int(np.count_nonzero(disagreeing)), f"whose runs agree less than overlap.min_agreement "
                                                 f"({ca.min_agreement:g}) before the event in a system"),
            (int(np.count_nonzero(unmatched)), "with unmatched inputs")) if count)
        warnings.append(f"{left} of the {n_all} samples eligible in both are outside a system's matched control "
                        f"({said}): left out, as each system's own control leaves them")
    if 0 < n < MIN_SHIFT_PAIRS:
        warnings.append(f"small paired set: {n} samples in both controls; the shift is tested from {MIN_SHIFT_PAIRS} "
                        f"pairs, the event-attributable rates from {min_discordant(alpha)} samples whose outcomes "
                        "differ")
    return {"samples": samples, "note": said, "warnings": warnings, "metrics": metrics}


# v1.5's `control` entry (fdbu.family.Entry), declared here, above the modules it draws on (control: what it holds
# and how it is shown; overlap: the components; this module: two systems' controls compared), so no module below
# loads one above it
ENTRY = Entry(
    key="control", lines=control_lines, better=control_better, label=report_label, check=check_entry,
    console=console, count=lambda c: c["pairs"],
    columns={"pairs": "int", "min_agreement": "float", "event_rate": "float", "clean_rate": "float"},
    row=lambda c, line: {"pairs": c["pairs"], "min_agreement": c["min_agreement"], "event_rate": line.get("event_rate"),
                         "clean_rate": line.get("clean_rate")},
    sweep={HEADLINE: "attrib_stop<=1s", SHIFT: "stop_shift_s"},
    compared=Compared(lines, compare, COMPARED_LEGEND, console_name))
