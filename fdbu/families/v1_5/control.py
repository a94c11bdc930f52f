"""Full-Duplex-Bench v1.5's matched control, as its family's hooks (fdbu.family): the settings group `overlap.*`,
and the `control` entry of each v1.5 subset (docs: Definitions 56-59) as score prints it, the reader checks it,
the report shows it and the API frames it, and the lines `fdbu compare` adds when it compares two systems' controls
(`lines`, Definitions 87-90). The entry itself is computed by `fdbu.families.v1_5.metrics.control`, the compared lines by
`fdbu.families.v1_5.control_pairs`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List

from ...common.cells import difference_text, fmt, p_text
from ...errors import short
from ...family import Group
from ...config.settings import MS_UP_TO_MINUTE, PAD_MAX_MS, UNIT, check, opt, within
from ...common.timebase import US_PER_S, seconds, to_us
from ...metrics.table import readable

WITHIN_US = (500_000, 1_000_000, 2_000_000)  # the k of "stopped within k" and "resumed within k" (Definition 53)
HEADLINE_US = 1_000_000  # the k of the headline lines: always among the k values
STOP_WANTED = ("user_interruption",)  # the subsets where a stop at the event is the wanted behaviour
MAX_K = 8  # k values at most


def label(k_us: int) -> str:
    """500 ms, 1 s, 2 s as a metric name's suffix: 500ms, 1s, 2s."""
    return f"{k_us // US_PER_S}s" if k_us % US_PER_S == 0 else f"{k_us // 1000}ms"


HEADLINE = f"event_attributable_stop_rate_{label(HEADLINE_US)}"
HEADLINE_S = HEADLINE_US / US_PER_S
SHIFT = "stop_latency_shift_s"


@dataclass(frozen=True)
class ControlSettings:
    """overlap.*: the k values (microseconds; 1 s, the headline's, always among them) and the agreement the control
    asks of a pair (Definitions 53, 57). unified.json's `overlap` records them; every reader rebuilds them from it."""

    within_us: tuple[int, ...] = WITHIN_US
    min_agreement: float = 0.0

    @classmethod
    def of(cls, doc: dict | None) -> "ControlSettings":
        """From a unified.json's (or sweep.json's) `overlap` header; the defaults where there is none."""
        return cls.from_header((doc or {}).get(GROUP_KEY))

    @classmethod
    def from_header(cls, head: dict | None) -> "ControlSettings":
        head = head or {}
        within_s = head.get("within_s")
        return cls(tuple(to_us(k) for k in within_s) if within_s else WITHIN_US, head.get("min_agreement", 0.0))

    def header(self) -> dict:
        return {"within_s": [seconds(k) for k in self.within_us], "min_agreement": self.min_agreement}

    def non_default(self) -> list[str]:
        """The settings that differ from the defaults, as the signature lists them."""
        out = [f"overlap.within_s={[seconds(k) for k in self.within_us]}"] if self.within_us != WITHIN_US else []
        return out + ([f"overlap.min_agreement={self.min_agreement}"] if self.min_agreement else [])


DEFAULT_CONTROL = ControlSettings()  # the defaults: 0.5, 1 and 2 s; every sample exercised in both runs
GROUP_KEY = "overlap"


@dataclass
class OverlapConfig:
    """overlap.* on the command line: the user's seconds, checked, as `ControlSettings`."""

    within_s: List[float] = opt([seconds(k) for k in WITHIN_US], "v1.5's k values: stopped (and resumed) within k "
                                "seconds, each a whole number of ms from 0.001 to 60, 1 s (the headline) among them")
    min_agreement: float = opt(DEFAULT_CONTROL.min_agreement, "v1.5's matched control pairs only samples whose two "
                               "runs agree at least this much before the event (speech IoU on [0, o_s], 0 to 1; 0: "
                               "every sample exercised in both runs)")

    def __post_init__(self):
        within(self, "overlap.", min_agreement=UNIT, within_s=MS_UP_TO_MINUTE)
        ks = [to_us(v) for v in self.within_s]
        check(HEADLINE_US in ks and len(set(ks)) == len(ks) and len(ks) <= MAX_K, "overlap.within_s",
              list(self.within_s), f"at most {MAX_K} different values, 1 s (the headline lines') among them")

    def settings(self) -> ControlSettings:
        return ControlSettings(tuple(sorted(to_us(v) for v in self.within_s)), float(self.min_agreement))


GROUP = Group(GROUP_KEY, "Full-Duplex-Bench v1.5's matched control", OverlapConfig, ControlSettings.from_header)


def settings_of(settings) -> ControlSettings:
    """ControlSettings from itself, a unified.json-like dict, or None (the defaults)."""
    return settings if isinstance(settings, ControlSettings) else ControlSettings.of(settings)


def control_lines(control: dict) -> dict[str, dict]:
    """The control's lines by name, in order: each k's event-attributable stop rate, then the stop latency shift."""
    return {**control["stops"], SHIFT: control[SHIFT]}


def control_better(subset: str, settings: "ControlSettings | dict | None" = None) -> dict[str, str]:
    """Which direction of each control line is better in `subset` (Definition 55): where a stop is wanted, more
    event-attributable stops and a stop sooner in the event run than in the clean run."""
    stop = subset in STOP_WANTED
    return {**{f"event_attributable_stop_rate_{label(k)}": "higher" if stop else "lower"
               for k in settings_of(settings).within_us},
            SHIFT: "lower" if stop else "higher"}


def console(c: dict) -> list[str]:
    """v1.5's matched control (docs: Definitions 56-58) as score prints it: event run - clean run over the pairs."""
    a = c["agreement"]
    agree = "no pair" if a["median"] is None else \
        f"median IoU {fmt(a['median'])}, {a['count_at_least']}/{a['n']} at least {fmt(a['at_least'])}"
    restricted = f", restricted to agreement >= {fmt(c['min_agreement'])}" if c["min_agreement"] else ""
    left = [f"{c['unmatched']} exercised in both runs but unmatched (the inputs differ by more than "
            f"{PAD_MAX_MS} ms: in the per-run metrics only)"] if c["unmatched"] else []
    if c["exercised_both"] > c["pairs"]:
        left.append(f"{c['exercised_both'] - c['pairs']} below the agreement asked (overlap.min_agreement)")
    out = [f"  matched control (event run - clean run): {c['pairs']} pairs exercised in both runs{restricted}"
           + (f"; left out: {'; '.join(left)}" if left else ""),
           f"  the runs' agreement before the event: {agree}",
           f"  {'line':<38} {'difference [95% interval]':<28} {'p':>6} {'holm':>6}"]
    for name, line in control_lines(c).items():
        holm = "" if line["p_holm"] is None else p_text(line["p_holm"])
        out.append(f"  {name:<38} {difference_text(line['difference']):<28} {p_text(line['p']):>6} {holm:>6}"
                   f"{' *' if line['marker'] else ''}")
    return out + [f"  * Holm p < {c['alpha']:g} over the two headline lines (stop within 1 s, the stop latency's "
                  "median)"]


ATTRIBUTABLE, SHIFT_KIND = "attributable_share", "latency_shift"  # the compared lines' kinds


@dataclass(frozen=True)
class Line:
    """A compared line's declaration, as compare.json's reader checks it (a `Metric`'s name, kind, better and
    headline)."""

    name: str
    kind: str
    better: str
    headline: bool


def lines(subset: str, unified: dict | None) -> tuple[Line, ...]:
    """The compared lines of a v1.5 subset: each k's event-attributable stop rate (1 s the headline), then the stop
    latency shift (a headline line): the two headline lines of each system's own control."""
    better = control_better(subset, unified)
    ks = ControlSettings.of(unified).within_us
    return (*(Line(f"event_attributable_stop_rate_{label(k)}", ATTRIBUTABLE,
                   better[f"event_attributable_stop_rate_{label(k)}"], k == HEADLINE_US) for k in ks),
            Line(SHIFT, SHIFT_KIND, better[SHIFT], True))


COMPARED_LEGEND = ("control on SUBSET: each system's matched control (event run - clean run, on the samples in both "
                   "controls), then b - a, in the subset's Holm family; attributable_stop_k: the event-attributable "
                   "stop rate within k, its p the exact sign-flip test of the per-sample differences; "
                   "stop_latency_shift_s: paired bootstrap")


def console_name(name: str) -> str:
    """A compared line's name as compare's console fits it: the event-attributable stop rates shortened (the legend
    says so); compare.json and compare.csv keep the whole name."""
    return name.replace("event_attributable_stop_rate", "attributable_stop")


CONTROL = {"pairs": "count", "exercised_both": "count", "unmatched": "count", "clean_exercised": "count",
           "min_agreement": "unit", "alpha": "unit"}
LINE = {"p": "unit?", "p_holm": "unit?", "marker": "flag", "reason": "text?"}
DIFFERENCE = {"value": "number?", "value_flag": "text?"}


def check_entry(r, entry: dict, at: str, doc: dict) -> None:
    """A v1.5 subset's `control` (docs: Definitions 58-59), as the scored reader `r` checks it: its counts, the
    agreement, and every line the report, the API and the console read, each with its paired difference; and the
    `overlap` header they were computed with."""
    head = r.obj(doc, GROUP_KEY, GROUP_KEY)
    r.fields(head, {"min_agreement": "unit"}, "overlap.")
    within_s = head.get("within_s")
    if not (isinstance(within_s, list) and within_s and all(r.ok("seconds", k) and k > 0 for k in within_s)):
        r.refuse("overlap.within_s", f"is {short(within_s)}, not a list of seconds > 0")
    within_us = ControlSettings.of(doc).within_us
    if HEADLINE_US not in within_us:
        r.refuse("overlap.within_s", f"is {short(within_s)}, without 1 s (the headline's)")

    c = r.obj(entry, "control", f"{at}.control")
    r.fields(c, CONTROL, f"{at}.control.")
    r.fields(r.obj(c, "agreement", f"{at}.control.agreement"), {"n": "count", "median": "unit?", "at_least": "unit",
                                                                 "count_at_least": "count"}, f"{at}.control.agreement.")
    stops = r.obj(c, "stops", f"{at}.control.stops")
    lines = {f"stops.event_attributable_stop_rate_{label(k)}": stops.get(f"event_attributable_stop_rate_{label(k)}")
             for k in within_us}
    for name, line in [*lines.items(), (SHIFT, c.get(SHIFT))]:
        where = f"{at}.control.{name}"
        if not isinstance(line, dict):
            r.refuse(where, "is missing or not an object")
        r.fields(line, LINE, f"{where}.")
        d = r.obj(line, "difference", f"{where}.difference")
        r.fields(d, DIFFERENCE, f"{where}.difference.")
        iv = d.get("interval")  # an end beyond the captures is null beside its +inf or -inf flag
        if iv is not None and not (isinstance(iv, list) and len(iv) == 2 and all(x is None or r.ok("number", x)
                                                                                 for x in iv)):
            r.refuse(f"{where}.difference.interval", f"is {short(iv)}, not null or two numbers (or nulls)")


def report_label(name: str) -> str:
    return readable(name).replace("event attributable", "event-attributable") + " (event - clean)"
