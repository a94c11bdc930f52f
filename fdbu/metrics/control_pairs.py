"""Two systems' matched controls compared (v1.5, README: Definitions 87-90): which system stops *because of* the
overlap more often, and whose stop the event brings forward more. The lines `fdbu compare` adds to each v1.5
subset (the `control` entry's `compare` hook, fdbu.family.Compared), in the subset's Holm family.

Over the samples in both systems' matched controls (each system's own pairs: matched, exercised in both runs, runs
agreeing before the event as overlap.min_agreement asks), per sample and system the event-attributable outcome
X = stopped within k in the event run - in the clean run (-1, 0 or 1); the line is B's mean X - A's, decided by
the exact sign-flip test of the per-sample differences (the exact McNemar test where they are -1, 0, 1), with the
paired bootstrap's interval. The stop latency shift (the event run's median stop latency - the clean run's) is
compared as B's shift - A's, over the same resampled samples for both (paired bootstrap, its p and interval).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..kernels import INF
from ..timebase import seconds
from .control import ATTRIBUTABLE, label, lines
from .overlap import Components, from_rows, stopped_within
from .paired import (NO_PAIRS, TOO_FEW, MIN_BOOTSTRAP_PAIRS, bootstrap_p, interval_ranks, min_discordant,
                     paired_line, resampled_differences, signflip_exact)
from .stats import MEDIAN, Bootstrap, rank
from .table import LATENCY, POOLED_RATIO, SHARE

SIGNFLIP = "signflip_exact"
OVER = "control pairs in both"  # what each line is over: the samples in both systems' matched controls
# the fewest samples in both controls with which the shift's paired bootstrap test marks
# (benchmarks/control_compare_calibration.py: its null rejection rate at n = 30)
MIN_SHIFT_PAIRS = MIN_BOOTSTRAP_PAIRS
ANY_NOT_REACHED = ("a median stop latency is not reached (a run whose speech covering o_s mostly runs to the end): "
                   "the shifts' difference is not a number")


def _record(line: dict) -> dict:
    """One system's own control line on the joint pairs (event - clean), as the compared line's `a` or `b` record:
    its value and interval (null beside a +-inf flag)."""
    d = line["difference"]
    return {"value": d["value"], "interval": d["interval"], "value_flag": d["value_flag"],
            "interval_flags": d["interval_flags"]}


def attributable_line(xa: np.ndarray, xb: np.ndarray, boot: Bootstrap, alpha: float) -> dict:
    """B - A of the mean event-attributable outcome over the joint pairs (xa, xb in {-1, 0, 1}): the exact sign-flip
    test of d = xb - xa, the paired bootstrap's interval of the mean difference."""
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
    out["value"] = int(xb.sum()) / n - int(xa.sum()) / n  # the same floats as the two records' values
    kept = resampled_differences(POOLED_RATIO, (np.ascontiguousarray(xa, np.int64), ones),
                                 (np.ascontiguousarray(xb, np.int64), ones), n, boot)
    out["resamples_kept"] = len(kept)
    lo, hi = interval_ranks(len(kept))
    out["interval"], out["interval_flags"] = [float(kept[lo - 1]), float(kept[hi - 1])], [None, None]
    out["excludes_zero"] = bool(out["interval"][0] > 0 or out["interval"][1] < 0)
    test["p"] = signflip_exact(d)
    informative = int(np.count_nonzero(d))
    if informative < min_discordant(alpha):
        test["reason"] = (f"{TOO_FEW} pairs: {informative} where the systems' event-attributable outcomes differ, and "
                          f"the exact sign-flip test cannot give p < {alpha:g} with fewer than {min_discordant(alpha)}")
    return {"difference": out, **test}


def _shifts(ev: np.ndarray, cl: np.ndarray, idx: np.ndarray, r: int) -> tuple[np.ndarray, np.ndarray]:
    """Each resample's shift (the event run's median stop latency - the clean run's, the r-th smallest of each) and
    whether both medians are reached."""
    me = np.partition(ev[idx], r - 1, axis=1)[:, r - 1]
    mc = np.partition(cl[idx], r - 1, axis=1)[:, r - 1]
    return me - mc, (me != INF) & (mc != INF)


def shift_line(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray], boot: Bootstrap,
               alpha: float) -> dict:
    """B's stop latency shift - A's over the joint pairs (each (event, clean) int64 microseconds, INF for a stop not
    observed): the paired bootstrap over resampled samples, the same rows for both systems; a resample where any of
    the four medians is not reached is not kept; no difference where a point median is not reached."""
    n = len(a[0])
    out: dict[str, Any] = {"value": None, "value_flag": None, "interval": None, "interval_flags": None,
                           "excludes_zero": None, "resamples_kept": None}
    test: dict[str, Any] = {"test": "paired_bootstrap", "p": None, "reason": None}
    if n == 0:
        out["value_flag"] = "undefined"
        test["reason"] = NO_PAIRS
        return {"difference": out, **test}
    r = rank(MEDIAN, n)
    everything = np.arange(n)[None, :]
    (sa0, ok_a0), (sb0, ok_b0) = _shifts(*a, everything, r), _shifts(*b, everything, r)
    if not (ok_a0[0] and ok_b0[0]):
        out["value_flag"] = "undefined"
        test["reason"] = ANY_NOT_REACHED
        return {"difference": out, **test}
    out["value"] = seconds(int(sb0[0]) - int(sa0[0]))

    def kernel(idx: np.ndarray) -> np.ndarray:
        (sa, ok_a), (sb, ok_b) = _shifts(*a, idx, r), _shifts(*b, idx, r)
        return np.where(ok_a & ok_b, sb - sa, INF)

    diffs = boot.over(n, kernel)
    kept = np.sort(diffs[diffs != INF])
    out["resamples_kept"] = len(kept)
    if len(kept):
        lo, hi = interval_ranks(len(kept))
        out["interval"], out["interval_flags"] = [seconds(int(kept[lo - 1])), seconds(int(kept[hi - 1]))], [None, None]
        out["excludes_zero"] = bool(out["interval"][0] > 0 or out["interval"][1] < 0)
    test["p"] = bootstrap_p(kept)
    if test["p"] is None:
        test["reason"] = "no resample with every median reached"
    elif n < MIN_SHIFT_PAIRS:
        test["reason"] = (f"{TOO_FEW} pairs: {n}, and the paired bootstrap test needs at least {MIN_SHIFT_PAIRS} "
                          "to hold its level")
    elif 2 / (len(kept) + 1) >= alpha:
        test["reason"] = f"{TOO_FEW} resamples: {len(kept)} kept cannot give p < {alpha:g}"
    return {"difference": out, **test}


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
        warnings.append(f"{left} of the {n_all} samples eligible in both are outside one system's matched "
                        "control (not exercised in both runs, inputs unmatched, or runs agreeing less than "
                        "overlap.min_agreement before the event): left out, as each system's own control leaves them")
    if 0 < n < MIN_SHIFT_PAIRS:
        warnings.append(f"small paired set: {n} samples in both controls; the shift is tested from {MIN_SHIFT_PAIRS} "
                        f"pairs, the event-attributable rates from {min_discordant(alpha)} samples whose outcomes "
                        "differ")
    return {"samples": samples, "note": said, "warnings": warnings, "metrics": metrics}
