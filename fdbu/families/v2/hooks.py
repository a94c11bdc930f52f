"""Full-Duplex-Bench v2's family hooks (fdbu.family), beside its metric module `fdbu.families.v2.metrics`: the settings
group `session.*` (docs: Definitions 77-81), and the `judge`, `offset` and `bins` entries of each v2 subset as score
prints them, the scored reader checks them, the report labels them and the API frames them (Definitions 82-86). The
entries themselves are computed by `fdbu.families.v2.metrics`; the events' arithmetic is `fdbu.families.v2.events`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List

from ...family import Entry, Group
from ...config.settings import MS_UP_TO_MINUTE, check, opt, within
from ...common.timebase import seconds, to_us

TASK = "session"
GROUP_KEY = "session"
TURN_END_OUTCOMES = ("response", "overlapped", "no_response", "examiner_resumed", "unobserved")
ANSWERABLE = ("response", "overlapped", "no_response")  # the turn ends the response rate is over
EXAMINER, SYSTEM = "input.wav", "output.wav"  # upstream's A.wav and B.wav


@dataclass(frozen=True)
class SessionSettings:
    """session.*: how turns are made and what counts as a response, a stop and a backchannel (microseconds)."""

    merge_gap_us: int = 500_000
    window_us: int = 3_000_000
    stop_within_us: int = 2_000_000
    backchannel_max_us: int = 1_000_000
    backchannel_max_words: int = 2
    offsets_ms: tuple[int, ...] = (-100, -50, 50, 100)

    KEYS = ("merge_gap", "window", "stop_within", "backchannel_max")

    @classmethod
    def of(cls, doc: dict | None) -> "SessionSettings":
        """From a unified.json's (or sweep.json's) `session` header; the defaults where there is none."""
        return cls.from_header((doc or {}).get(GROUP_KEY))

    @classmethod
    def from_header(cls, head: dict | None) -> "SessionSettings":
        head, d = head or {}, cls()
        us = {f"{k}_us": to_us(head[f"{k}_s"]) if f"{k}_s" in head else getattr(d, f"{k}_us") for k in cls.KEYS}
        return cls(**us, backchannel_max_words=int(head.get("backchannel_max_words", d.backchannel_max_words)),
                   offsets_ms=tuple(int(v) for v in head.get("offsets_ms", d.offsets_ms)))

    def header(self) -> dict:
        return {**{f"{k}_s": seconds(getattr(self, f"{k}_us")) for k in self.KEYS},
                "backchannel_max_words": self.backchannel_max_words, "offsets_ms": list(self.offsets_ms),
                "clock": CLOCK}

    def non_default(self) -> list[str]:
        d = SessionSettings().header()
        return [f"session.{k}={v}" for k, v in self.header().items() if v != d[k]]


CLOCK = ("A.wav and B.wav on one clock from their first samples: upstream's assumption (asr_batch.py's "
         "combine_transcripts sorts both channels by start time; the judge's windows are in that clock); the "
         "'offset' entry gives each latency if B were shifted against A")
DEFAULT = SessionSettings()


@dataclass
class SessionConfig:
    """session.* on the command line: the user's seconds, checked, as `SessionSettings`."""

    merge_gap_s: float = opt(seconds(DEFAULT.merge_gap_us), "v2: one channel's speech segments closer than this "
                             "(seconds) are one turn")
    window_s: float = opt(seconds(DEFAULT.window_us), "v2: a system turn starting within this many seconds after "
                          "the examiner's turn ends (and before the examiner's next) is a response")
    stop_within_s: float = opt(seconds(DEFAULT.stop_within_us), "v2: when the examiner starts while the system "
                               "speaks, a system turn ending within this many seconds is a stop")
    backchannel_max_s: float = opt(seconds(DEFAULT.backchannel_max_us), "v2: a system turn inside an examiner turn "
                                   "no longer than this (seconds) can be a backchannel")
    backchannel_max_words: int = opt(DEFAULT.backchannel_max_words, "v2: ... and with at most this many words")
    offsets_ms: List[int] = opt(list(DEFAULT.offsets_ms), "v2: the offsets (ms, B.wav shifted later against A.wav; "
                                "negative: earlier) at which each latency is given again, to show what a recording "
                                "offset between the channels could move it; at most 8, from -2000 to 2000, not 0")

    def __post_init__(self):
        within(self, "session.", merge_gap_s=MS_UP_TO_MINUTE, window_s=MS_UP_TO_MINUTE, stop_within_s=MS_UP_TO_MINUTE,
               backchannel_max_s=MS_UP_TO_MINUTE)
        check(0 <= self.backchannel_max_words <= 100, "session.backchannel_max_words", self.backchannel_max_words,
              "a whole number from 0 to 100")
        ok = len(self.offsets_ms) <= 8 and len(set(self.offsets_ms)) == len(self.offsets_ms) and all(
            type(v) is int and v != 0 and -2000 <= v <= 2000 for v in self.offsets_ms)
        check(ok, "session.offsets_ms", list(self.offsets_ms), "at most 8 different whole numbers of ms from -2000 to "
              "2000, none 0")

    def settings(self) -> SessionSettings:
        return SessionSettings(to_us(self.merge_gap_s), to_us(self.window_s), to_us(self.stop_within_s),
                               to_us(self.backchannel_max_s), int(self.backchannel_max_words),
                               tuple(sorted(int(v) for v in self.offsets_ms)))


GROUP = Group(GROUP_KEY, "Full-Duplex-Bench v2's session timing", SessionConfig, SessionSettings.from_header)


def settings_of(settings) -> SessionSettings:
    return settings if isinstance(settings, SessionSettings) else SessionSettings.of(settings)


JUDGED = ("latency_s", "overlap_share", "silence_share")  # the timing measured inside each judged event's window

BIN_US, N_BINS = 15_000_000, 8  # score_time.py's bins: 15 s over the first 120 s
BINS_KEY = "bins"
# line -> (numerator, denominator): of BIN_FIELDS (fdbu.families.v2.events)
BINNED = {"response_rate": (1, 0), "overlap_share": (2, 3), "judge_tt": (4, 5), "judge_if": (6, 5)}


def bin_label(k: int) -> str:
    return f"{k * BIN_US // 1_000_000}_{(k + 1) * BIN_US // 1_000_000}s"



OFFSET_KEY = "offset"
SHIFTED = ("response_latency_s", "stop_latency_s")  # the latencies given again at each offset
JUDGE_KEY = "judge"
STATISTICS = ("kendall_tau_b", "spearman")


def judge_lines(entry: dict) -> dict[str, dict]:
    return entry["lines"]


JUDGED_LABELS = {"latency_s": "response latency", "overlap_share": "overlap share", "silence_share": "silence share"}


def judge_label(name: str) -> str:
    """latency_s_kendall_tau_b -> "judge TT vs response latency: Kendall's tau-b"."""
    metric, stat = next((name[:-len(s) - 1], s) for s in STATISTICS if name.endswith(s))
    return f"judge TT vs {JUDGED_LABELS[metric]}: " + ("Kendall's tau-b" if stat == "kendall_tau_b" else
                                                          "Spearman's rho")


def check_judge(r, entry: dict, at: str, doc: dict) -> None:
    """A v2 subset's `judge` entry as the scored reader `r` checks it: its counts and each line the report, the API
    and the console read."""
    j = r.obj(entry, JUDGE_KEY, f"{at}.{JUDGE_KEY}")
    r.fields(j, {"sessions": "count", "events": "count", "not_judged": "count"}, f"{at}.{JUDGE_KEY}.")
    lines = j.get("lines")
    if not isinstance(lines, dict):
        r.refuse(f"{at}.{JUDGE_KEY}.lines", "is missing or not an object")
    for name, line in lines.items():
        where = f"{at}.{JUDGE_KEY}.lines.{name}"
        if name not in {f"{m}_{s}" for m in JUDGED for s in STATISTICS} or not isinstance(line, dict):
            r.refuse(where, "is not a line fdbu writes")
        r.fields(line, {"n": "count", "sessions": "count", "resamples_kept": "count", "p": "unit?", "p_holm": "unit?",
                        "marker": "flag", "reason": "text?"}, f"{where}.")
        d = r.obj(line, "difference", f"{where}.difference")
        if not (d.get("value") is None or (r.ok("number", d["value"]) and -1 <= d["value"] <= 1)):
            r.refuse(f"{where}.difference.value", f"is {d.get('value')!r}, not a correlation from -1 to 1 or null")
        iv = d.get("interval")
        if iv is not None and not (isinstance(iv, list) and len(iv) == 2 and all(r.ok("number", x) for x in iv)):
            r.refuse(f"{where}.difference.interval", "is not null or two numbers")


def judge_console(j: dict) -> list[str]:
    """What score prints of the judge entry, under the subset's table."""
    if not j["sessions"]:
        return [f"  the judge: no session judged ({j['not_judged']} not judged): no correlation with its scores"]
    unjudged = f", {j['not_judged']} not judged" if j["not_judged"] else ""
    out = [f"  the judge's turn-taking score against the timing inside each judged event ({j['events']} events in "
           f"{j['sessions']} sessions{unjudged}; "
           "rank correlations with 95% intervals over sessions, descriptive):"]
    for name, line in j["lines"].items():
        d = line["difference"]
        value = "undefined" if d["value"] is None else f"{d['value']:+.3f}"
        iv = "" if d["interval"] is None else f" [{d['interval'][0]:+.3f}, {d['interval'][1]:+.3f}]"
        why = "" if line["reason"] == "descriptive" else f"; {line['reason']}"
        out.append(f"    {judge_label(name):<46} {value}{iv}  ({line['n']} events, {line['sessions']} session{'s' if line['sessions'] != 1 else ''}{why})")
    return out


def offset_console(o: dict) -> list[str]:
    """What score prints of the offset entry."""
    out = ["  if B.wav's clock were offset against A.wav's (B later by the offset; the channels' shared clock is "
           "upstream's assumption):"]
    for name in SHIFTED:
        cells = [f"{_num(o['at_0'][name])} as recorded"] + [
            f"{ms:+d} ms {_num(o['lines'][f'{name}_at_{ms:+d}ms']['value'])}" for ms in o["offsets_ms"]]
        out.append(f"    {name:<22} " + ", ".join(cells))
    return out


def _num(v) -> str:
    return "n/a" if v is None else v if isinstance(v, str) else f"{v:.3f}"


def check_offset(r, entry: dict, at: str, doc: dict) -> None:
    o = r.obj(entry, OFFSET_KEY, f"{at}.{OFFSET_KEY}")
    lines, at0 = r.obj(o, "lines", f"{at}.{OFFSET_KEY}.lines"), r.obj(o, "at_0", f"{at}.{OFFSET_KEY}.at_0")
    offsets = o.get("offsets_ms")
    if not (isinstance(offsets, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in offsets)):
        r.refuse(f"{at}.{OFFSET_KEY}.offsets_ms", "is not a list of whole numbers")
    for name in SHIFTED:
        r.value(at0, name, "quantile?", f"{at}.{OFFSET_KEY}.at_0.{name}")
        for ms in offsets:
            key = f"{name}_at_{ms:+d}ms"
            line = lines.get(key)
            if not isinstance(line, dict):
                r.refuse(f"{at}.{OFFSET_KEY}.lines.{key}", "is missing or not an object")
            r.value(line, "value", "quantile?", f"{at}.{OFFSET_KEY}.lines.{key}.value")
            r.obj(line, "difference", f"{at}.{OFFSET_KEY}.lines.{key}.difference")


def offset_label(name: str) -> str:
    """response_latency_s_at_-100ms -> "response latency change (s), B shifted -100 ms": the line's value in a table
    is the change from the value as recorded, not the latency."""
    metric, ms = name.split("_s_at_")
    return f"{metric.replace('_', ' ')} change (s), B shifted {ms[:-2]} ms"


OFFSET_ENTRY = Entry(key=OFFSET_KEY, kind="latency_change", lines=lambda o: o["lines"], better=lambda subset, doc: {
    f"{n}_at_{ms:+d}ms": "context" for n in SHIFTED for ms in SessionSettings.of(doc).offsets_ms},
    label=lambda name: offset_label(name), check=check_offset, console=offset_console,
    count=lambda o: len(o["lines"]), columns={"value": "float"},
    row=lambda o, line: {"value": line["value"] if isinstance(line["value"], float) else None})


def bins_console(e: dict) -> list[str]:
    """What score prints of the bins entry: one row per line, one column per bin."""
    head = "".join(f"{bin_label(k).replace('_', '-'):>10}" for k in range(N_BINS))
    out = ["  by 15 s of conversation (pooled over sessions; 95% intervals in unified.json):",
           f"    {'':<16}{head}"]
    for name in BINNED:
        cells = []
        for k in range(N_BINS):
            v = e["lines"][f"{name}_{bin_label(k)}"]["difference"]["value"]
            cells.append(f"{'-' if v is None else f'{v:.3f}':>10}")
        out.append(f"    {name:<16}" + "".join(cells))
    return out


def check_bins(r, entry: dict, at: str, doc: dict) -> None:
    e = r.obj(entry, BINS_KEY, f"{at}.{BINS_KEY}")
    lines = r.obj(e, "lines", f"{at}.{BINS_KEY}.lines")
    for name in BINNED:
        for k in range(N_BINS):
            key = f"{name}_{bin_label(k)}"
            line = lines.get(key)
            if not isinstance(line, dict):
                r.refuse(f"{at}.{BINS_KEY}.lines.{key}", "is missing or not an object")
            r.fields(line, {"sessions": "count", "marker": "flag"}, f"{at}.{BINS_KEY}.lines.{key}.")
            d = r.obj(line, "difference", f"{at}.{BINS_KEY}.lines.{key}.difference")
            r.value(d, "value", "ratio?", f"{at}.{BINS_KEY}.lines.{key}.difference.value")


def bins_label(name: str) -> str:
    """response_rate_0_15s -> "response rate, 0-15 s"; judge_tt_... -> "judge TT, ..."."""
    metric, lo, hi = name.rsplit("_", 2)
    return f"{metric.replace('_', ' ').replace('tt', 'TT').replace('if', 'IF')}, {lo}-{hi[:-1]} s"


BINS_ENTRY = Entry(key=BINS_KEY, kind="binned_ratio", lines=lambda e: e["lines"], better=lambda subset, doc: {
    f"{n}_{bin_label(k)}": "context" for n in BINNED for k in range(N_BINS)},
    label=lambda name: bins_label(name), check=check_bins,
    console=bins_console, count=lambda e: e["bins"], columns={"sessions": "int"},
    row=lambda e, line: {"sessions": line["sessions"]})


JUDGE_ENTRY = Entry(key=JUDGE_KEY, kind="rank_correlation", lines=judge_lines, better=lambda subset, doc: {
    f"{m}_{s}": "context" for m in JUDGED for s in STATISTICS}, label=judge_label, check=check_judge,
    console=judge_console, count=lambda j: j["events"], columns={"n": "int"}, row=lambda j, line: {"n": line["n"]})

