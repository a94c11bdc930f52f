"""Per-sample outcome classification (spec: Metrics), one kernel per task."""
import numpy as np
from numba import njit

INF = np.iinfo(np.int64).max

# Outcome codes, shared by turn-taking and interruption.
RESPONSE = 0
NO_RESPONSE = 1
EARLY_START = 2
NOT_EXERCISED = 3
SPEAKING_AT_END = 4


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
    """Pause-handling components per sample.

    Returns (flags, counts): flags[i] = (pause_intrusion, inside_pause_onset,
    pre_pause_speech, carry_in, any_speech) as 0/1; counts[i] = (intrusion_words,
    intruded_pauses, pauses, covered_us, pause_us).
    """
    n = T.shape[0]
    flags = np.zeros((n, 5), np.int64)
    counts = np.zeros((n, 5), np.int64)
    for i in range(n):
        w0, w1 = word_off[i], word_off[i + 1]
        p0, p1 = pause_off[i], pause_off[i + 1]
        first = pause_a[p0]
        for w in range(w0, w1):
            s = word_start[w]
            flags[i, 4] = 1
            if s >= first:
                flags[i, 0] = 1
                counts[i, 0] += 1
            else:
                flags[i, 2] = 1
                if word_end[w] > first:
                    flags[i, 3] = 1
            for p in range(p0, p1):
                if pause_a[p] <= s < pause_b[p]:
                    flags[i, 1] = 1
                    break
        for p in range(p0, p1):
            lo = pause_a[p]
            last = p == p1 - 1
            hi = T[i] if last else pause_a[p + 1]
            for w in range(w0, w1):
                s = word_start[w]
                if lo <= s and (s <= hi if last else s < hi):
                    counts[i, 1] += 1
                    break
            counts[i, 3] += _union_measure(word_start[w0:w1], word_end[w0:w1], pause_a[p], pause_b[p])
            counts[i, 4] += pause_b[p] - pause_a[p]
        counts[i, 2] = p1 - p0
    return flags, counts


@njit(cache=True)
def turn_taking_outcomes(word_start, word_off, E):
    """Outcome and latency per sample: early_start beats everything, then the first onset."""
    n = E.shape[0]
    outcome = np.empty(n, np.int64)
    latency = np.full(n, INF, np.int64)
    for i in range(n):
        w0, w1 = word_off[i], word_off[i + 1]
        early = False
        first = INF
        for w in range(w0, w1):
            s = word_start[w]
            if s < E[i]:
                early = True
            elif s < first:
                first = s
        if early:
            outcome[i] = EARLY_START
        elif first != INF:
            outcome[i] = RESPONSE
            latency[i] = first - E[i]
        else:
            outcome[i] = NO_RESPONSE
    return outcome, latency


@njit(cache=True)
def interruption_outcomes(seg_start, seg_end, seg_off, word_start, word_off, S, R, T):
    """Interruption outcomes per sample, decided in the spec's order.

    Returns (outcome, flags, latency, stop, speech_in, restarts): flags[i] =
    (speech_at_onset, speech_at_end, speech_before_onset); latency is INF unless
    response; stop is S to the end of the segment covering S, INF when that segment
    runs to T, and -1 when no segment covers S.
    """
    n = S.shape[0]
    outcome = np.empty(n, np.int64)
    flags = np.zeros((n, 3), np.int64)
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
                flags[i, 0] = 1
                stop[i] = INF if b >= T[i] else b - S[i]
            if a < R[i] < b:
                flags[i, 1] = 1
            if a < S[i]:
                flags[i, 2] = 1
            if S[i] < a < R[i]:
                restarts[i] += 1
        speech_in[i] = _union_measure(seg_start[g0:g1], seg_end[g0:g1], S[i], R[i])
        first = INF
        for w in range(word_off[i], word_off[i + 1]):
            s = word_start[w]
            if s >= R[i] and s < first:
                first = s
        if flags[i, 0] == 0:
            outcome[i] = NOT_EXERCISED
        elif flags[i, 1] == 1:
            outcome[i] = SPEAKING_AT_END
        elif first != INF:
            outcome[i] = RESPONSE
            latency[i] = first - R[i]
        else:
            outcome[i] = NO_RESPONSE
    return outcome, flags, latency, stop, speech_in, restarts
