"""Full-Duplex-Bench v2's scoring scripts (`scoring/score.py`, `scoring/score_time.py`), re-implemented: the judge's
scores per (split, task) as the scripts write them to judge_summary.csv and judge_summary_binned.csv.

The reference column of the v2 subsets. Each function quotes the lines of the pinned script it reproduces; the
arithmetic is the scripts', in their order, on the same floats, so every number equals the scripts' own
(tests/test_v2_official.py runs both scripts unchanged on the same files). What they do, read from their code:

- every `*_processed.json` under each split folder is one file of key (split, the file name less
  `_processed.json`) (`score.py:29-37`; `score_time.py:59-67` the same in its first pass, but its second pass
  globs only the split folder itself, `:150` "Changed rglob to glob": a file in a sub-folder gets its events counted
  and no bins); fdbu lays each tree sample's judge.json out flat, where both agree;
- score.py counts an event `[[start, end], TT, IF]` when TT and IF are int or float, bool included; the window is
  never read (`score.py:54-63`). score_time.py's first pass counts it when `float()` takes start, end, TT and IF
  (a string "5" too) and end > start (`score_time.py:85-106`); its bins also need TT and IF to be numbers
  (`:170-188`);
- score_time.py writes judge_summary.csv as well (`:198-233`), from its own first pass: run after score.py it
  replaces score.py's file, with other counts where the two read an event differently. fdbu's reader refuses every
  event they could read differently (a score that is not a number or is a bool, end <= start), so on a tree's
  judge files the two files are equal, and both are kept;
- averages: TT and IF summed over events then divided by their count, the task score summed over the files that have
  a numeric one and divided by their count, each `round(x, 3)`, None when the count is 0 (`score.py:93-110`);
- bins: (0, 15.0), ..., (105, 120.0) (`score_time.py:26-28`); each event adds score x overlap and the overlap
  (`overlap_duration`: max(0, min(ends) - max(starts)), `:8-14`, `:190-196`); each bin's average is their quotient
  rounded to 3, None where no event overlaps it (`:263-270`); an event past 120 s adds to no bin.

Nothing here feeds the unified metrics.
"""
from __future__ import annotations

from typing import Any

from ...official import JUDGE_SCORE_SCRIPT as SCORE_SCRIPT, JUDGE_TIME_SCRIPT as TIME_SCRIPT  # noqa: E402,F401
TURN_KEY = "Turn-taking event and score"    # score.py:12
TASK_KEY = "Task-specific score"            # score.py:13
SUFFIX = "_processed.json"                  # score.py:11
BINS = [(float(i), i + 15.0) for i in range(0, 120, 15)]  # score_time.py:26-28 (the ints of range, + 15.0)
HEADER = ["setup", "subtask", "n_files", "n_events", "avg_turn_taking", "avg_instruction_following",
          "avg_task_specific"]                                   # score.py:83-91, score_time.py:199-207
BIN_HEADER = ["setup", "subtask", "n_files", "n_events"] + [
    h for b0, b1 in BINS for h in (f"TT[{int(b0)}-{int(b1)}]", f"IF[{int(b0)}-{int(b1)}]")]  # score_time.py:239-247


def _number(x) -> bool:
    return isinstance(x, (int, float))  # score.py:58-59: bool is an int here, as in the script


def _rounded(total: float, n: int):
    return None if n == 0 else round(total / n, 3)  # score.py:96-108


class _Totals:
    """What both scripts sum over one key's files, in their order: each file's TT and IF over its events
    (score.py:65-67, score_time.py:113-115) and its task-specific score where it is a number (score.py:70-73,
    score_time.py:117-120); and the judge_summary.csv row they make of it."""

    def __init__(self) -> None:
        self.tt = self.if_ = self.task_sum = 0.0
        self.events = self.files = 0

    def add(self, data: Any, tt_local: float, if_local: float, count: int) -> None:
        self.tt += tt_local
        self.if_ += if_local
        self.events += count
        score = data.get(TASK_KEY, None)
        if _number(score):
            self.task_sum += float(score)
            self.files += 1

    def row(self, split: str, task: str) -> list:
        return [split, task, self.files, self.events, _rounded(self.tt, self.events),
                _rounded(self.if_, self.events), _rounded(self.task_sum, self.files)]


def summary_row(split: str, task: str, docs: list[Any]) -> list:
    """score.py's row of one key from its files' parsed JSON (`docs`, in the order the script reads them)."""
    totals = _Totals()
    for data in docs:
        tt_local = if_local = 0.0
        count = 0
        for item in data.get(TURN_KEY, []):                       # score.py:48-63
            if isinstance(item, list) and len(item) >= 3 and _number(item[1]) and _number(item[2]):
                tt_local += float(item[1])
                if_local += float(item[2])
                count += 1
        totals.add(data, tt_local, if_local, count)
    return totals.row(split, task)


def overlap_duration(a0: float, a1: float, b0: float, b1: float) -> float:
    return max(0.0, min(a1, b1) - max(a0, b0))                    # score_time.py:8-14


def time_rows(split: str, task: str, docs: list[Any]) -> tuple[list, list]:
    """score_time.py's two rows of one key: its judge_summary.csv row (its first pass) and its binned row."""
    totals = _Totals()
    sums = [[0.0, 0.0, 0.0] for _ in BINS]  # TT x overlap, IF x overlap, overlap: score_time.py:138-143
    for data in docs:
        tt_local = if_local = 0.0
        count = 0
        for item in data.get(TURN_KEY, []):                       # score_time.py:83-106 (first pass)
            if isinstance(item, list) and len(item) >= 3 and isinstance(item[0], list) and len(item[0]) >= 2:
                try:
                    start, end, tt_score, if_score = (float(item[0][0]), float(item[0][1]), float(item[1]),
                                                      float(item[2]))
                except Exception:
                    continue
                if end <= start:
                    continue
                count += 1
                tt_local += tt_score
                if_local += if_score
                if not (_number(item[1]) and _number(item[2])):  # score_time.py:170-178 (second pass)
                    continue
                for i, (b0, b1) in enumerate(BINS):               # score_time.py:190-196
                    ov = overlap_duration(start, end, b0, b1)
                    if ov > 0.0:
                        sums[i][0] += tt_score * ov
                        sums[i][1] += if_score * ov
                        sums[i][2] += ov
        totals.add(data, tt_local, if_local, count)
    overall = totals.row(split, task)
    binned: list = [split, task, totals.files, totals.events]
    for tt_sum, if_sum, dur in sums:                              # score_time.py:263-270
        binned.extend([round(tt_sum / dur, 3), round(if_sum / dur, 3)] if dur > 0 else [None, None])
    return overall, binned


def judge_scores(judged: dict[tuple[str, str], list[Any]]) -> dict:
    """(split, task) -> its files' parsed JSON => each script's files' rows, sorted by key as they write them
    (`score.py:93`, `score_time.py:209, 250`)."""
    keys = sorted(judged)
    timed = [time_rows(s, t, judged[(s, t)]) for s, t in keys]
    return {"score.py": {"judge_summary.csv": {"header": HEADER,
                                               "rows": [summary_row(s, t, judged[(s, t)]) for s, t in keys]}},
            "score_time.py": {"judge_summary.csv": {"header": HEADER, "rows": [o for o, _ in timed]},
                              "judge_summary_binned.csv": {"header": BIN_HEADER, "rows": [b for _, b in timed]}}}


def csv_cell(x) -> str:
    """A cell as csv.writer writes it: None empty, a float by repr, an int or a string as str."""
    return "" if x is None else str(x)
