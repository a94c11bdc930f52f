"""Speech probabilities -> speech segments: silero-vad's `get_speech_timestamps_from_probs`
for the parameters fdbu uses (no padding, no maximum speech length), over many files at once.

Segments depend on the probabilities only through `p >= threshold` and `p < neg_threshold`.
"""
import numpy as np
from numba import njit

WINDOW = 512


@njit(cache=True)
def _one(probs, audio_length, threshold, neg_threshold, min_speech_samples, min_silence_samples, starts, ends):
    k = 0
    triggered = False
    start = 0
    temp_end = 0
    for i in range(probs.shape[0]):
        p = probs[i]
        cur = WINDOW * i
        if p >= threshold and temp_end != 0:
            temp_end = 0
        if p >= threshold and not triggered:
            triggered = True
            start = cur
            continue
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
    return k


@njit(cache=True)
def speech_segments(probs, prob_off, audio_length, threshold, neg_threshold, min_speech_samples,
                    min_silence_samples):
    """Segments of every file: probs[prob_off[i]:prob_off[i+1]] are file i's window probabilities.

    Returns (start, end, seg_off) in samples; file i's segments are seg_off[i]:seg_off[i+1].
    """
    n = audio_length.shape[0]
    cap = prob_off[n] // 2 + n
    start = np.empty(cap, np.int64)
    end = np.empty(cap, np.int64)
    seg_off = np.zeros(n + 1, np.int64)
    for i in range(n):
        k = _one(probs[prob_off[i]:prob_off[i + 1]], audio_length[i], threshold, neg_threshold,
                 min_speech_samples, min_silence_samples, start[seg_off[i]:], end[seg_off[i]:])
        seg_off[i + 1] = seg_off[i] + k
    return start[:seg_off[n]], end[:seg_off[n]], seg_off
