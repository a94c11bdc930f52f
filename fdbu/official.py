"""The official Full-Duplex-Bench v1.0 evaluator's rules, re-implemented as small functions.

This is the *reference column*: numbers the official scripts (`v1_v1.5/evaluation/*.py`)
would print for the same transcripts, kept beside the unified metrics so results can be
compared with published ones. Each rule's docstring names the official behaviour it
reproduces, quirks included. Nothing here is used by the unified metrics.

Where an official script itself fails on valid input, the number is `Unavailable` with
the reason, never an invented value.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .errors import FdbuError

TURN_DURATION_THRESHOLD = 1
TURN_NUM_WORDS_THRESHOLD = 3


SCRIPT_DIRS = ("v1_v1.5/evaluation", "evaluation")  # where a Full-Duplex-Bench checkout keeps its scripts


def script_path(checkout: Path, name: str) -> str:
    """The official script `name` inside a checkout, as a path relative to it (newer layout first)."""
    candidates = [f"{d}/{name}" for d in SCRIPT_DIRS]
    for rel in candidates:
        if (Path(checkout) / rel).is_file():
            return rel
    raise FdbuError("official checkout", None, f"{checkout} has no {' or '.join(candidates)}; "
                    "pass evaluate.official_checkout=DIR of a Full-Duplex-Bench clone")


class OfficialFailure(Exception):
    """The official script would raise here (its exception type and message in `reason`)."""


@dataclass
class Unavailable:
    reason: str

    def as_json(self) -> dict:
        return {"unavailable": self.reason}


def take_turn_pause(chunks: list[dict]) -> int:
    """eval_pause_handling.py: TOR = 0 without chunks; otherwise the span from the first word's
    start to the last word's end (its start when that end is null) decides: a span under 1 s
    with at most 3 words is no takeover, anything else is one. pause.json is never read."""
    if not chunks:
        return 0
    last = chunks[-1]["timestamp"]
    end = last[0] if last[-1] is None else last[-1]
    duration = end - chunks[0]["timestamp"][0]
    if duration < TURN_DURATION_THRESHOLD:
        return 0 if len(chunks) <= TURN_NUM_WORDS_THRESHOLD else 1
    return 1


def take_turn_and_latency(chunks: list[dict], reference_s: float) -> tuple[int, float | None]:
    """eval_smooth_turn_taking.py / eval_user_interruption.py: the same TOR rule, but the span
    is `last end - first start` with no null handling (a null last end raises TypeError), and
    a takeover's latency is the first word's start minus the reference time (E, or R)."""
    if not chunks:
        return 0, None
    start = chunks[0]["timestamp"][0]
    end = chunks[-1]["timestamp"][-1]
    if end is None:
        raise OfficialFailure("TypeError: unsupported operand type(s) for -: 'NoneType' and 'float' "
                              "(the last word's end is null)")
    duration = end - start
    if duration < TURN_DURATION_THRESHOLD and len(chunks) <= TURN_NUM_WORDS_THRESHOLD:
        return 0, None
    return 1, start - reference_s


def _mean(values: list[float], what: str, guard_empty: bool):
    if not values:
        if guard_empty:
            return 0.0
        raise OfficialFailure(f"ZeroDivisionError: division by zero (no {what})")
    return sum(values) / len(values)


def pause_handling(transcripts: list[list[dict]]) -> dict:
    """eval_pause_handling.py: 'Average take turn' = mean TOR over every sample (it divides
    without a guard, so an empty subset raises ZeroDivisionError)."""
    try:
        return {"take_turn_rate": _mean([take_turn_pause(c) for c in transcripts], "samples", False),
                "samples": len(transcripts)}
    except OfficialFailure as e:
        return {"take_turn_rate": Unavailable(str(e)).as_json(), "samples": len(transcripts)}


def smooth_turn_taking(samples: list[tuple[list[dict], float]]) -> dict:
    """eval_smooth_turn_taking.py: mean TOR, and mean latency over takeovers only, with each
    negative latency (a reply that starts before E) set to 0. Both means print 0.0 when their
    list is empty. A null last-word end makes the script raise, so both numbers are unavailable."""
    tors, latencies = [], []
    try:
        for chunks, E in samples:
            tor, latency = take_turn_and_latency(chunks, E)
            tors.append(tor)
            if tor == 1:
                latencies.append(max(latency, 0))
    except OfficialFailure as e:
        bad = Unavailable(str(e)).as_json()
        return {"take_turn_rate": bad, "latency_s": bad, "samples": len(samples)}
    return {"take_turn_rate": _mean(tors, "samples", True), "latency_s": _mean(latencies, "takeovers", True),
            "samples": len(samples), "takeovers": len(latencies)}


def user_interruption(samples: list[tuple[list[dict], float]], ratings: list[int | None] | None) -> dict:
    """eval_user_interruption.py: TOR as for turn-taking, from R. The judge is asked only about
    takeovers, and retried until its reply parses, so every takeover is rated; each rating is
    appended twice (the mean is unchanged). A takeover's latency is kept only when it is truthy
    (`if latency:`), so a latency of exactly 0 drops out, and a negative one counts as 0. The
    final means divide without a guard: an empty list raises ZeroDivisionError.

    `ratings[i]` is sample i's rating (None for no takeover); `ratings=None` means no judge ran.
    """
    tors, latencies = [], []
    try:
        for chunks, R in samples:
            tor, latency = take_turn_and_latency(chunks, R)
            tors.append(tor)
            if tor == 1 and latency:
                latencies.append(0 if latency < 0 else latency)
    except OfficialFailure as e:
        bad = Unavailable(str(e)).as_json()
        return {"take_turn_rate": bad, "latency_s": bad, "rating": bad, "samples": len(samples)}
    out = {"samples": len(samples), "takeovers": sum(tors)}
    for key, values, what in (("take_turn_rate", tors, "samples"), ("latency_s", latencies, "latencies")):
        try:
            out[key] = _mean(values, what, False)
        except OfficialFailure as e:
            out[key] = Unavailable(str(e)).as_json()
    if ratings is None:
        out["rating"] = {"pending": "no judge configured"}
    else:
        rated = [r for r, t in zip(ratings, tors) if t == 1]
        if any(r is None for r in rated):
            out["rating"] = Unavailable("the judge gave no parsable rating for some takeovers").as_json()
        else:
            try:
                out["rating"] = _mean([r for r in rated for _ in (0, 1)], "ratings", False)
            except OfficialFailure as e:
                out["rating"] = Unavailable(str(e)).as_json()
    return out


# ---- backchannel (eval_backchannel.py) ----

WINDOW_SIZE = 0.2
EPSILON = 1e-10
TIME_THRESHOLD = 3


def backchannel_sample(segments: list[tuple[float, float]], chunks: list[dict]) -> tuple[int, list[list[float]]]:
    """One speaker of eval_backchannel.py. `segments` are Silero's default-settings segments in
    seconds (0.1 s resolution, 30 ms padding). Segments are visited in order: one over 3 s sets
    TOR = 1 and stops the loop (later segments are lost); every other one is appended to the
    backchannel list whatever its own TOR, and TOR is overwritten by each segment. The words of
    a segment are the chunks overlapping it by the script's three cases. (The script's TOR also
    carries over from the previous speaker when output.json is missing; fdbu scores only
    eligible samples, which always have one.)"""
    tor = 0
    predictions = []
    for start, end in segments:
        duration = end - start
        if duration > TIME_THRESHOLD:
            tor = 1
            break
        words = []
        for c in chunks:
            t_start, t_end = c["timestamp"][0], c["timestamp"][1]
            if t_start is None or (t_end is None and t_start < end):
                continue
            if t_end is None:
                t_end = t_start
            if (t_start >= start and t_end <= end) or (t_start <= end and t_end > end) or \
                    (t_start <= start and t_end > start):
                words.append(c["text"])
        if len(words) > 3:
            tor = 1
        elif duration < 1:
            tor = 0 if len(words) <= 2 else 1
        else:
            tor = 1
        predictions.append([start, end])
    return tor, predictions


def backchannel_jsd(predictions: list[list[float]], duration_s: float, gt: list[float]) -> float:
    """The timing score: counts of backchannel segments per 0.2 s bin (both ends included),
    plus 1e-10, normalised; the ground truth resized by linear interpolation with extrapolation;
    SciPy's Jensen-Shannon *distance* with the natural log (at most about 0.83). A speaker with
    no backchannel scores 1."""
    from scipy.interpolate import interp1d
    from scipy.spatial.distance import jensenshannon

    if not predictions:
        return 1.0
    bins = [0 for _ in range(int(duration_s / WINDOW_SIZE) + 1)]
    for start, end in predictions:
        for i in range(int(start / WINDOW_SIZE), int(end / WINDOW_SIZE) + 1):
            if i < len(bins):
                bins[i] += 1
    hist = np.array(bins) + EPSILON
    hist = hist / np.sum(hist)
    x_gt = np.linspace(0, 1, len(gt))
    x_pred = np.linspace(0, 1, len(hist))
    gt_resized = interp1d(x_gt, gt, kind="linear", fill_value="extrapolate")(x_pred)
    return float(jensenshannon(np.array(list(hist)), np.array(gt_resized)))


def backchannel(speakers: list[tuple[str, list[tuple[float, float]], list[dict], float]], gt_distribution: dict) -> dict:
    """eval_backchannel.py over digit-named speakers: mean and std of JSD, TOR and frequency
    (backchannel segments per second of output). A speaker missing from the ground truth keeps
    its TOR and frequency but gets no JSD (the script `continue`s after appending them)."""
    jsd, tors, freqs = [], [], []
    for spk, segments, chunks, duration in speakers:
        tor, predictions = backchannel_sample(segments, chunks)
        tors.append(tor)
        freqs.append(len(predictions) / duration)
        if predictions and spk not in gt_distribution:
            continue
        jsd.append(backchannel_jsd(predictions, duration, gt_distribution[spk]) if predictions else 1.0)

    def stat(values):
        return {"mean": float(np.mean(values)), "std": float(np.std(values))} if values else \
            Unavailable("no speakers (numpy's mean of an empty list is nan)").as_json()

    return {"jsd": stat(jsd), "take_turn_rate": stat(tors), "frequency_per_s": stat(freqs), "samples": len(jsd)}
