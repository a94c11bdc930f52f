"""Speech probabilities -> speech segments: silero-vad's `get_speech_timestamps_from_probs`
for the parameters fdbu uses (no maximum speech length), over many files at once, speech
padding included.

Segments depend on the probabilities only through the comparisons the state machine
evaluates: `p >= threshold` outside speech and during a tentative silence, `p < neg_threshold`
inside speech. A file is *critical* when one of those evaluated comparisons has its
probability within `margin` of its threshold. If no window of a file is critical, any
perturbation of its probabilities smaller than `margin` leaves every evaluated comparison,
and so the whole state trajectory and the segments, unchanged. Padding is applied to the
segments afterwards and reads no probability, so it cannot make a file critical.

The margin applies from window `guard_from` on: the windows before it are the reference
path's own probabilities (the guard recomputes a file only up to its last critical window),
so no perturbation is to be feared there. The kernel reports each file's last critical
window (-1: none), which is how far the reference path must recompute it.
"""
import numpy as np
from numba import njit

from .results import Segments

WINDOW = 512


@njit(cache=True)
def _one(probs, audio_length, threshold, neg_threshold, min_speech_samples, min_silence_samples, pad, margin,
         guard_from, starts, ends):
    k = 0
    last = -1
    triggered = False
    start = 0
    temp_end = 0
    for i in range(probs.shape[0]):
        p = probs[i]
        cur = WINDOW * i
        if i >= guard_from and (not triggered or temp_end != 0) and abs(p - threshold) < margin:
            last = i
        if p >= threshold and temp_end != 0:
            temp_end = 0
        if p >= threshold and not triggered:
            triggered = True
            start = cur
            continue
        if i >= guard_from and triggered and abs(p - neg_threshold) < margin:
            last = i
        if p < neg_threshold and triggered:
            if temp_end == 0:
                temp_end = cur
            if cur - temp_end < min_silence_samples:
                continue
            if temp_end - start > min_speech_samples:
                starts[k] = start
                ends[k] = temp_end
                k += 1
            temp_end = 0
            triggered = False
    if triggered and audio_length - start > min_speech_samples:
        starts[k] = start
        ends[k] = audio_length
        k += 1
    if pad > 0:
        _pad(starts, ends, k, audio_length, pad)
    return k, last


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

    critical[i] says an evaluated comparison at a window from guard_from[i] on came within margin[i]
    of its threshold (file i's own guard margin; 0 guards nothing); last_critical[i] is the last
    such window (-1: none).
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
