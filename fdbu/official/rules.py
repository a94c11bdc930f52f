"""The official Full-Duplex-Bench v1.0 evaluator's rules, re-implemented as small pure functions.

This is the *reference column*: the numbers the official scripts (`v1_v1.5/evaluation/*.py`,
pinned by SHA-256 in `conf/evaluate.yaml`) print for the same files, kept beside the unified
metrics so results can be compared with published ones. Every function's docstring quotes
the lines of the pinned script it reproduces (`eval_pause_handling.py:46-53` is lines 46 to
53 of that file); nothing else is added, quirks included. Nothing here feeds the unified
metrics.

The functions take what the scripts read (the folder names, the parsed output.json and
annotation) and do the same arithmetic in the same order, so where a script raises on its
input the same Python exception is raised here; it is recorded as
`{"unavailable": "<ExceptionName>: <message>"}`, never replaced by an invented number.
Samples come in manifest order, interruption samples sorted as that script sorts them; the
other scripts' `os.listdir` order is the file system's and changes only the float
summation order (docs, "The reference column").
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np

from ..common.atomic import sha256_bytes
from ..errors import FdbuError

from . import (BACKCHANNEL_SCRIPT, BEHAVIOR_PROMPT, BEHAVIOR_SCRIPT, GT_DISTRIBUTION,  # noqa: F401  (re-exported)
               INTERRUPTION_SCRIPT, JUDGE_SCORE_SCRIPT, JUDGE_TIME_SCRIPT, JUDGE_V2_PARSE, JUDGE_V2_PROMPTS,
               JUDGE_V2_SCRIPT, JUDGE_V2_TASKS, OFFICIAL_FILES, PAUSE_SCRIPT, TIMING_SCRIPT, TURN_SCRIPT)

# eval_pause_handling.py:7-8, eval_smooth_turn_taking.py:7-8, eval_user_interruption.py:7-8
TURN_DURATION_THRESHOLD = 1
TURN_NUM_WORDS_THRESHOLD = 3
# eval_backchannel.py:12-14
WINDOW_SIZE = 0.2
EPSILON = 1e-10
TIME_THRESHOLD = 3

# What the scripts' arithmetic and lookups raise on bad input. Anything else raised here is
# fdbu's own fault and is left to propagate.
SCRIPT_ERRORS = (ArithmeticError, LookupError, TypeError, ValueError, NameError)

# where a checkout keeps the scripts: a Full-Duplex-Bench clone (newer layout first), or a
# folder holding them directly (like shared/official)
SCRIPT_DIRS = ("v1_v1.5/evaluation", "evaluation", "v2", ".")  # v2: its scripts under v2/ (scoring/, eval/)


def script_path(checkout: Path, name: str) -> Path:
    """The official file `name` inside a checkout."""
    for d in SCRIPT_DIRS:
        path = Path(checkout) / d / name
        if path.is_file():
            return path
    raise FdbuError("official checkout", name, f"is not in {checkout} (looked in "
                    f"{', '.join(d for d in SCRIPT_DIRS)}); pass evaluate.official_checkout=DIR of a "
                    "Full-Duplex-Bench clone or of a folder holding the official scripts")


# The upstream files fdbu reproduces (Full-Duplex-Bench `v1_v1.5/evaluation/`, commit d7336bd of
# 2026-04-15), by SHA-256: the default of evaluate.official_sha256.
PINS = {
    BACKCHANNEL_SCRIPT: "1bf58f57e3f6041a2516a1c2ac0d715f1199aef2d1aa5b886039df294626167b",
    PAUSE_SCRIPT: "1e86519b4f4543f2f667ce60b9bea2f6148a3bc4255bb20c1ea111b45e0adbb5",
    TURN_SCRIPT: "cb7d6b987cd415e1b71b6eea06e67ea8fdc77a1167107e5c0552105bac05b2df",
    INTERRUPTION_SCRIPT: "e701c14579c1477577b262265cfff75b28ac2e057beee5ba82572afa2a35963a",
    GT_DISTRIBUTION: "92bcd0ff27246aaa9a0136737b476afd456cd393f003944c3394c140e590f2a8",
    # Full-Duplex-Bench v1.5, the same evaluation folder (shared/official-v1.5/README.md)
    TIMING_SCRIPT: "4f551da4194ab4d9584db964f4b27223914eecf98cbc312388ecf45eaf6f8a17",
    BEHAVIOR_SCRIPT: "0ff8179a437503581d65787da3a43924b45310c31a98d1bcbadce5c8605ca6f2",
    BEHAVIOR_PROMPT: "19e5477dac9a9a1e11de126783a0b820b3ecb70db5e91181824fa944e1947977",
    # Full-Duplex-Bench v2, its own folder (shared/official-v2/README.md): the judge's scoring scripts
    JUDGE_SCORE_SCRIPT: "c9d77cb1a3c94387de8e2477618e682b4efdce417e9b4bc7b26af10d255e14e6",
    JUDGE_TIME_SCRIPT: "370f08b085b7d8cb365183f57d385625b1859af0a231f50dfd520fdb9ab86a4a",
    JUDGE_V2_SCRIPT: "90fc9a97c75ba0e71d04a5fd19099d02fb01ceb3e601472e4f94539aaa6f662c",
    JUDGE_V2_PROMPTS: "3c1540512de3fce1ed804d842a2f262d815ca37acfe626f3a1712e7765ee34c9",
    JUDGE_V2_TASKS: "a606a9740bb48245f9b63e36c8a0c09b4fb49a98f4b00280992a1caa1828f62e",
    JUDGE_V2_PARSE: "40e0c7f2007dc5c54fd951ba150814eba36d9111b736802f3d3ca3801a88a66c",
}


def shipped_pins() -> dict[str, str]:
    """The default of evaluate.official_sha256."""
    return dict(PINS)


def file_report(path: Path, name: str, pins: dict[str, str]) -> dict:
    """A used official file's SHA-256 and whether it is the pinned one."""
    from ..common.atomic import regular

    try:
        regular(Path(path), "official checkout", name)  # a FIFO would block the read forever
        digest = sha256_bytes(Path(path).read_bytes())
    except OSError as e:
        raise FdbuError("official checkout", name, f"cannot be read: {e.strerror or e} ({path})") from None
    return {"sha256": digest, "pinned_sha256": pins.get(name), "pinned": pins.get(name) == digest}


def checkout_files(checkout: Path, names, pins: dict[str, str] | None = None, allow_unpinned: bool = False,
                   extra: dict[str, Path] | None = None) -> tuple[dict[str, Path], dict[str, dict]]:
    """The official files `names` of a checkout (and `extra` files found elsewhere: name -> path) and each one's
    report (`file_report`); with `pins`, a file that is not the pinned one is refused unless `allow_unpinned` (what
    `fdbu evaluate` and a judge's loader check before running or reading anything)."""
    paths = {name: script_path(Path(checkout), name) for name in names} | (extra or {})
    reports = {name: file_report(path, name, pins or {}) for name, path in paths.items()}
    if pins is not None:
        refuse_unpinned(reports, allow_unpinned)
    return paths, reports


def refuse_unpinned(files: dict[str, dict], allow_unpinned: bool) -> None:
    """One line naming every used file that is not the pinned one, unless the user allows it."""
    bad = sorted(name for name, f in files.items() if not f["pinned"])
    if bad and not allow_unpinned:
        raise FdbuError("official checkout", ", ".join(bad), "SHA-256 differs from fdbu's pins "
                        "(evaluate.official_sha256); check out the pinned Full-Duplex-Bench revision, or pass "
                        "evaluate.allow_unpinned=true to compare anyway")


def unavailable(e: BaseException) -> dict:
    """What the script raised, by name and message, in place of its number."""
    return {"unavailable": f"{type(e).__name__}: {e}"}


def _divide(values: list) -> float:
    """`sum(xs) / len(xs)`, the scripts' mean (ZeroDivisionError on an empty list)."""
    return sum(values) / len(values)


# ---- eval_pause_handling.py ----

def take_turn_pause(chunks: list[dict]) -> int:
    """eval_pause_handling.py:42-60. No chunk: TOR = 0 (42-44). Otherwise the duration runs
    from the first chunk's start to the last chunk's `timestamp[-1]`, or to its start when
    that is `== None` (46-53); a duration under 1 s with at most 3 chunks is no takeover
    (54-56), anything else is one (57-60). pause.json is never read. (`is None` here: for a
    JSON value the same test as `== None`.)"""
    if len(chunks) == 0:
        return 0
    if chunks[-1]["timestamp"][-1] is None:
        duration = chunks[-1]["timestamp"][0] - chunks[0]["timestamp"][0]
    else:
        duration = chunks[-1]["timestamp"][-1] - chunks[0]["timestamp"][0]
    if duration < TURN_DURATION_THRESHOLD:
        return 0 if len(chunks) <= TURN_NUM_WORDS_THRESHOLD else 1
    return 1


def listed(name: str) -> bool:
    """eval_pause_handling.py:18-22 (= eval_smooth_turn_taking.py:23-27): of the folders
    `os.listdir` gives, those whose name ends in ".DS_Store" or ".md" are skipped."""
    return not (name.endswith(".DS_Store") or name.endswith(".md"))


def pause_handling(samples: list[tuple[str, dict]]) -> dict:
    """eval_pause_handling.py:15-68 over (folder name, output.json): the folders `listed` (18-22),
    `output_data["chunks"]` (40), one TOR each (62), 'Average take turn' = sum / len (64),
    which raises ZeroDivisionError when there is no sample."""
    outputs = [doc for name, doc in samples if listed(name)]
    try:
        rate: float | dict = _divide([take_turn_pause(doc["chunks"]) for doc in outputs])
    except SCRIPT_ERRORS as e:
        rate = unavailable(e)
    return {"take_turn_rate": rate, "samples": len(outputs)}


# ---- eval_smooth_turn_taking.py (and the same lines of eval_user_interruption.py) ----

def take_turn_and_latency(chunks: list[dict], input_end_time) -> tuple[int, float | None]:
    """eval_smooth_turn_taking.py:59-73 (= eval_user_interruption.py:96-112). No chunk: TOR = 0.
    Otherwise duration = last chunk's `timestamp[-1]` - first chunk's start, with no null
    handling (a null end raises TypeError); under 1 s with at most 3 chunks TOR = 0,
    otherwise TOR = 1 with latency = first chunk's start - the reference time."""
    if len(chunks) == 0:
        return 0, None
    output_start_time = chunks[0]["timestamp"][0]
    duration = chunks[-1]["timestamp"][-1] - chunks[0]["timestamp"][0]
    if duration < TURN_DURATION_THRESHOLD and len(chunks) <= TURN_NUM_WORDS_THRESHOLD:
        return 0, None
    return 1, output_start_time - input_end_time


def kept_latency(latency) -> list:
    """eval_smooth_turn_taking.py:77-80 (= eval_user_interruption.py:150-153): a negative
    latency counts as 0, any other (0 included) as itself: `if latency < 0: append(0)
    elif latency >= 0: append(latency)`."""
    if latency < 0:
        return [0]
    elif latency >= 0:
        return [latency]
    return []


def smooth_turn_taking(samples: list[tuple[str, list, dict]]) -> dict:
    """eval_smooth_turn_taking.py:19-98 over (folder name, turn_taking.json, output.json): the
    folders `listed` (23-27); E is `input_turn[0]["timestamp"][0]` (48), the chunks
    `output_data["chunks"]` (57); each TOR is appended (75) and a takeover's latency kept by
    lines 76-80. Both averages divide without a guard (91-92) before anything is printed
    (94-98), so no sample, or no takeover, raises ZeroDivisionError and neither number is
    printed."""
    pairs = [(turn, output) for name, turn, output in samples if listed(name)]
    tors, latencies, takeovers = [], [], None
    rate: float | dict
    mean_latency: float | dict
    try:
        for turn, output in pairs:
            input_end_time = turn[0]["timestamp"][0]
            tor, latency = take_turn_and_latency(output["chunks"], input_end_time)
            tors.append(tor)
            if tor == 1:
                latencies += kept_latency(latency)
        takeovers = sum(tors)
        rate, mean_latency = _divide(tors), _divide(latencies)
    except SCRIPT_ERRORS as e:
        rate = mean_latency = unavailable(e)
    return {"take_turn_rate": rate, "latency_s": mean_latency, "samples": len(pairs), "takeovers": takeovers}


# ---- eval_user_interruption.py ----

@dataclass
class Verdict:
    """The judge's answer about one takeover: its rating (None: fdbu's attempts ran out with no
    parsable reply) and how many replies came back without a rating before it."""
    rating: int | None
    unparsable: int = 0
    attempts: int = 1


Judge = Callable[[str, object, object, object], Verdict]  # (sample id, context, interrupt, response)


def user_interruption(samples: list[tuple[str, dict, list]], judge: Judge | None = None) -> dict:
    """eval_user_interruption.py:56-161 over (sample id, output.json, interrupt.json) in the
    script's order, `sorted` folder paths (65). Per sample: the interrupt, context and R
    (`timestamp[1]`) of `metadata[0]` and `out_after_interrupt["text"]` are read first
    (86-89, KeyError when missing), then TOR and latency as for turn-taking (91-112). Only a
    takeover goes to the judge (115-131), inside `while True` (67): a reply without a rating
    `continue`s (139-140), re-running the loop body, so TOR = 1 is appended once more (114)
    for every such reply; a parsed rating is appended twice (142, 149) and the latency once
    (150-153). 'Average rating', 'take turn' and 'latency' (159-161) divide without a guard;
    the rating comes first, so with no takeover it raises ZeroDivisionError and none of the
    three is printed.

    `judge=None`: no judge ran; the rating is pending and TOR assumes each takeover's first
    reply parses. A takeover whose verdict has no rating leaves the script looping forever:
    it prints no number at all, so all three are `waiting` and no later sample is judged.
    """
    tors, ratings, latencies, unparsable, takeovers = [], [], [], 0, None
    try:
        for sample_id, output, metadata in samples:
            in_interrupt_text = metadata[0]["interrupt"]
            in_before_interrupt_text = metadata[0]["context"]
            input_end_time = metadata[0]["timestamp"][1]
            out_after_interrupt_text = output["text"]
            tor, latency = take_turn_and_latency(output["chunks"], input_end_time)
            if tor != 1:
                tors.append(tor)
                continue
            verdict = Verdict(0) if judge is None else judge(sample_id, in_before_interrupt_text, in_interrupt_text,
                                                            out_after_interrupt_text)
            if verdict.rating is None:
                waiting = {"waiting": f"the official script would still be asking the judge about {sample_id} "
                                      f"(it asks until a reply parses, lines 67 and 139-140; fdbu got no rating in "
                                      f"{verdict.attempts} attempts), so it prints no number"}
                return {"rating": waiting, "take_turn_rate": waiting, "latency_s": waiting,
                        "samples": len(samples), "takeovers": None}
            unparsable += verdict.unparsable
            tors += [1] * (verdict.unparsable + 1)
            ratings += [verdict.rating, verdict.rating]
            latencies += kept_latency(latency)
        takeovers = len(ratings) // 2
        # with judge=None the ratings are placeholders: only their count matters here
        out: dict[str, Any] = {"rating": _divide(ratings), "take_turn_rate": _divide(tors),
                               "latency_s": _divide(latencies)}
        if judge is None:
            out["rating"] = {"pending": "no judge configured"}
    except SCRIPT_ERRORS as e:
        out = dict.fromkeys(("rating", "take_turn_rate", "latency_s"), unavailable(e))
    return {**out, "samples": len(samples), "takeovers": takeovers, "judge_replies_without_rating": unparsable}


# ---- eval_backchannel.py ----

@dataclass
class Speaker:
    """One folder of the backchannel subset as eval_backchannel.py reads it: its name, its
    output.json (None: missing), and `listen()` -> (Silero segments in seconds as
    `get_speech_timestamps(wav, model, return_seconds=True)` gives them, frames, sample rate)."""
    name: str
    output: dict | None
    listen: Callable[[], tuple[list[tuple[float, float]], int, int]]


class _Unset:
    """eval_backchannel.py's TOR before any speaker set it."""


UNSET = _Unset()


def backchannel_speaker(segments: list[tuple[float, float]], output: dict | None, tor):
    """eval_backchannel.py:43-109 for one speaker -> (TOR, backchannel predictions).

    Without output.json nothing is predicted and TOR is not assigned (47-49): it keeps the
    previous speaker's value. Otherwise TOR = 0 (52) and the segments are visited in order:
    one over 3 s sets TOR = 1 and stops the loop (59-61); every other one is appended to the
    predictions whatever its own TOR (109), and TOR is overwritten by each segment (97-107).
    A segment's words are the chunks of `data["chunks"]` (68) that pass lines 70-91: a null
    start, or a null end with a start before the segment end, is skipped; another null end
    becomes the start; then the first of three overlap cases that holds appends the text."""
    predictions: list[list[float]] = []
    if output is None:
        return tor, predictions
    tor = 0
    for start_time, end_time in segments:
        duration = end_time - start_time
        if duration > TIME_THRESHOLD:
            tor = 1
            break
        curr_text = []
        for segment_cw in output["chunks"]:
            t_start = segment_cw["timestamp"][0]
            t_end = segment_cw["timestamp"][1]
            if t_start is None or (t_end is None and t_start < end_time):
                continue
            if t_end is None:
                t_end = t_start
            if t_start >= start_time and t_end <= end_time:
                curr_text.append(segment_cw["text"])
            elif t_start <= end_time and t_end > end_time:
                curr_text.append(segment_cw["text"])
            elif t_start <= start_time and t_end > start_time:
                curr_text.append(segment_cw["text"])
        if len(curr_text) > 3:
            tor = 1
        elif duration < 1:
            tor = 0 if len(curr_text) <= 2 else 1
        else:
            tor = 1
        predictions.append([start_time, end_time])
    return tor, predictions


def backchannel_jsd(predictions: list[list[float]], max_end_time: float, gt_distribution: dict, spk: str):
    """eval_backchannel.py:117-153. No prediction: the score is 1 (117-118) and the ground
    truth is not looked up. Otherwise count the predictions per 0.2 s bin, both ends
    included, over `int(max_end_time / 0.2) + 1` bins (120-128); add 1e-10 and normalise
    (131-134); look up `gt_distribution[spk]` (137, KeyError for a speaker it lacks); resize
    it to the bins by `interp1d(kind="linear", fill_value="extrapolate")` (140-146); SciPy's
    Jensen-Shannon *distance*, natural log (153)."""
    from scipy.interpolate import interp1d
    from scipy.spatial.distance import jensenshannon

    if len(predictions) == 0:
        return 1
    time_intervals = [0 for _ in range(int(max_end_time / WINDOW_SIZE) + 1)]
    for interval in predictions:
        for i in range(int(interval[0] / WINDOW_SIZE), int(interval[1] / WINDOW_SIZE) + 1):
            if i < len(time_intervals):
                time_intervals[i] += 1
    hist: np.ndarray | list = np.array(time_intervals) + EPSILON
    hist = list(hist / np.sum(hist))
    gt_dist = gt_distribution[spk]
    x_gt = np.linspace(0, 1, len(gt_dist))
    x_pred = np.linspace(0, 1, len(hist))
    gt_resized = interp1d(x_gt, gt_dist, kind="linear", fill_value="extrapolate")(x_pred)
    return jensenshannon(np.array(hist), np.array(gt_resized))


def _mean_std(values: list) -> dict:
    """eval_backchannel.py:159-161: `np.mean`, `np.std`; of an empty list both are nan (NumPy
    warns, the script prints 'nan'), written "nan" since JSON has no NaN."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean, std = float(np.mean(values)), float(np.std(values))
    return {"mean": "nan" if math.isnan(mean) else mean, "std": "nan" if math.isnan(std) else std}


def backchannel(speakers: Iterable[Speaker], gt_distribution: dict) -> dict:
    """eval_backchannel.py:17-170 over the speaker folders in the order given (the script's
    `os.listdir`, 27). A name that is not `str.isdigit()` is skipped before anything is read
    (28-29). Per speaker: TOR and predictions (43-109); TOR appended (113); frequency =
    predictions / (frames / sample rate) (114-115); the JSD (117-156). The first speaker
    without output.json has no TOR yet: UnboundLocalError. Mean and std of each list
    (159-161), printed with 4 decimals (164-166); 'Number of samples' = speakers scored (170)."""
    jsd_list, tor_list, freq_list = [], [], []
    tor = UNSET
    try:
        for spk in speakers:
            if not spk.name.isdigit():
                continue
            segments, frames, sr = spk.listen()
            tor, predictions = backchannel_speaker(segments, spk.output, tor)
            if tor is UNSET:
                raise UnboundLocalError("cannot access local variable 'TOR' where it is not associated with a value")
            tor_list.append(tor)
            max_end_time = frames / sr
            freq_list.append(len(predictions) / max_end_time)
            jsd_list.append(backchannel_jsd(predictions, max_end_time, gt_distribution, spk.name))
    except SCRIPT_ERRORS as e:
        bad = unavailable(e)
        return {"jsd": bad, "take_turn_rate": bad, "frequency_per_s": bad, "samples": bad}
    return {"jsd": _mean_std(jsd_list), "take_turn_rate": _mean_std(tor_list),
            "frequency_per_s": _mean_std(freq_list), "samples": len(jsd_list)}
