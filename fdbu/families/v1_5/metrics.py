"""Full-Duplex-Bench v1.5 overlap subsets: user_interruption, user_backchannel, talking_to_other, background_speech.

Each sample has two runs of the same system: the event run (output.wav, answering input.wav, which holds an
overlap event at [o_s, o_e] from metadata.json) and the clean run (clean_output.wav, answering clean_input.wav,
the same dialogue without the event). Silero segments of both runs give, per run, whether the speech covering o_s
ends within k s (a stop), when, how much speech falls inside the event, and what follows it (docs: Definitions
52-60). The matched control pairs the two runs of each sample exercised in both: the event-attributable stop rate
is the paired difference event - clean, with `fdbu compare`'s exact McNemar test and interval (one code path,
`paired.paired_line`), so an answer that ended on its own is not counted as a reactive stop.

What is better depends on the subset (`table`): in user_interruption a stop is wanted; in the other three
keeping the floor is.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import cast
import numpy as np

from ...common.cells import fmt
from ...kernels import INF, OverlapRun, overlap_run, run_overlap_us
from ...config.settings import ALPHA, PAD_MAX_MS
from ...common.timebase import US_PER_S, seconds, to_us
from ...metrics.base import Runs, Swept
from .control import DEFAULT_CONTROL, HEADLINE, HEADLINE_S, HEADLINE_US, SHIFT, STOP_WANTED, ControlSettings, control_lines, label, settings_of
from ...metrics.flat import column, flatten
from ...metrics.paired import holm, paired_line
from ...metrics.stats import Bootstrap, rank
from ...metrics.table import LATENCY, POOLED_RATIO, SHARE, Metric, aggregate as aggregate_table

TASK = "overlap"  # its task's name (fdbu.tasks), the rows' "task"
AGREEMENT_SHOWN = 0.5  # the run agreement the control's summary counts samples at or above (Definition 57)
INPUTS = ("T_s", "clean_T_s", "event_start_s", "event_end_s")  # the row fields that come from the dataset
RUNS = ("", "clean_")  # the row prefix of each run's fields: the event run, the clean run


def stopped_within(run: OverlapRun, k_us: int) -> np.ndarray:
    """The speech covering o_s ends within k of o_s (Definition 53); an unexercised run never stops."""
    return (run.stop_us >= 0) & (run.stop_us <= k_us)


def _stop_metrics(better: str, wanted: str, within_us: tuple[int, ...]) -> tuple[Metric, ...]:
    return tuple(Metric(f"stop_rate_{label(k)}", SHARE, better, "exercised",
                        f"Exercised samples whose speech covering o_s ends within {fmt(k / US_PER_S)} s of o_s "
                        f"(event run; {wanted})", (lambda c, k=k: stopped_within(c.event, k)),
                        headline=k == HEADLINE_US) for k in within_us)


def table(subset: str | None, settings: "ControlSettings | dict | None" = None) -> tuple[Metric, ...]:
    """The metric table of one subset: the same metrics, better in the direction the subset wants, at the k values
    of `settings` (ControlSettings, or the unified.json they were scored with; None: the defaults)."""
    within_us = settings_of(settings).within_us
    stop = subset in STOP_WANTED
    wanted = "a stop is wanted" if stop else "keeping the floor is wanted"
    keep, yields = ("lower", "higher") if stop else ("higher", "lower")
    out = (
        Metric("exercised_rate", SHARE, "context", "eligible", "Eligible samples with speech at o_s in the event run",
               lambda c: c.event.exercised),
        *_stop_metrics(yields, wanted, within_us),
        Metric("stop_latency_s", LATENCY, keep, "exercised",
               "Median with its interval, and p90, of the time from o_s to the end of the event run's speech covering "
               "o_s; speech that runs to T has no observed stop", lambda c: c.event.stop_us, headline=True),
        Metric("speech_s_per_event_s", POOLED_RATIO, keep, "exercised",
               "Detected speech seconds of the event run inside [o_s, o_e] over event seconds, pooled over exercised "
               "samples", lambda c: (c.event.speech_in_us, c.o_e - c.o_s), denominator="event seconds",
               seconds=True, headline=True),
        Metric("speaking_at_event_end_rate", SHARE, keep, "exercised",
               "Exercised samples whose event run has a speech segment carrying over o_e",
               lambda c: c.event.speaking_at_end),
        *(Metric(f"resumed_rate_{label(k)}", SHARE, "context", "exercised",
                 f"Exercised samples whose event run starts a speech segment within {fmt(k / US_PER_S)} s after o_e",
                 (lambda c, k=k: c.event.resume_us <= k)) for k in within_us),
    )
    if stop:
        out += (Metric("response_latency_s", LATENCY, "lower", "exercised",
                       "Median with its interval, and p90, of the time from o_e to the event run's first word at or "
                       "after o_e; a sample without one never responds", lambda c: c.event.response_us,
                       headline=True),)
    return out


METRICS = table(STOP_WANTED[0])  # the protocol's table: user_interruption's (`table` gives each subset's)


@dataclass
class Components:
    subset: str | None
    event: OverlapRun
    clean: OverlapRun
    o_s: np.ndarray
    o_e: np.ndarray
    T_us: np.ndarray
    clean_T_us: np.ndarray
    agreement: np.ndarray      # speech IoU of the two runs on [0, o_s] (Definition 57); 1 where neither speaks there
    segments: list
    clean_segments: list
    settings: ControlSettings = DEFAULT_CONTROL  # overlap.*: the k values, the control's agreement floor

    @property
    def min_agreement(self) -> float:
        return self.settings.min_agreement

    @property
    def matched(self) -> np.ndarray:
        """The two inputs' lengths differ by at most a codec frame, PAD_MAX_MS (Definition 56): one dialogue on one
        clock, written twice; beyond it the clean input is another recording, and a time is not a time in both."""
        return np.abs(self.T_us - self.clean_T_us) <= PAD_MAX_MS * 1000

    @property
    def both(self) -> np.ndarray:
        """Exercised in both runs and matched: the samples the control could pair."""
        return self.event.exercised & self.clean.exercised & self.matched

    @property
    def pairs(self) -> np.ndarray:
        """The control's pairs: `both`, with the runs agreeing at least `min_agreement` before the event."""
        return self.both & (self.agreement >= self.min_agreement)


def _run(segments: list[np.ndarray], words: list[np.ndarray], o_s: np.ndarray, o_e: np.ndarray,
         T: np.ndarray) -> OverlapRun:
    ga, goff = flatten([g[:, 0] for g in segments])
    gb, _ = flatten([g[:, 1] for g in segments])
    ws, woff = flatten(words)
    return overlap_run(ga, gb, goff, ws, woff, o_s, o_e, T)


def agreement(a: list[np.ndarray], b: list[np.ndarray], o_s: np.ndarray) -> np.ndarray:
    """Definition 57: |A n B| / |A u B| of the two runs' speech on [0, o_s]; 1 where neither run speaks there."""
    (aa, aoff), (ab, _), (ba, boff), (bb, _) = (flatten([g[:, j] for g in x]) for x in (a, b) for j in (0, 1))
    a_us, b_us, union = run_overlap_us(aa, ab, aoff, ba, bb, boff, o_s)
    inter = a_us + b_us - union
    return np.where(union > 0, inter / np.maximum(union, 1), 1.0)


def components(samples, segments: Runs | None = None, settings: ControlSettings | None = None) -> Components:
    """`segments` (fdbu.metrics.base.Runs): the subset, and each run's speech segments per sample (always given: its
    task segments both runs); `settings` the group overlap.* (None: the defaults)."""
    runs = segments
    if runs is None:
        raise ValueError("the overlap task's components need both runs' speech segments")
    settings = DEFAULT_CONTROL if settings is None else settings
    segs, clean_segs = runs.files["output.wav"], runs.files["clean_output.wav"]
    o_s, o_e = (column([s.event_us[j] for s in samples]) for j in (0, 1))
    T, clean_T = column([s.T_us for s in samples]), column([s.clean_T_us for s in samples])
    event = _run(segs, [s.word_start for s in samples], o_s, o_e, T)
    clean = _run(clean_segs, [s.other_words["clean_output.json"][0] for s in samples], o_s, o_e, clean_T)
    return Components(runs.subset, event, clean, o_s, o_e, T, clean_T, agreement(segs, clean_segs, o_s),
                      list(segs), list(clean_segs), settings)


def _time(us: int) -> float | None:
    return None if us == INF or us < 0 else seconds(int(us))


def rows(samples, c: Components) -> list[dict]:
    out = []
    for i, s in enumerate(samples):
        row: dict = {"T_s": seconds(s.T_us), "clean_T_s": seconds(s.clean_T_us),
                     "event_start_s": seconds(s.event_us[0]), "event_end_s": seconds(s.event_us[1]),
                     "matched": bool(c.matched[i]), "agreement": float(c.agreement[i]), "paired": bool(c.pairs[i])}
        for prefix, run, segs, words in ((RUNS[0], c.event, c.segments, s.word_start),
                                         (RUNS[1], c.clean, c.clean_segments, s.other_words["clean_output.json"][0])):
            stop = int(run.stop_us[i])
            row.update({f"{prefix}words": len(words),
                        f"{prefix}segments": [[seconds(int(a)), seconds(int(b))] for a, b in segs[i]],
                        f"{prefix}exercised": bool(run.exercised[i]),
                        f"{prefix}stop_s": _time(stop),
                        f"{prefix}stop_observed": (stop != INF) if stop >= 0 else None,
                        f"{prefix}speech_in_event_s": seconds(int(run.speech_in_us[i])),
                        f"{prefix}speaking_at_event_end": bool(run.speaking_at_end[i]),
                        f"{prefix}resume_s": _time(int(run.resume_us[i])),
                        f"{prefix}response_s": _time(int(run.response_us[i]))})
        out.append(row)
    return out


def _stop_us(r: dict, prefix: str) -> int:
    if not r[f"{prefix}exercised"]:
        return -1
    return to_us(r[f"{prefix}stop_s"]) if r[f"{prefix}stop_observed"] else INF


def _us(value) -> int:
    return INF if value is None else to_us(value)


def _segments(rows: list[dict], key: str) -> list[np.ndarray]:
    return [np.array([[to_us(a), to_us(b)] for a, b in r[key]], np.int64).reshape(-1, 2) for r in rows]


def from_rows(rows: list[dict], subset: str | None = None, unified: dict | None = None) -> Components:
    """The components back from unified-samples.jsonl rows (eligible ones): the inverse of `rows`; `subset` names
    the subset (its table's directions) where there may be no row to read it from, `unified` the settings they were
    scored with (its `overlap`)."""
    def run(prefix: str) -> OverlapRun:
        return OverlapRun(
            exercised=np.array([bool(r[f"{prefix}exercised"]) for r in rows], bool),
            stop_us=column([_stop_us(r, prefix) for r in rows]),
            speech_in_us=column([to_us(r[f"{prefix}speech_in_event_s"]) for r in rows]),
            speaking_at_end=np.array([bool(r[f"{prefix}speaking_at_event_end"]) for r in rows], bool),
            resume_us=column([_us(r[f"{prefix}resume_s"]) for r in rows]),
            response_us=column([_us(r[f"{prefix}response_s"]) for r in rows]))

    subset = subset if subset is not None else rows[0]["subset"] if rows and "subset" in rows[0] else None
    cols = (column([to_us(r[f]) for r in rows]) for f in INPUTS)
    T, clean_T, o_s, o_e = cols
    return Components(subset, run(RUNS[0]), run(RUNS[1]), o_s, o_e, T, clean_T,
                      np.array([float(r["agreement"]) for r in rows], float), _segments(rows, "segments"),
                      _segments(rows, "clean_segments"), ControlSettings.of(unified))


def populations(c: Components) -> dict[str, np.ndarray]:
    """Every metric but exercised_rate is over the samples exercised in the event run."""
    return {"eligible": np.ones(len(c.o_s), bool), "exercised": c.event.exercised.copy()}


NO_MARKER = "not a headline line: p unadjusted, no marker"


def control(c: Components, boot: Bootstrap, alpha: float = ALPHA) -> dict:
    """The matched control (Definitions 56-58): over the pairs, event - clean of "stopped within k" (exact McNemar,
    the exact conditional interval) and of the stop latency's median (the paired bootstrap), by compare's code;
    and how well the runs agree before the event."""
    pairs = c.pairs
    n = int(np.count_nonzero(pairs))
    ones = np.ones(n, np.int64)
    out: dict = {"pairs": n, "min_agreement": c.min_agreement, "alpha": alpha,
                 "exercised_both": int(np.count_nonzero(c.both)),
                 "unmatched": int(np.count_nonzero(~c.matched & c.event.exercised & c.clean.exercised)),
                 "clean_exercised": int(np.count_nonzero(c.clean.exercised)), "stops": {}}
    for k in c.settings.within_us:
        ev, cl = (stopped_within(r, k)[pairs].astype(np.int64) for r in (c.event, c.clean))
        line = paired_line(SHARE, (cl, ones), (ev, ones), n, boot, alpha)
        out["stops"][f"event_attributable_stop_rate_{label(k)}"] = {
            "within_s": seconds(k), "event_rate": float(ev.mean()) if n else None,
            "clean_rate": float(cl.mean()) if n else None, **line}
    ev_stop, cl_stop = (np.ascontiguousarray(r.stop_us[pairs]) for r in (c.event, c.clean))
    out[SHIFT] = paired_line(LATENCY, cl_stop, ev_stop, n, boot, alpha)
    lines = list(control_lines(out).values())
    # the marker's Holm family (Definition 58): the two headline lines whose test can decide, as compare's (Def. 36)
    family = [line for line in (out["stops"][HEADLINE], out[SHIFT]) if line["p"] is not None and line["reason"] is None]
    for line, adjusted in zip(family, holm([line["p"] for line in family])):
        line["p_holm"] = adjusted
        line["marker"] = bool(cast(float, adjusted) < alpha)
    for line in lines:
        if "marker" not in line:
            headline = line is out["stops"][HEADLINE] or line is out[SHIFT]
            line.update({"p_holm": None, "marker": False, "reason": line["reason"] or (None if headline else NO_MARKER)})
    both = c.agreement[c.both]
    out["agreement"] = {"method": "speech IoU on [0, o_s]", "n": len(both),
                        "median": float(np.sort(both)[rank(Fraction(1, 2), len(both)) - 1]) if len(both) else None,
                        "at_least": AGREEMENT_SHOWN, "count_at_least": int(np.count_nonzero(both >= AGREEMENT_SHOWN))}
    return out


def aggregate(c: Components, *, selected: int, ineligible: int, boot: Bootstrap) -> tuple[dict, dict]:
    pops = populations(c)
    metrics = aggregate_table(table(c.subset, c.settings), c, pops, selected=selected, ineligible=ineligible, boot=boot)
    extra = {"exercised": int(np.count_nonzero(pops["exercised"])), "control": control(c, boot)}
    return metrics, extra


# fdbu sweep: the console's columns (sweep.json keeps every metric), each point's counts
SWEEP = Swept(shown={"exercised_rate": "exercised", "stop_rate_500ms": "stop<=.5s", "stop_rate_1s": "stop<=1s",
                     "stop_rate_2s": "stop<=2s", "speaking_at_event_end_rate": "spk@o_e",
                     "stop_latency_s": "stop_med_s", "response_latency_s": "resp_med_s",
                     "speech_s_per_event_s": "speech/ev"},
              counts=("exercised", "pairs"), count_labels={"exercised": "exerc", "pairs": "pairs"},
              counts_of=lambda extra: {"exercised": extra["exercised"], "pairs": extra["control"]["pairs"]})


ROW = {"T_s": "seconds", "clean_T_s": "seconds", "event_start_s": "seconds", "event_end_s": "seconds",
       "matched": "flag", "agreement": "unit", "paired": "flag",
       **{f"{p}{k}": v for p in RUNS for k, v in (
           ("words", "count"), ("segments", "segments"), ("exercised", "flag"), ("stop_s", "seconds?"),
           ("stop_observed", "flag?"), ("speech_in_event_s", "seconds"), ("speaking_at_event_end", "flag"),
           ("resume_s", "seconds?"), ("response_s", "seconds?"))}}


def _run_words(row: dict, prefix: str) -> str:
    if not row[f"{prefix}exercised"]:
        return f"no speech covers o_s = {fmt(row['event_start_s'])} s"
    if not row[f"{prefix}stop_observed"]:
        return "the speech covering o_s runs to the end of the capture"
    within = "within" if row[f"{prefix}stop_s"] <= HEADLINE_S else "not within"
    return f"stopped {fmt(row[f'{prefix}stop_s'])} s after the event began ({within} {fmt(HEADLINE_S, 0)} s)"


def _stopped(row: dict, prefix: str) -> bool:
    return bool(row[f"{prefix}exercised"] and row[f"{prefix}stop_observed"] and row[f"{prefix}stop_s"] <= HEADLINE_S)


def explain(row: dict, words: list) -> tuple[str, str]:
    """(outcome, the rule in words): each run's stop against the headline k (1 s), and what the matched control
    makes of the pair (Definitions 53, 56, 58); the outcome is the drill-down's filter."""
    paired = row["paired"]
    if not row["exercised"]:
        outcome = "not_exercised"
    elif not _stopped(row, ""):
        outcome = "kept_the_floor"
    elif not paired:
        outcome = "stopped_unpaired"
    else:
        outcome = "stopped_in_both_runs" if _stopped(row, "clean_") else "event_attributable_stop"
    text = f"event run: {_run_words(row, '')}; clean run: {_run_words(row, 'clean_')}"
    if paired and row["stop_observed"] and row["clean_stop_observed"]:
        gap = row["clean_stop_s"] - row["stop_s"]
        text += f"; in the clean run the same answer went on {fmt(gap)} s longer" if gap > 0 else \
            f"; in the clean run it stopped {fmt(-gap)} s earlier" if gap < 0 else "; both runs stopped at the same time"
    if outcome == "event_attributable_stop":
        text += ": a stop the event caused"
    elif outcome == "stopped_in_both_runs":
        text += ": the answer ended on its own, not because of the event"
    elif outcome == "stopped_unpaired":
        text += (f"; the two inputs differ in length by more than {PAD_MAX_MS} ms: not in the matched control"
                 if not row["matched"] else "; no speech covers o_s in the clean run: not in the matched control"
                 if not row["clean_exercised"] else "; the runs agree less than overlap.min_agreement before the "
                 "event: not in the matched control")
    if row.get("response_s") is not None:
        text += f"; the first word after the event's end came {fmt(row['response_s'])} s after it"
    return outcome, text + f"; run agreement before the event {fmt(row['agreement'])}"


def marks(row: dict, read) -> dict:
    """The event's window, as the drill-down draws it: both ends, and the window shaded across both runs."""
    return {"o_s": row["event_start_s"], "o_e": row["event_end_s"], "event": [row["event_start_s"], row["event_end_s"]]}


STOP_WORDS = {"title": "Stop curves F(t), event run vs clean run over the matched pairs, 95% bands",
              "ylabel": "share stopped by then", "none": "no v1.5 subset with matched pairs",
              "horizon": "the shortest capture after o_s"}


def stop_curves(rows: list[dict], unified: dict) -> tuple[list[dict], dict]:
    """v1.5's stop curves (docs: Definition 58), the family's figure: per subset, F(t), the share of the control's
    pairs whose speech covering o_s has ended t seconds after o_s, in the event run and in the clean run, each with
    its pointwise bootstrap band (unified.json's draw). The gap between the curves is what the event caused."""
    from ...metrics.paired import cdf_band

    b = unified["bootstrap"]
    boot = Bootstrap(b["resamples"], b["seed"])
    curves = []
    for subset, entry in unified["subsets"].items():
        if entry["task"] != TASK:
            continue
        eligible = [r for r in rows if r["subset"] == subset and r["eligible"]]
        if not eligible:
            continue
        c = from_rows(eligible, subset, unified)
        pairs = c.pairs
        if not pairs.any():
            continue
        horizon = int((c.T_us - c.o_s)[pairs].min())  # beyond the shortest capture after o_s, F is a lower bound
        curves.append({"subset": subset, "over": "pairs", "horizon_s": horizon / 1e6,
                       "systems": [{"name": f"{run} run", **cdf_band(np.ascontiguousarray(r.stop_us[pairs]), boot)}
                                   for run, r in (("event", c.event), ("clean", c.clean))]})
    marks = tuple(k / 1e6 for k in ControlSettings.of(unified).within_us)
    return curves, {**STOP_WORDS, "marks_s": marks}
