"""Full-Duplex-Bench v1.5's timing script (`get_timing.py`), re-implemented: `latency_intervals.json` of a sample
from the speech segments of its input.wav (the user) and output.wav (the system).

The reference column of the v1.5 subsets. Each function quotes the lines of the pinned script it reproduces
(`get_timing.py:60-71` is lines 60 to 71); the arithmetic is the script's, in its order, on the same floats, so
the file fdbu writes equals the script's byte for byte (tests/test_official_v15.py runs the script itself).
What the script does, read from its code (its comments say otherwise in two places):

- speech segments: silero-vad's `get_speech_timestamps(wav, model, sampling_rate=16000)` at its defaults
  (threshold 0.5, neg_threshold 0.35, 250 ms minimum speech, 100 ms minimum silence, 30 ms padding) on the whole
  file, in samples, divided by 16000 (`get_timing.py:41-49, 74-75`); `SETTINGS` below;
- the user's segments merged across gaps of at most 0.6 s, the system's across at most 0.5 s (`:23-24`; the
  comments say 300 ms and 50 ms);
- `latency_stop_list`: every intersection of a user segment with a system segment (a two-pointer walk), one per
  end time rounded to the millisecond (the shortest kept, the first of equal ones), ordered by end, each end
  rounded to 3 decimals (`:81-103`);
- `latency_resp_list`: for each user segment, the first system onset strictly after its end, one per onset
  (rounded to the millisecond; the latest user end kept), ordered by onset (`:106-118`);
- the file: `json.dump(data, fp, ensure_ascii=False, indent=2)` (`:132-133`).

Nothing here feeds the unified metrics.
"""
from __future__ import annotations

import json

from ..config.settings import SileroSettings
from . import TIMING_SCRIPT

SCRIPT = TIMING_SCRIPT
OUT_FILENAME = "latency_intervals.json"  # get_timing.py:26
SR = 16_000                               # get_timing.py:22
USER_MERGE_GAP = 0.6                      # get_timing.py:23
MODEL_MERGE_GAP = 0.5                     # get_timing.py:24
# get_timing.py:48 calls get_speech_timestamps(w, _M, sampling_rate=SR): every other argument at silero-vad's
# default, 30 ms padding included (the spec's own settings have none)
SETTINGS = SileroSettings(threshold=0.5, min_speech_duration_ms=250, min_silence_duration_ms=100, speech_pad_ms=30)

Segments = list[tuple[float, float]]


def merge(segments: Segments, gap: float) -> Segments:
    """get_timing.py:60-71 (`_merge`): sorted, then each segment starting at most `gap` after the last kept one's
    end extends it."""
    if not segments:
        return []
    ordered = sorted(segments)
    out = [ordered[0]]
    for start, end in ordered[1:]:
        last_start, last_end = out[-1]
        if start - last_end <= gap:
            out[-1] = (last_start, max(last_end, end))
        else:
            out.append((start, end))
    return out


def seconds(stamps: list[tuple[int, int]], gap: float) -> Segments:
    """get_timing.py:74-75 (`seg_sec`): sample indices / 16000, merged across `gap`."""
    return merge([(start / SR, end / SR) for start, end in stamps], gap)


def stop_list(user: Segments, model: Segments) -> list[list[float]]:
    """get_timing.py:81-103 (`overlaps`)."""
    found = []
    i = j = 0
    while i < len(user) and j < len(model):
        start, end = max(user[i][0], model[j][0]), min(user[i][1], model[j][1])
        if end > start:
            found.append((start, end))
        if user[i][1] < model[j][1]:
            i += 1
        else:
            j += 1
    shortest: dict[int, tuple[float, float]] = {}
    for start, end in found:
        key = int(round(end * 1000))
        if key not in shortest or (end - start) < (shortest[key][1] - shortest[key][0]):
            shortest[key] = (start, end)
    return [[round(start, 3), round(end, 3)] for start, end in sorted(shortest.values(), key=lambda x: x[1])]


def response_list(user: Segments, model: Segments) -> list[list[float]]:
    """get_timing.py:106-118 (`response_gaps`)."""
    onsets = [start for start, _ in model]
    latest: dict[int, list[float]] = {}
    for _, user_end in user:
        onset = next((s for s in onsets if s > user_end), None)
        if onset is None:
            continue
        key = int(round(onset * 1000))
        pair = [round(user_end, 3), round(onset, 3)]
        if key not in latest or pair[0] > latest[key][0]:
            latest[key] = pair
    return [pair for _, pair in sorted(latest.items(), key=lambda kv: kv[1][1])]


def intervals(user_stamps: list[tuple[int, int]], model_stamps: list[tuple[int, int]]) -> dict:
    """get_timing.py:124-130 (`process_folder`): the two lists from input.wav's and output.wav's segments (in
    samples, as `get_speech_timestamps` returns them under `SETTINGS`)."""
    user, model = seconds(user_stamps, USER_MERGE_GAP), seconds(model_stamps, MODEL_MERGE_GAP)
    return {"latency_stop_list": stop_list(user, model), "latency_resp_list": response_list(user, model)}


def file_bytes(data: dict) -> bytes:
    """get_timing.py:132-133: the file as the script writes it (UTF-8, which is what it opens the file with)."""
    return json.dumps(data, ensure_ascii=False, indent=2).encode("utf-8")
