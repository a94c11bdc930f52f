"""Readers of a sample's JSON files: the transcript (output.json) and the dataset annotations.

Every time becomes integer microseconds here, once (docs: Definition 1), and every check of
the spec's "Inputs and checks" on these files happens here. A failure names the sample, the
file and the problem in one line (`FdbuError`). The task registry (`fdbu.tasks`) says which
annotation reader each task uses.
"""
from __future__ import annotations

import json
import math

import numpy as np

from ..errors import FdbuError, short  # noqa: F401  (short: re-exported)
from ..common.timebase import to_us

# No window is longer than this (about 31 years); a time beyond it is refused before it is
# converted, so no number in a file can overflow the integer microseconds.
from ..config.settings import MAX_SECONDS  # noqa: E402  (re-exported: readers refuse larger times)


def parse_json(data: bytes, where: str, file: str):
    try:
        return json.loads(data)
    except UnicodeDecodeError as e:
        raise FdbuError(where, file, f"is not UTF-8 text ({e.reason} at byte {e.start})") from None
    except json.JSONDecodeError as e:
        raise FdbuError(where, file, f"is not valid JSON (line {e.lineno} column {e.colno}: {e.msg})") from None
    except RecursionError:
        raise FdbuError(where, file, "is nested too deeply to be a file fdbu reads") from None


def _time(value, where: str, file: str, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise FdbuError(where, file, f"{what} is {short(value)}, not a number of seconds")
    if isinstance(value, float) and not math.isfinite(value):
        raise FdbuError(where, file, f"{what} is {value!r}; times must be finite")
    if not -MAX_SECONDS <= value <= MAX_SECONDS:  # exact for integers of any size
        raise FdbuError(where, file, f"{what} is {short(value)} s, beyond any window ({MAX_SECONDS:.0e} s)")
    return to_us(value)


def seconds_text(us: int) -> str:
    return f"{us / 1e6:.6f}"


def _check_in_window(us: int, T_us: int, where: str, file: str, what: str) -> None:
    if not 0 <= us <= T_us:
        raise FdbuError(where, file, f"{what} {seconds_text(us)} s lies outside the window [0, {seconds_text(T_us)}] s")


def _timestamp(entry, where: str, file: str, what: str) -> list:
    ts = entry.get("timestamp") if isinstance(entry, dict) else None
    if not isinstance(ts, list) or len(ts) != 2:
        raise FdbuError(where, file, f"{what} has no two-element 'timestamp' list")
    return ts


def _word_times(chunks: list, where: str, file: str, T_us: int) -> list[tuple[int, int | None]]:
    """(start, end or None) microseconds of every word; each start finite and inside [0, T]."""
    out = []
    for i, chunk in enumerate(chunks):
        ts = _timestamp(chunk, where, file, f"word {i}")
        s = _time(ts[0], where, file, f"word {i} start")
        _check_in_window(s, T_us, where, file, f"word {i} start")
        out.append((s, None if ts[1] is None else _time(ts[1], where, file, f"word {i} end")))
    return out


def _in_window(ts: list, where: str, file: str, T_us: int, names: tuple[str, str], key: str) -> tuple[int, int]:
    """A [first, second] pair of times (`key`[0], `key`[1]) in microseconds, each finite and inside [0, T]."""
    first, second = (_time(ts[i], where, file, f"{names[i]} ({key}[{i}])") for i in (0, 1))
    _check_in_window(first, T_us, where, file, names[0])
    _check_in_window(second, T_us, where, file, names[1])
    return first, second


def read_words(data: bytes, where: str, T_us: int, file: str = "output.json") -> tuple[np.ndarray, np.ndarray]:
    """output.json (or another run's transcript, `file`) -> (start, end) microseconds; a null end (or one before
    the start) is zero-length."""
    doc = parse_json(data, where, file)
    chunks = doc.get("chunks") if isinstance(doc, dict) else None
    if not isinstance(chunks, list):
        raise FdbuError(where, file, "has no 'chunks' list")
    words = _word_times(chunks, where, file, T_us)
    return (np.array([s for s, _ in words], np.int64),
            np.array([s if e is None else max(e, s) for s, e in words], np.int64))


def check_word_times(chunks: list, where: str, file: str, T_us: int) -> tuple[list[int], list[int | None]]:
    """Word times as the official asr.py writes them: each start finite and inside [0, T], each end null
    or finite and not before its start (an end may pass T: a TDT word ends at its last token's frame plus
    a predicted duration). Returns (starts, ends) in microseconds."""
    words = _word_times(chunks, where, file, T_us)
    for i, (s, e) in enumerate(words):
        if e is not None and e < s:
            raise FdbuError(where, file, f"word {i} ends at {seconds_text(e)} s, before its start {seconds_text(s)} s")
    return [s for s, _ in words], [e for _, e in words]


def read_pauses(data: bytes, where: str, T_us: int) -> dict:
    """pause.json -> {"pauses": (k, 2) microseconds}: at least one, inside [0, T], sorted, not overlapping."""
    file = "pause.json"
    doc = parse_json(data, where, file)
    if not isinstance(doc, list) or not doc:
        raise FdbuError(where, file, "lists no pause; a pause sample needs at least one")
    pauses: list[tuple[int, int]] = []
    for i, entry in enumerate(doc):
        ts = _timestamp(entry, where, file, f"pause {i}")
        a = _time(ts[0], where, file, f"pause {i} start")
        b = _time(ts[1], where, file, f"pause {i} end")
        _check_in_window(a, T_us, where, file, f"pause {i} start")
        _check_in_window(b, T_us, where, file, f"pause {i} end")
        if a > b:
            raise FdbuError(where, file, f"pause {i} starts at {seconds_text(a)} s, after its end {seconds_text(b)} s")
        if pauses:
            pa, pb = pauses[-1]
            if a < pa or a < pb:
                raise FdbuError(where, file, f"pause {i} [{seconds_text(a)}, {seconds_text(b)}] s is not sorted after, "
                                f"or overlaps, pause {i - 1} [{seconds_text(pa)}, {seconds_text(pb)}] s")
        pauses.append((a, b))
    return {"pauses": np.array(pauses, np.int64).reshape(-1, 2)}


def read_turn_end(data: bytes, where: str, T_us: int) -> dict:
    """turn_taking.json -> {"E_us": E}, E = [0].timestamp[0] inside [0, T]."""
    file = "turn_taking.json"
    doc = parse_json(data, where, file)
    if not isinstance(doc, list) or not doc:
        raise FdbuError(where, file, "is empty; it needs the turn end E in [0].timestamp[0]")
    E = _time(_timestamp(doc[0], where, file, "entry 0")[0], where, file, "E (timestamp[0])")
    _check_in_window(E, T_us, where, file, "E")
    return {"E_us": E}


def read_interruption(data: bytes, where: str, T_us: int) -> dict:
    """interrupt.json -> {"S_us": S, "R_us": R}, [S, R] = [0].timestamp inside [0, T], S <= R."""
    file = "interrupt.json"
    doc = parse_json(data, where, file)
    if not isinstance(doc, list) or not doc:
        raise FdbuError(where, file, "is empty; it needs [S, R] in [0].timestamp")
    S, R = _in_window(_timestamp(doc[0], where, file, "entry 0"), where, file, T_us, ("S", "R"), "timestamp")
    if S > R:
        raise FdbuError(where, file, f"S {seconds_text(S)} s is after R {seconds_text(R)} s")
    return {"S_us": S, "R_us": R}


def interruption_cut_s(data: bytes, where: str, T_us: int) -> float:
    """Where the ASR stage cuts an interruption output: R, the raw float the official asr.py reads
    (`interrupt.json[0].timestamp[1]`), after the file passes every check above."""
    read_interruption(data, where, T_us)
    return json.loads(data)[0]["timestamp"][1]


def read_event(data: bytes, where: str, T_us: int) -> dict:
    """metadata.json (Full-Duplex-Bench v1.5) -> {"event_us": (o_s, o_e)}: `timestamps` = [start, end] of the
    overlap event in input.wav, each finite and inside [0, T], start <= end. `context_text` and
    `current_turn_text` are the judge's, not read here."""
    file = "metadata.json"
    doc = parse_json(data, where, file)
    ts = doc.get("timestamps") if isinstance(doc, dict) else None
    if not isinstance(ts, list) or len(ts) != 2:
        raise FdbuError(where, file, "has no two-element 'timestamps' list ([start, end] of the overlap event)")
    start, end = _in_window(ts, where, file, T_us, ("the event's start", "the event's end"), "timestamps")
    if start > end:
        raise FdbuError(where, file, f"the event starts at {seconds_text(start)} s, after its end {seconds_text(end)} s")
    return {"event_us": (start, end)}


JUDGE_PAST_T_MS = 1000  # a v2 judge window may end this far past T: the judge reads word times, and a last word can
#                         end after the audio's cut (or B.wav's crop to A's length); the timing inside reads up to T


def read_session(data: bytes, where: str, T_us: int) -> dict:
    """session.json (a Full-Duplex-Bench v2 session, written by export or synth) -> {"annotations": {"judge": the
    judged events [(start_us, end_us, TT, IF)] or None}}: it names the upstream task and split (`task_id`, `split`,
    strings), what export did, and the judge's events as export checked them (`judge.events`: [start, end, TT, IF],
    0 <= start < end <= T + JUDGE_PAST_T_MS, scores from 1 to 5)."""
    file = "session.json"
    doc = parse_json(data, where, file)
    for key in ("task_id", "split"):
        if not isinstance(doc, dict) or not isinstance(doc.get(key), str) or not doc[key]:
            raise FdbuError(where, file, f"has no '{key}' string (the upstream task's {key.replace('_', ' ')})")
    judge = doc.get("judge")
    if judge is None:
        return {"annotations": {"judge": None}}
    events = judge.get("events") if isinstance(judge, dict) else None
    if not isinstance(events, list):
        raise FdbuError(where, file, "judge has no 'events' list")
    out = []
    for i, ev in enumerate(events):
        if not (isinstance(ev, list) and len(ev) == 4):
            raise FdbuError(where, file, f"judge event {i} is not [start, end, turn-taking score, instruction score]")
        s, e = _in_window(ev[:2], where, file, T_us + JUDGE_PAST_T_MS * 1000,
                          (f"judge event {i}'s start", f"judge event {i}'s end"), "events")
        if s >= e:
            raise FdbuError(where, file, f"judge event {i} ends at or before its start")
        for j in (2, 3):
            if isinstance(ev[j], bool) or not isinstance(ev[j], (int, float)) or not 1 <= ev[j] <= 5:
                raise FdbuError(where, file, f"judge event {i}'s score {short(ev[j])} is not a number from 1 to 5")
        out.append((s, e, float(ev[2]), float(ev[3])))
    return {"annotations": {"judge": out}}
