"""Per-sample outcome classification (docs: Metrics), one kernel per task.

Each outcome kernel returns a named tuple of per-sample arrays, so a column is read by its name
(`run_overlap_us`, three measures for one agreement, a plain tuple).
"""
import numpy as np
from numba import njit

from .results import (INF, RESPONSE, NO_RESPONSE, EARLY_START, NOT_EXERCISED, SPEAKING_AT_END,  # noqa: F401
                      PauseComponents, TurnTakingOutcomes, InterruptionOutcomes, OverlapRun, CueTiming, WindowSpeech)


@njit(cache=True)
def _union_measure(lo, hi, clip_lo, clip_hi):
    """Measure of the union of [lo[j], hi[j]] clipped to [clip_lo, clip_hi]."""
    n = lo.shape[0]
    a = np.empty(n, np.int64)
    b = np.empty(n, np.int64)
    k = 0
    for j in range(n):
        x = max(lo[j], clip_lo)
        y = min(hi[j], clip_hi)
        if y > x:
            a[k] = x
            b[k] = y
            k += 1
    if k == 0:
        return 0
    order = np.argsort(a[:k], kind="mergesort")
    total = 0
    cur_a = a[order[0]]
    cur_b = b[order[0]]
    for m in range(1, k):
        x = a[order[m]]
        y = b[order[m]]
        if x > cur_b:
            total += cur_b - cur_a
            cur_a = x
            cur_b = y
        elif y > cur_b:
            cur_b = y
    return total + (cur_b - cur_a)


@njit(cache=True)
def pause_components(word_start, word_end, word_off, pause_a, pause_b, pause_off, T):
    """Pause-handling components per sample (docs: Metrics, Definitions 3, 4 and 6)."""
    n = T.shape[0]
    intrusion = np.zeros(n, np.bool_)
    inside = np.zeros(n, np.bool_)
    pre = np.zeros(n, np.bool_)
    carry = np.zeros(n, np.bool_)
    anyw = np.zeros(n, np.bool_)
    words = np.zeros(n, np.int64)
    intruded = np.zeros(n, np.int64)
    pauses = np.zeros(n, np.int64)
    covered = np.zeros(n, np.int64)
    total = np.zeros(n, np.int64)
    for i in range(n):
        w0, w1 = word_off[i], word_off[i + 1]
        p0, p1 = pause_off[i], pause_off[i + 1]
        first = pause_a[p0]
        for w in range(w0, w1):
            s = word_start[w]
            anyw[i] = True
            if s >= first:
                intrusion[i] = True
                words[i] += 1
            else:
                pre[i] = True
                if word_end[w] > first:
                    carry[i] = True
            for p in range(p0, p1):
                if pause_a[p] <= s < pause_b[p]:
                    inside[i] = True
                    break
        for p in range(p0, p1):
            lo = pause_a[p]
            last = p == p1 - 1
            hi = T[i] if last else pause_a[p + 1]
            for w in range(w0, w1):
                s = word_start[w]
                if lo <= s and (s <= hi if last else s < hi):
                    intruded[i] += 1
                    break
            covered[i] += _union_measure(word_start[w0:w1], word_end[w0:w1], pause_a[p], pause_b[p])
            total[i] += pause_b[p] - pause_a[p]
        pauses[i] = p1 - p0
    return PauseComponents(intrusion, inside, pre, carry, anyw, words, intruded, pauses, covered, total)


@njit(cache=True)
def _first_word(word_start, w0, w1, t):
    """The first word onset at or after t among words w0..w1-1 (INF: none), and whether a word starts before t."""
    first, before = INF, False
    for w in range(w0, w1):
        s = word_start[w]
        if s < t:
            before = True
        elif s < first:
            first = s
    return first, before


@njit(cache=True)
def _answer(first, t):
    """(RESPONSE, its latency from t) where a word came at or after t, else (NO_RESPONSE, INF)."""
    if first != INF:
        return RESPONSE, first - t
    return NO_RESPONSE, INF


@njit(cache=True)
def turn_taking_outcomes(word_start, word_off, E):
    """Outcome and latency per sample: early_start beats everything, then the first onset."""
    n = E.shape[0]
    outcome = np.empty(n, np.int64)
    latency = np.full(n, INF, np.int64)
    for i in range(n):
        first, early = _first_word(word_start, word_off[i], word_off[i + 1], E[i])
        if early:
            outcome[i] = EARLY_START
        else:
            outcome[i], latency[i] = _answer(first, E[i])
    return TurnTakingOutcomes(outcome, latency)


@njit(cache=True)
def interruption_outcomes(seg_start, seg_end, seg_off, word_start, word_off, S, R, T):
    """Interruption outcomes per sample, decided in the spec's order (docs: Metrics)."""
    n = S.shape[0]
    outcome = np.empty(n, np.int64)
    onset = np.zeros(n, np.bool_)
    at_end = np.zeros(n, np.bool_)
    before = np.zeros(n, np.bool_)
    latency = np.full(n, INF, np.int64)
    stop = np.full(n, -1, np.int64)
    speech_in = np.zeros(n, np.int64)
    restarts = np.zeros(n, np.int64)
    for i in range(n):
        g0, g1 = seg_off[i], seg_off[i + 1]
        for g in range(g0, g1):
            a = seg_start[g]
            b = seg_end[g]
            if a <= S[i] < b and stop[i] == -1:
                onset[i] = True
                stop[i] = INF if b >= T[i] else b - S[i]
            if a < R[i] < b:
                at_end[i] = True
            if a < S[i]:
                before[i] = True
            if S[i] < a < R[i]:
                restarts[i] += 1
        speech_in[i] = _union_measure(seg_start[g0:g1], seg_end[g0:g1], S[i], R[i])
        first, _ = _first_word(word_start, word_off[i], word_off[i + 1], R[i])
        if not onset[i]:
            outcome[i] = NOT_EXERCISED
        elif at_end[i]:
            outcome[i] = SPEAKING_AT_END
        else:
            outcome[i], latency[i] = _answer(first, R[i])
    return InterruptionOutcomes(outcome, onset, at_end, before, latency, stop, speech_in, restarts)


@njit(cache=True)
def overlap_run(seg_start, seg_end, seg_off, word_start, word_off, o_s, o_e, T):
    """The per-run quantities of Definitions 52-53 over one run's speech segments and words."""
    n = o_s.shape[0]
    exercised = np.zeros(n, np.bool_)
    stop = np.full(n, -1, np.int64)
    speech_in = np.zeros(n, np.int64)
    at_end = np.zeros(n, np.bool_)
    resume = np.full(n, INF, np.int64)
    response = np.full(n, INF, np.int64)
    for i in range(n):
        g0, g1 = seg_off[i], seg_off[i + 1]
        for g in range(g0, g1):
            a = seg_start[g]
            b = seg_end[g]
            if a <= o_s[i] < b and not exercised[i]:
                exercised[i] = True
                stop[i] = INF if b >= T[i] else b - o_s[i]
            if a < o_e[i] < b:
                at_end[i] = True
            if a >= o_e[i] and a - o_e[i] < resume[i]:
                resume[i] = a - o_e[i]
        speech_in[i] = _union_measure(seg_start[g0:g1], seg_end[g0:g1], o_s[i], o_e[i])
        if at_end[i]:  # still talking at o_e: what follows is not an answer (v1.0's speaking_at_end)
            continue
        first, _ = _first_word(word_start, word_off[i], word_off[i + 1], o_e[i])
        if first != INF:
            response[i] = first - o_e[i]
    return OverlapRun(exercised, stop, speech_in, at_end, resume, response)


@njit(cache=True)
def run_overlap_us(a_start, a_end, a_off, b_start, b_end, b_off, o_s):
    """Per sample, the speech of two runs on [0, o_s]: each run's measure and the measure of their union (the
    intersection is a + b - union), for the runs' agreement before the event (docs: Definition 57)."""
    n = o_s.shape[0]
    a_us = np.zeros(n, np.int64)
    b_us = np.zeros(n, np.int64)
    union = np.zeros(n, np.int64)
    for i in range(n):
        a0, a1, b0, b1 = a_off[i], a_off[i + 1], b_off[i], b_off[i + 1]
        a_us[i] = _union_measure(a_start[a0:a1], a_end[a0:a1], 0, o_s[i])
        b_us[i] = _union_measure(b_start[b0:b1], b_end[b0:b1], 0, o_s[i])
        union[i] = _union_measure(np.concatenate((a_start[a0:a1], b_start[b0:b1])),
                                  np.concatenate((a_end[a0:a1], b_end[b0:b1])), 0, o_s[i])
    return a_us, b_us, union


@njit(cache=True)
def cue_timing(span_start, span_end, span_off, cue):
    """Per sample, a cue's relation to spans (words or speech segments, in any order): speaking across the cue,
    the first onset at or after it, and the end of the last span that started at or before it."""
    n = cue.shape[0]
    at = np.zeros(n, np.bool_)
    after = np.full(n, INF, np.int64)
    last = np.full(n, INF, np.int64)
    for i in range(n):
        best = -1
        for g in range(span_off[i], span_off[i + 1]):
            a = span_start[g]
            b = span_end[g]
            if a < cue[i] < b:
                at[i] = True
            if a >= cue[i] and a - cue[i] < after[i]:
                after[i] = a - cue[i]
            if a <= cue[i] and (best == -1 or a > span_start[best] or (a == span_start[best] and b > span_end[best])):
                best = g
        if best != -1:
            last[i] = span_end[best] - cue[i]
    return CueTiming(at, after, last)


@njit(cache=True)
def window_speech(seg_start, seg_end, seg_off, win_start, win_end, win_off, word_start, word_end, word_off, bc_max_us,
                  bc_words, by_overlap):
    """Per sample: how much speech lies in its windows, how many segments overlap them, and how many of those are
    backchannels (docs: Numbers in other benchmarks' terms, stay-silent). A segment's words are those overlapping
    it (`by_overlap`; a word of no duration: the one starting in it) or those starting in it."""
    n = seg_off.shape[0] - 1
    inside = np.zeros(n, np.int64)
    overlapping = np.zeros(n, np.int64)
    short = np.zeros(n, np.int64)
    for i in range(n):
        g0, g1 = seg_off[i], seg_off[i + 1]
        for w in range(win_off[i], win_off[i + 1]):
            inside[i] += _union_measure(seg_start[g0:g1], seg_end[g0:g1], win_start[w], win_end[w])
        for g in range(g0, g1):
            a = seg_start[g]
            b = seg_end[g]
            hit = False
            for w in range(win_off[i], win_off[i + 1]):
                if a < win_end[w] and b > win_start[w]:
                    hit = True
                    break
            if not hit:
                continue
            overlapping[i] += 1
            words = 0
            for k in range(word_off[i], word_off[i + 1]):
                ws = word_start[k]
                we = word_end[k]
                if (by_overlap and ws < we and ws < b and we > a) or ((not by_overlap or ws == we) and a <= ws < b):
                    words += 1
            if b - a < bc_max_us and words < bc_words:
                short[i] += 1
    return WindowSpeech(inside, overlapping, short)
