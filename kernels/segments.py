"""Speech probabilities -> speech segments: silero-vad's `get_speech_timestamps_from_probs`
for the parameters fdbu uses (no maximum speech length), over many files at once, speech
padding included.

Segments depend on the probabilities only through the comparisons the state machine
evaluates: `p >= threshold` outside speech and during a tentative silence, `p < neg_threshold`
inside speech. A comparison is *ambiguous* when its probability lies within `margin` of its
threshold: a perturbation smaller than the margin can turn it either way, and nothing else.
The kernel follows every trajectory those turns allow at once (each state is the machine's
whole state: in speech or not, the speech start, the tentative silence's start, the segments
emitted; equal states are merged, since they go on alike) and calls a file *critical* only
when one of them emits segments other than the computed probabilities' own. So a file that
is not critical keeps its segments under any perturbation smaller than `margin`. Most
ambiguous comparisons are harmless: a tentative silence ended one window earlier or later
that is too short to end a segment leaves the same segments, and so does a crossing inside a
segment too short to keep. Padding is applied to the segments afterwards and reads no
probability, so it cannot make a file critical.

The margin applies from window `guard_from` on: the windows before it are the reference
path's own probabilities (the guard recomputes a file only up to its last critical window),
so no perturbation is to be feared there. The kernel reports each file's last critical
window (-1: none): the last window at which a trajectory that emits other segments turned
away from another, which is how far the reference path must recompute it (from the state
the reference path then holds, every later turn leads to the same segments). More than
`BRANCHES` trajectories at once ends the search at that window, conservatively: the file is
critical up to it.
"""
import numpy as np
from numba import njit

from .results import Segments

WINDOW = 512
BRANCHES = 64  # trajectories followed at once; more make the file critical at that window


@njit(cache=True)
def _one(probs, audio_length, threshold, neg_threshold, min_speech_samples, min_silence_samples, pad, margin,
         guard_from, starts, ends):
    k = 0
    ambiguous = False
    triggered = False
    start = 0
    temp_end = 0
    for i in range(probs.shape[0]):
        p = probs[i]
        cur = WINDOW * i
        if i >= guard_from and (abs(p - threshold) < margin or abs(p - neg_threshold) < margin):
            ambiguous = True
        triggered, start, temp_end, kept = _step(triggered, start, temp_end, cur, p >= threshold, p < neg_threshold,
                                                 min_speech_samples, min_silence_samples)
        if kept >= 0:
            starts[k] = start
            ends[k] = kept
            k += 1
    if triggered and audio_length - start > min_speech_samples:
        starts[k] = start
        ends[k] = audio_length
        k += 1
    last = -1
    if ambiguous:
        last = _last_harmful(probs, audio_length, threshold, neg_threshold, min_speech_samples, min_silence_samples,
                             margin, guard_from, starts, ends, k)
    if pad > 0:
        _pad(starts, ends, k, audio_length, pad)
    return k, last


@njit(cache=True)
def _step(triggered, start, temp_end, cur, ge, lt, min_speech_samples, min_silence_samples):
    """One window of silero-vad's state machine at sample `cur`, given its two comparisons (ge: p >= threshold,
    lt: p < neg_threshold): the new (triggered, start, temp_end), and the end of the segment [start, end) the window
    closes and keeps (-1: none). The one copy of the rule, for the computed trajectory and every turned one."""
    if ge and temp_end != 0:
        temp_end = 0
    if ge and not triggered:
        return True, cur, temp_end, -1
    if lt and triggered:
        if temp_end == 0:
            temp_end = cur
        if cur - temp_end < min_silence_samples:
            return triggered, start, temp_end, -1
        return False, start, 0, temp_end if temp_end - start > min_speech_samples else -1
    return triggered, start, temp_end, -1


@njit(cache=True)
def _last_harmful(probs, audio_length, threshold, neg_threshold, min_speech_samples, min_silence_samples, margin,
                  guard_from, starts, ends, k):
    """The last window at which a trajectory the ambiguous comparisons allow turned away from another and went on
    to emit segments other than starts[:k], ends[:k] (unpadded); -1 when every one emits those.

    Each trajectory is (in speech, start, tentative silence's start, segments emitted so far, whether one of them
    differed from the computed probabilities' own); `turned` is the last window at which it parted from another
    (merged trajectories keep the latest). A trajectory that differs is followed to the end too: its later turns
    count, so that from the state the reference path holds after the last critical window every turn leads to the
    same segments (the guard's prefix is then always enough)."""
    # row c holds the trajectories before window i, row 1 - c those after it
    trig = np.zeros((2, BRANCHES), np.bool_)
    beg = np.zeros((2, BRANCHES), np.int64)
    tend = np.zeros((2, BRANCHES), np.int64)
    made = np.zeros((2, BRANCHES), np.int64)
    bad = np.zeros((2, BRANCHES), np.bool_)
    turned = np.full((2, BRANCHES), -1, np.int64)
    o_trig = np.zeros(4, np.bool_)
    o_beg = np.zeros(4, np.int64)
    o_tend = np.zeros(4, np.int64)
    o_made = np.zeros(4, np.int64)
    o_bad = np.zeros(4, np.bool_)
    n = 1
    c = 0
    for i in range(probs.shape[0]):
        p = probs[i]
        cur = WINDOW * i
        d = 1 - c
        open_ge = i >= guard_from and abs(p - threshold) < margin
        open_lt = i >= guard_from and abs(p - neg_threshold) < margin
        m = 0
        for b in range(n):
            outs = 0
            for g in range(2):
                ge = g == 1
                if not open_ge and ge != (p >= threshold):
                    continue
                for lo in range(2):
                    lt = lo == 1
                    if not open_lt and lt != (p < neg_threshold):
                        continue
                    # no probability is both >= threshold and < neg_threshold where neg_threshold <= threshold,
                    # nor neither where threshold <= neg_threshold (silero's 0.01 floor above a lower threshold)
                    if (ge and lt and neg_threshold <= threshold) or (not ge and not lt and threshold <= neg_threshold):
                        continue
                    t, s, e, kept = _step(trig[c, b], beg[c, b], tend[c, b], cur, ge, lt, min_speech_samples,
                                          min_silence_samples)
                    km, off = made[c, b], bad[c, b]
                    if kept >= 0:
                        off = off or km >= k or starts[km] != s or ends[km] != kept
                        km += 1
                    seen = False
                    for q in range(outs):
                        if o_trig[q] == t and o_beg[q] == s and o_tend[q] == e and o_made[q] == km and o_bad[q] == off:
                            seen = True
                    if not seen:
                        o_trig[outs], o_beg[outs], o_tend[outs], o_made[outs], o_bad[outs] = t, s, e, km, off
                        outs += 1
            at = i if outs > 1 else turned[c, b]
            for q in range(outs):
                merged = False
                for r in range(m):
                    if trig[d, r] == o_trig[q] and beg[d, r] == o_beg[q] and tend[d, r] == o_tend[q] and \
                            made[d, r] == o_made[q] and bad[d, r] == o_bad[q]:
                        turned[d, r] = max(turned[d, r], at)
                        merged = True
                        break
                if not merged:
                    if m == BRANCHES:
                        return i
                    trig[d, m], beg[d, m], tend[d, m], made[d, m] = o_trig[q], o_beg[q], o_tend[q], o_made[q]
                    bad[d, m], turned[d, m] = o_bad[q], at
                    m += 1
        c = d
        n = m
    return _worst(trig[c], beg[c], made[c], bad[c], turned[c], n, audio_length, min_speech_samples, starts, ends, k)


@njit(cache=True)
def _worst(trig, beg, made, bad, turned, n, audio_length, min_speech_samples, starts, ends, k):
    """At the file's end, the latest turn of the n trajectories left whose segments (the last one closed by the end,
    as silero-vad closes it) differ from starts[:k], ends[:k]; -1 when none differs."""
    worst = -1
    for b in range(n):
        km = made[b]
        off = bad[b]
        if trig[b] and audio_length - beg[b] > min_speech_samples:
            off = off or km >= k or starts[km] != beg[b] or ends[km] != audio_length
            km += 1
        if off or km != k:
            worst = max(worst, turned[b])
    return worst


@njit(cache=True)
def _pad(starts, ends, k, audio_length, pad):
    """silero-vad's padding loop, step for step: the first start moves back by `pad` (not below 0);
    a gap shorter than 2 * pad is split between its neighbours (the earlier end gains gap // 2, the
    later start loses gap // 2); otherwise each side moves by `pad`, clipped to [0, audio_length].
    `pad` is a float (16000 * speech_pad_ms / 1000) and int() truncates, as in Python."""
    for i in range(k):
        if i == 0:
            starts[0] = int(max(0.0, starts[0] - pad))
        if i != k - 1:
            gap = starts[i + 1] - ends[i]
            if gap < 2 * pad:
                ends[i] += gap // 2
                starts[i + 1] = int(max(0.0, starts[i + 1] - gap // 2))
            else:
                ends[i] = int(min(float(audio_length), ends[i] + pad))
                starts[i + 1] = int(max(0.0, starts[i + 1] - pad))
        else:
            ends[i] = int(min(float(audio_length), ends[i] + pad))


@njit(cache=True)
def speech_segments(probs, prob_off, audio_length, threshold, neg_threshold, min_speech_samples,
                    min_silence_samples, pad_samples, margin, guard_from):
    """Segments of every file: probs[prob_off[i]:prob_off[i+1]] are file i's window probabilities.

    critical[i] says a perturbation of file i's probabilities from window guard_from[i] on, each smaller than
    margin[i] (file i's own guard margin; 0 guards nothing), can change its segments; last_critical[i] is the
    last window at which such a perturbation's trajectory turned away (-1: none).
    """
    n = audio_length.shape[0]
    cap = prob_off[n] // 2 + n
    start = np.empty(cap, np.int64)
    end = np.empty(cap, np.int64)
    seg_off = np.zeros(n + 1, np.int64)
    last = np.full(n, -1, np.int64)
    for i in range(n):
        k, last[i] = _one(probs[prob_off[i]:prob_off[i + 1]], audio_length[i], threshold, neg_threshold,
                          min_speech_samples, min_silence_samples, pad_samples, margin[i], guard_from[i],
                          start[seg_off[i]:], end[seg_off[i]:])
        seg_off[i + 1] = seg_off[i] + k
    return Segments(start[:seg_off[n]], end[:seg_off[n]], seg_off, last >= 0, last)
