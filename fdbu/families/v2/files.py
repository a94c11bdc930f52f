"""The files Full-Duplex-Bench v2's eval scripts write, read and written as they do: the judge's parsed answers
(`scoring/parse.py`'s `<task id>_processed.json`) read and checked against the session, and `combine_transcripts`
(eval/asr_batch.py) reproduced. fdbu.families.v2.runs's export and fdbu.families.v2.reference's reference column use them."""
from __future__ import annotations

import json
import math


from ...errors import FdbuError, short
from ...tree.readers import parse_json, seconds_text
from ...common.timebase import to_us
from ...tree.readers import JUDGE_PAST_T_MS  # a judge window may end this far past T (readers.read_session)

MAX_TIME_S = 120.0           # eval/run_evaluation.sh passes --max_time $MAX_TIME (120) to asr_batch.py
TIME_THRESHOLD_S = 1.2       # asr_batch.py's --time_threshold default
TURN_KEY, TASK_KEY = "Turn-taking event and score", "Task-specific score"  # a processed answer's two keys


def read_judge(data: bytes, where: str, T_us: int, file: str = "judge.json") -> dict:
    """A processed judge output (`scoring/parse.py`'s `*_processed.json`) -> {"events": [(start_us, end_us, TT, IF)],
    "task_score": number or None}, refusing what score.py and score_time.py would read differently (fdbu.official.
    judge_scores) and what cannot be this session's: a score that is not a number from 1 to 5 (a bool, a string, the
    null parse.py writes for an answer it cannot read), a window that is not [start, end] with 0 <= start < end <=
    T + JUDGE_PAST_T_MS. A window ending past T (the judge reads word times: a last word can end after the cut, or
    B.wav be cropped to A's length) is kept as it is, as the scripts read it; the timing inside it is read up to T
    (`past_T` counts them)."""
    doc = parse_json(data, where, file)
    if not isinstance(doc, dict) or not isinstance(doc.get(TURN_KEY), list):
        raise FdbuError(where, file, f"is not a processed judge output: no '{TURN_KEY}' list")
    events = [_event(i, item, where, file, T_us) for i, item in enumerate(doc[TURN_KEY])]
    past = sum(e > T_us for _, e, _, _ in events)
    score = doc.get(TASK_KEY)
    if score is not None and not _finite(score):
        raise FdbuError(where, file, f"'{TASK_KEY}' is {_shown(score)}, not a number")
    return {"events": events, "task_score": score, "past_T": past}


def _event(i: int, item, where: str, file: str, T_us: int) -> tuple[int, int, float, float]:
    """Event i of a processed judge output -> (start_us, end_us, TT, IF), or one line of why it is not one."""
    if not (isinstance(item, list) and len(item) == 3 and isinstance(item[0], list) and len(item[0]) == 2):
        raise FdbuError(where, file, f"event {i} is not [[start, end], turn-taking score, instruction score]")
    (start, end), tt, if_ = item[0], item[1], item[2]
    for what_, v in (("start", start), ("end", end)):
        if not _finite(v):
            raise FdbuError(where, file, f"event {i}'s {what_} is {_shown(v)}, not a number of seconds")
    for what_, v in (("turn-taking score", tt), ("instruction-following score", if_)):
        if not _finite(v) or not 1 <= v <= 5:
            raise FdbuError(where, file, f"event {i}'s {what_} is {_shown(v)}, not a number from 1 to 5")
    s, e = to_us(start), to_us(end)
    if not 0 <= s < e:
        raise FdbuError(where, file, f"event {i}'s window [{start}, {end}] ends before it starts (or at its start)"
                        if e <= s else f"event {i}'s window [{start}, {end}] starts before 0")
    if e > T_us + JUDGE_PAST_T_MS * 1000:
        raise FdbuError(where, file, f"event {i}'s window [{start}, {end}] ends past the session's audio "
                        f"(T = {seconds_text(T_us)} s, by more than {JUDGE_PAST_T_MS} ms): a judge output of "
                        "another session, or of untrimmed audio")
    return s, e, float(tt), float(if_)


def _finite(v) -> bool:
    """A JSON number a float holds: not a bool, not infinite, and not an integer too large for a float (JSON's
    integers have no bound: 1 followed by 400 zeros is one, and math.isfinite raises OverflowError on it)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return False
    try:
        return math.isfinite(v)
    except OverflowError:
        return False


def _shown(v) -> str:
    """A value as the JSON file holds it; a huge integer by its size (a 400-digit number is not a readable line)."""
    if isinstance(v, int) and not isinstance(v, bool) and abs(v) >= 10**18:
        return short(v)
    text = json.dumps(v)
    return text if len(text) <= 60 else f"{text[:57]}..."


def sentences(chunks: list[dict], threshold: float) -> list[dict]:
    """asr_batch.py's segment_into_sentences: a new sentence wherever the next word starts more than `threshold`
    seconds after this one ends; each sentence's text is its words joined by spaces."""
    if not chunks:
        return []
    cuts = [0] + [i + 1 for i in range(len(chunks) - 1)
                  if chunks[i + 1]["timestamp"][0] - chunks[i]["timestamp"][1] > threshold] + [len(chunks)]
    return [{"text": " ".join(c["text"] for c in chunks[a:b]), "start": chunks[a]["timestamp"][0],
             "end": chunks[b - 1]["timestamp"][1]} for a, b in zip(cuts, cuts[1:])]


def combine_transcripts(a_doc: dict, b_doc: dict, max_time: float = MAX_TIME_S,
                        time_threshold: float = TIME_THRESHOLD_S) -> list[dict]:
    """asr_batch.py's combine_transcripts on parsed A.json and B.json: each channel's words ending by `max_time`,
    made sentences, tagged Examiner and Evaluatee, in order of start (a stable sort: A's first on a tie)."""
    tagged = [(s["start"], speaker, s["text"])
              for doc, speaker in ((a_doc, "Examiner"), (b_doc, "Evaluatee"))
              for s in sentences([c for c in doc["chunks"] if c["timestamp"][1] <= max_time], time_threshold)]
    order = sorted(range(len(tagged)), key=lambda i: tagged[i][0])
    return [{"speaker": tagged[i][1], "text": tagged[i][2]} for i in order]


def transcripts_bytes(a_doc: dict, b_doc: dict) -> bytes:
    """transcripts.json as asr_batch.py writes it: `json.dump(combined, f, indent=2)`, no final newline."""
    return json.dumps(combine_transcripts(a_doc, b_doc), indent=2).encode()


def transcripts_of(transcripts: dict[str, bytes]) -> bytes:
    """transcripts.json of a tree's session from its two transcripts (fdbu asr's, in the tree's names): input.json is
    the examiner's A.json, output.json the system's B.json. A word fdbu's ASR gave no end time (zero-length, null;
    Parakeet's never are, and combine_transcripts cannot read one) ends where it starts."""
    docs = []
    for name in ("input.json", "output.json"):
        doc = json.loads(transcripts[name])
        for c in doc["chunks"]:
            start, end = c["timestamp"]
            c["timestamp"] = [start, start if end is None else end]
        docs.append(doc)
    return transcripts_bytes(*docs)
