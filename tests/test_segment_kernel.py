"""The probabilities -> segments kernel equals silero-vad's own function."""
import pytest
import itertools
import math

import numpy as np
from hypothesis import given, settings, strategies as st
from silero_vad import get_speech_timestamps_from_probs

from fdbu.kernels import speech_segments
from fdbu.vad import SegmentRule


def library(probs, length, threshold, min_speech_duration_ms, min_silence_duration_ms, neg=None, pad_ms=0):
    return [(d["start"], d["end"]) for d in get_speech_timestamps_from_probs(
        [float(p) for p in probs], sampling_rate=16000, threshold=threshold, min_speech_duration_ms=min_speech_duration_ms,
        max_speech_duration_s=float("inf"), min_silence_duration_ms=min_silence_duration_ms, speech_pad_ms=pad_ms,
        return_seconds=False, time_resolution=1, visualize_probs=False, neg_threshold=neg,
        min_silence_at_max_speech=98, use_max_poss_sil_at_max_speech=True, audio_length_samples=length, step=1)]


def kernel(files, threshold, min_speech_duration_ms, min_silence_duration_ms, neg=None, pad_ms=0):
    flat = np.concatenate([np.asarray(p, np.float64) for p, _ in files] + [np.zeros(0)])
    off = np.concatenate([[0], np.cumsum([len(p) for p, _ in files])]).astype(np.int64)
    lengths = np.array([n for _, n in files], np.int64)
    rule = SegmentRule(threshold, max(threshold - 0.15, 0.01) if neg is None else neg, min_speech_duration_ms, min_silence_duration_ms,
                       pad_ms)
    a, b, seg_off, _, _ = speech_segments(flat, off, lengths, *rule.kernel_args(), np.zeros(len(files)),
                                          np.zeros(len(files), np.int64))
    return [list(zip(a[seg_off[i]:seg_off[i + 1]].tolist(), b[seg_off[i]:seg_off[i + 1]].tolist()))
            for i in range(len(files))]


@st.composite
def prob_file(draw):
    """Runs of speech-like and silence-like probabilities, with values exactly at the thresholds."""
    probs = []
    for _ in range(draw(st.integers(0, 12))):
        level = draw(st.sampled_from([0.02, 0.2, 0.35, 0.4, 0.5, 0.7, 0.98]))
        probs += [draw(st.sampled_from([level, level + 1e-9, level - 1e-9, draw(st.floats(0, 1))]))
                  for _ in range(draw(st.integers(1, 20)))]
    length = max(0, len(probs) * 512 - draw(st.integers(0, 511)))
    return probs, length


@settings(max_examples=150, deadline=None)
@given(st.lists(prob_file(), min_size=1, max_size=5), st.sampled_from([0.3, 0.4, 0.5, 0.6, 0.7]),
       st.sampled_from([0, 32, 64, 100, 250]), st.sampled_from([50, 100, 200, 500]))
@pytest.mark.slow
def test_kernel_equals_silero_function(files, threshold, min_speech_duration_ms, min_silence_duration_ms):
    got = kernel(files, threshold, min_speech_duration_ms, min_silence_duration_ms)
    assert got == [library(p, n, threshold, min_speech_duration_ms, min_silence_duration_ms) for p, n in files]


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(prob_file(), st.sampled_from([0.3, 0.5, 0.7]), st.sampled_from([1e-3, 0.02, 0.1]), st.integers(0, 2**32 - 1))
def test_a_file_that_is_not_critical_keeps_its_segments_under_any_smaller_perturbation(file, threshold, margin, seed):
    probs, length = file
    p = np.asarray(probs, np.float64)
    off = np.array([0, len(p)], np.int64)
    args = (np.array([length], np.int64), threshold, max(threshold - 0.15, 0.01), 4000.0, 1600.0, 480.0)
    a, b, _, critical, _ = speech_segments(p, off, *args, np.array([margin]), np.zeros(1, np.int64))
    noise = np.random.default_rng(seed).uniform(-margin, margin, len(p)) * 0.999
    a2, b2, _, _, _ = speech_segments(p + noise, off, *args, np.zeros(1), np.zeros(1, np.int64))
    if not critical[0]:
        assert (a.tolist(), b.tolist()) == (a2.tolist(), b2.tolist())


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(prob_file(), st.sampled_from([0.3, 0.5, 0.7]), st.sampled_from([1e-3, 0.02, 0.1]), st.integers(0, 2**32 - 1))
def test_the_guard_needs_exact_windows_only_up_to_the_last_critical_one(file, threshold, margin, seed):
    """The guard's prefix: with the windows up to the last critical one exact and every later window off by less
    than the margin, the segments are the exact ones wherever the kernel then finds the file no longer critical."""
    probs, length = file
    exact = np.asarray(probs, np.float64)
    off = np.array([0, len(exact)], np.int64)
    args = (np.array([length], np.int64), threshold, max(threshold - 0.15, 0.01), 4000.0, 1600.0, 480.0)
    rng = np.random.default_rng(seed)
    batched = np.clip(exact + rng.uniform(-margin, margin, len(exact)) * 0.999, 0, 1)  # what the batched path gave
    a, b, _, _, _ = speech_segments(exact, off, *args, np.zeros(1), np.zeros(1, np.int64))
    _, _, _, critical, last = speech_segments(batched, off, *args, np.array([margin]), np.zeros(1, np.int64))
    assert last[0] < len(exact)
    prefix = int(last[0]) + 1
    mixed = np.concatenate([exact[:prefix], batched[prefix:]])  # the guard's entry: exact up to the last critical
    a2, b2, _, still, _ = speech_segments(mixed, off, *args, np.array([margin]), np.array([prefix], np.int64))
    if not still[0]:  # (still critical: the trajectory changed, and the guard recomputes the whole file)
        assert (a2.tolist(), b2.tolist()) == (a.tolist(), b.tolist())


@settings(max_examples=80, deadline=None)
@given(st.lists(prob_file(), min_size=1, max_size=4), st.sampled_from([0.4, 0.5, 0.6]),
       st.sampled_from([0.05, 0.15, 0.25, 0.35]))
def test_kernel_equals_silero_function_with_an_explicit_neg_threshold(files, threshold, offset):
    neg = max(threshold - offset, 0.01)
    got = kernel(files, threshold, 250, 100, neg)
    assert got == [library(p, n, threshold, 250, 100, neg) for p, n in files]


# padding as silero-vad applies it: 30 ms is its default, 100 ms merges close segments, and the
# odd values make the pad a fractional number of samples (int() truncation) or split odd gaps
PADS = [0, 1, 13, 30, 100, 250, 0.03, 7.77]


@settings(max_examples=150, deadline=None)
@given(st.lists(prob_file(), min_size=1, max_size=5), st.sampled_from([0.3, 0.5, 0.7]), st.sampled_from([0, 250]),
       st.sampled_from([50, 100, 300]), st.sampled_from(PADS))
@pytest.mark.slow
def test_kernel_pads_exactly_as_silero(files, threshold, min_speech_duration_ms, min_silence_duration_ms, pad_ms):
    got = kernel(files, threshold, min_speech_duration_ms, min_silence_duration_ms, pad_ms=pad_ms)
    assert got == [library(p, n, threshold, min_speech_duration_ms, min_silence_duration_ms, pad_ms=pad_ms) for p, n in files]


def test_padding_merges_clips_and_splits_as_silero_does():
    # three segments: at 0 (the start cannot move below 0), 3 windows apart (a gap under 2 x pad,
    # split in halves), and one running to the end of the file (the end cannot pass it)
    probs = [0.9] * 20 + [0.01] * 5 + [0.9] * 20 + [0.01] * 40 + [0.9] * 30
    length = len(probs) * 512 - 100
    for pad_ms in (30, 100, 160):
        got = kernel([(probs, length)], 0.5, 250, 50, pad_ms=pad_ms)[0]
        assert got == library(probs, length, 0.5, 250, 50, pad_ms=pad_ms)
        assert got[0][0] == 0 and got[-1][1] == length
    assert kernel([(probs, length)], 0.5, 250, 50, pad_ms=100)[0] != kernel([(probs, length)], 0.5, 250, 50)[0]


def _rule_args(length, threshold, neg, min_speech_ms, min_silence_ms, pad_ms=0):
    return (np.array([length], np.int64), *SegmentRule(threshold, neg, min_speech_ms, min_silence_ms,
                                                        pad_ms).kernel_args())


def _segments(files, args, margin=0.0, guard_from=0):
    """The kernel over many versions of one file (rows of `files`), one margin and guard_from for all."""
    n, w = files.shape
    a, b, off, critical, last = speech_segments(
        files.reshape(-1).astype(np.float64), np.arange(n + 1, dtype=np.int64) * w, np.repeat(args[0], n), *args[1:],
        np.full(n, margin), np.full(n, guard_from, np.int64))
    return [(a[off[i]:off[i + 1]].tolist(), b[off[i]:off[i + 1]].tolist()) for i in range(n)], critical, last


@st.composite
def ambiguous_file(draw):
    """Clear speech and silence (0.98, 0.02, and halfway between the two thresholds) with up to 6 windows placed
    within the margin of a threshold: the windows whose comparisons a perturbation can turn. neg_threshold is
    silero's threshold - 0.15, or close to the threshold (a window near both), equal to it, or above it (silero's
    floor of 0.01 above a lower threshold), as the sweep's offsets and thresholds make it."""
    threshold = draw(st.sampled_from([0.005, 0.3, 0.5, 0.7]))
    neg = round(max(threshold - draw(st.sampled_from([0.15, 0.15, 0.0015, 0.0])), 0.01), 4)
    margin = draw(st.sampled_from([1e-3, 0.02] if threshold > 0.1 else [1e-3]))  # no clear level within it
    levels = [0.001, 0.98, (threshold + neg) / 2 if abs(threshold - neg) > 0.05 else 0.6 * threshold]
    probs = []
    for _ in range(draw(st.integers(1, 8))):
        probs += [draw(st.sampled_from(levels))] * draw(st.integers(1, 9))
    for i in draw(st.lists(st.integers(0, len(probs) - 1), max_size=6, unique=True)):
        probs[i] = draw(st.sampled_from([threshold, neg])) + draw(st.sampled_from([-0.9, -0.4, 0.0, 0.3, 0.8])) * margin
    return np.array(probs), threshold, neg, margin


def _turns(p, threshold, neg, margin, guard_from=0):
    """Every way a perturbation smaller than `margin` can turn p's comparisons from window guard_from on: each
    ambiguous window set just below or at each threshold it is near (a window near both: four values)."""
    ways = []
    for i in range(len(p)):
        near = [t for t in (threshold, neg) if abs(p[i] - t) < margin] if i >= guard_from else []
        ways.append(sorted({v for t in near for v in (t, np.nextafter(t, -np.inf))}) or [p[i]])
    assert math.prod(map(len, ways)) <= 4 ** 6, "only the placed windows are near a threshold"
    out = np.array(list(itertools.product(*ways)), np.float64)
    assert np.all(np.abs(out - p) < margin)
    return out


@settings(max_examples=400, deadline=None)
@given(ambiguous_file(), st.sampled_from([0, 100]), st.sampled_from([0, 32, 100, 200]), st.sampled_from([0, 30]),
       st.integers(0, 20))
def test_a_file_is_critical_exactly_when_some_perturbation_within_the_margin_changes_its_segments(
        file, min_speech_ms, min_silence_ms, pad_ms, guard_from):
    """Every turn of every ambiguous comparison from guard_from on tried (the adversary's perturbations, not random
    ones): the file is critical if and only if one of them changes its segments (without padding; with it, a file
    that is not critical keeps its padded segments under all of them)."""
    p, threshold, neg, margin = file
    args = _rule_args(len(p) * 512 - 100, threshold, neg, min_speech_ms, min_silence_ms, pad_ms)
    (own,), critical, _ = _segments(p[None, :], args, margin, guard_from)
    turned, _, _ = _segments(_turns(p, threshold, neg, margin, guard_from), args)
    changed = any(s != own for s in turned)
    assert not changed if not critical[0] else (changed or pad_ms > 0)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(ambiguous_file(), st.sampled_from([0, 100]), st.sampled_from([0, 32, 100, 200]), st.sampled_from([0, 30]))
def test_recomputing_up_to_the_last_critical_window_is_enough_whatever_the_exact_probabilities(
        file, min_speech_ms, min_silence_ms, pad_ms):
    """For every exact file the batched one may stand for: with its windows up to the last critical one exact and
    the later ones batched, the kernel finds the file no longer critical and its segments are the exact ones (so
    the guard never needs to recompute a file whole while it follows fewer than BRANCHES trajectories)."""
    p, threshold, neg, margin = file
    args = _rule_args(len(p) * 512 - 100, threshold, neg, min_speech_ms, min_silence_ms, pad_ms)
    _, critical, last = _segments(p[None, :], args, margin)
    if not critical[0]:
        return
    exact = _turns(p, threshold, neg, margin)
    prefix = int(last[0]) + 1
    mixed = np.concatenate([exact[:, :prefix], np.repeat(p[None, prefix:], len(exact), axis=0)], axis=1)
    got, still, _ = _segments(mixed, args, margin, prefix)
    want, _, _ = _segments(exact, args)
    assert not still.any() and got == want


def test_the_reviewers_cases():
    """Two cases an earlier version got wrong: a threshold under silero's 0.01 floor (neg_threshold above it, so a
    probability can be both >= threshold and < neg_threshold: that file is critical), and a trajectory whose
    segments already differ turning again later (its later turn counts, so the prefix is enough)."""
    floor = _rule_args(14 * 512, 0.005, 0.01, 0, 100)
    low = np.array([.001, .001, .0045, .0075] + [.001] * 10)
    (own,), critical, _ = _segments(low[None, :], floor, 1e-3)
    turned, _, _ = _segments(_turns(low, 0.005, 0.01, 1e-3), floor)
    assert any(s != own for s in turned) and critical[0]
    later = np.array([0.98, 0.56, 0.625, 0.7])
    args = _rule_args(4 * 512, 0.7, 0.55, 0, 0)
    _, critical, last = _segments(later[None, :], args, 0.02)
    assert critical[0] and last[0] == 3


def test_harmless_turns_leave_a_file_uncritical_and_a_harmful_one_does_not():
    """A comparison within the margin is harmless where no turn of it changes a segment: a dip to neg_threshold
    inside speech far shorter than the minimum silence, or a speech onset in a burst too short to keep. A dip that
    does end a segment is critical, at that window."""
    args = _rule_args(120 * 512, 0.5, 0.35, 250, 100)  # min speech 4,000 samples (8 windows), min silence 1,600 (4)
    speech, silence = [0.98] * 30, [0.02] * 30
    short_dip = np.array(speech + [0.35] + speech + silence + speech[:29])
    short_burst = np.array(silence + [0.5, 0.98, 0.98] + silence * 2 + [0.02] * 27)
    long_dip = np.array(speech + [0.35] + [0.3] * 9 + speech + silence[:20] + speech[:29] + [0.02])
    _, critical, last = _segments(np.stack([short_dip, short_burst, long_dip]), args, 1e-3)
    assert critical.tolist() == [False, False, True] and last.tolist() == [-1, -1, 30]


def test_more_trajectories_than_followed_make_the_file_critical_where_they_overflow():
    """Every window near both thresholds (a margin wider than any calibration gives): the trajectories outgrow
    BRANCHES after a few windows, and the file is critical up to the window where they did, whatever follows; a file
    that ends before it is followed to its end (its last window turns a segment's end)."""
    def last(n):
        _, critical, last = _segments(np.full((1, n), 0.42), _rule_args(n * 512, 0.5, 0.35, 0, 1000), 0.2)
        assert critical[0]
        return int(last[0])

    overflow = last(200)
    assert overflow == last(40) < 39 and last(overflow) == overflow - 1
