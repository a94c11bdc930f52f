"""The kernels' results and codes, apart from the kernels: importing them loads no numba, so the kernels compiled
ahead of time (`aot.py`) return these classes to a process that never imports numba."""
from typing import NamedTuple

import numpy as np

INF = np.iinfo(np.int64).max

# Outcome codes, shared by turn-taking and interruption.
RESPONSE = 0
NO_RESPONSE = 1
EARLY_START = 2
NOT_EXERCISED = 3
SPEAKING_AT_END = 4


class Resampled(NamedTuple):
    values: np.ndarray  # the pooled ratio of each resample
    kept: np.ndarray    # False where the resample's denominator is 0 (skipped)


class PauseComponents(NamedTuple):
    """Per sample: five flags (bool) and five counts (int64; the last two in microseconds)."""

    pause_intrusion: np.ndarray     # a word starts at or after the first pause start
    inside_pause_onset: np.ndarray  # a word starts inside a pause [a, b)
    pre_pause_speech: np.ndarray    # a word starts before the first pause start
    carry_in: np.ndarray            # such a word ends after the first pause start
    any_speech: np.ndarray          # any word at all
    intrusion_words: np.ndarray     # words starting at or after the first pause start
    intruded_pauses: np.ndarray     # pauses whose owned time holds a word start
    pauses: np.ndarray
    covered_us: np.ndarray          # pause time covered by the union of word spans
    pause_us: np.ndarray            # annotated pause time


class TurnTakingOutcomes(NamedTuple):
    outcome: np.ndarray     # EARLY_START, RESPONSE or NO_RESPONSE
    latency_us: np.ndarray  # first onset - E for a response, else INF


class InterruptionOutcomes(NamedTuple):
    outcome: np.ndarray              # NOT_EXERCISED, SPEAKING_AT_END, RESPONSE or NO_RESPONSE
    speech_at_onset: np.ndarray      # a segment covers S (start <= S < end)
    speech_at_end: np.ndarray        # a segment carries over R (start < R < end)
    speech_before_onset: np.ndarray  # a segment starts before S
    latency_us: np.ndarray           # first word at or after R, minus R, for a response; else INF
    stop_us: np.ndarray              # S to the end of the segment covering S; INF when it runs to T; -1 if none
    speech_in_us: np.ndarray         # detected speech inside [S, R]
    restarts: np.ndarray             # segments starting inside (S, R)


class OverlapRun(NamedTuple):
    """One run of a v1.5 sample (docs: Definitions 52-53), per sample."""

    exercised: np.ndarray        # a segment covers o_s (start <= o_s < end)
    stop_us: np.ndarray          # o_s to the end of the segment covering o_s; INF when it runs to T; -1 if none
    speech_in_us: np.ndarray     # detected speech inside [o_s, o_e]
    speaking_at_end: np.ndarray  # a segment carries over o_e (start < o_e < end)
    resume_us: np.ndarray        # the first segment start at or after o_e, minus o_e; INF when none
    response_us: np.ndarray      # the first word start at or after o_e, minus o_e; INF when none or speaking at o_e


class CueTiming(NamedTuple):
    """What another benchmark's timing rule reads around a cue time (docs: Numbers in other benchmarks' terms)."""

    speaking_at_cue: np.ndarray  # a span has start < cue < end (words: smooth-handoff's "already speaking")
    onset_after: np.ndarray      # the first span start at or after the cue, minus the cue; INF when none
    last_end: np.ndarray         # the end of the last span starting at or before the cue, minus the cue (<= 0 when it
    #                              ended before the cue: VideoFDB's "immediately preceding" segment); INF when none


class WindowSpeech(NamedTuple):
    """Speech in annotated windows (VideoFDB's stay-silent over v1.0's pauses), per sample."""

    in_window_us: np.ndarray  # the measure of the segments' union inside the windows (disjoint windows: summed)
    overlapping: np.ndarray   # segments overlapping a window (a < window end and b > window start)
    short: np.ndarray         # of those, backchannels: shorter than bc_max_us, fewer than bc_words words starting in them


class Segments(NamedTuple):
    """Segments of many files in samples: file i's are offsets[i]:offsets[i+1] of start and end."""

    start: np.ndarray
    end: np.ndarray
    offsets: np.ndarray
    critical: np.ndarray  # file i has an evaluated comparison within its guard margin
    last_critical: np.ndarray  # the last window of file i with one (-1: none)
