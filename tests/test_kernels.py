"""Each numba kernel equals its plain-Python twin (tests/twins.py), on random and edge inputs."""
import pytest
import numpy as np
from hypothesis import given, settings, strategies as st

import twins
from fdbu.kernels import (EARLY_START, INF, NO_RESPONSE, NOT_EXERCISED, RESPONSE, SPEAKING_AT_END,
                          paired_ranked_differences, paired_ratio_differences,
                          interruption_outcomes, pause_components, ranked, resample_ranked, resample_ratios,
                          turn_taking_outcomes)
from fdbu.metrics.flat import column, flatten

NAMES = {EARLY_START: "early_start", RESPONSE: "response", NO_RESPONSE: "no_response",
         NOT_EXERCISED: "not_exercised", SPEAKING_AT_END: "speaking_at_end"}
T_MAX = 40


@st.composite
def words(draw, T):
    """Word (start, end) pairs on a coarse grid so ties with pauses and E happen often."""
    out = []
    for _ in range(draw(st.integers(0, 6))):
        s = draw(st.integers(0, T))
        e = draw(st.one_of(st.just(s), st.integers(s, T + 5)))
        out.append((s, e))
    return out


@st.composite
def pause_sample(draw):
    T = draw(st.integers(1, T_MAX))
    cuts = sorted(draw(st.lists(st.integers(0, T), min_size=2, max_size=8)))
    pauses = [(cuts[i], cuts[i + 1]) for i in range(0, len(cuts) - 1, 2)]
    return T, pauses, draw(words(T))


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(pause_sample(), min_size=1, max_size=6))
def test_pause_kernel_equals_twin(samples):
    ws, woff = flatten([np.array([w[0] for w in s[2]], np.int64) for s in samples])
    we, _ = flatten([np.array([w[1] for w in s[2]], np.int64) for s in samples])
    pa, poff = flatten([np.array([p[0] for p in s[1]], np.int64) for s in samples])
    pb, _ = flatten([np.array([p[1] for p in s[1]], np.int64) for s in samples])
    c = pause_components(ws, we, woff, pa, pb, poff, column([s[0] for s in samples]))
    for i, (T, pauses, w) in enumerate(samples):
        want = twins.pause(w, pauses, T)
        got = {name: (bool if column.dtype == bool else int)(column[i]) for name, column in c._asdict().items()}
        assert got == want


@st.composite
def turn_sample(draw):
    T = draw(st.integers(0, T_MAX))
    return draw(st.integers(0, T)), [s for s, _ in draw(words(T))]


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(turn_sample(), min_size=1, max_size=8))
def test_turn_taking_kernel_equals_twin(samples):
    ws, woff = flatten([np.array(s[1], np.int64) for s in samples])
    outcome, latency = turn_taking_outcomes(ws, woff, column([s[0] for s in samples]))  # a named tuple unpacks too
    for i, (E, starts) in enumerate(samples):
        assert (NAMES[int(outcome[i])], int(latency[i])) == twins.turn_taking(starts, E)


@st.composite
def interruption_sample(draw):
    T = draw(st.integers(1, T_MAX))
    S = draw(st.integers(0, T))
    R = draw(st.integers(S, T))
    cuts = sorted(set(draw(st.lists(st.integers(0, T), max_size=8))))
    segs = [(cuts[i], cuts[i + 1]) for i in range(0, len(cuts) - 1, 2)]
    starts = sorted(draw(st.lists(st.integers(R, T), max_size=4)))
    return T, S, R, segs, starts


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(st.lists(interruption_sample(), min_size=1, max_size=8))
def test_interruption_kernel_equals_twin(samples):
    ga, goff = flatten([np.array([g[0] for g in s[3]], np.int64) for s in samples])
    gb, _ = flatten([np.array([g[1] for g in s[3]], np.int64) for s in samples])
    ws, woff = flatten([np.array(s[4], np.int64) for s in samples])
    S, R, T = (column([s[k] for s in samples]) for k in (1, 2, 0))
    c = interruption_outcomes(ga, gb, goff, ws, woff, S, R, T)
    for i, (t, s, r, segs, starts) in enumerate(samples):
        got = {"outcome": NAMES[int(c.outcome[i])], "latency": int(c.latency_us[i]), "stop": int(c.stop_us[i]),
               "speech_at_onset": bool(c.speech_at_onset[i]), "speech_at_end": bool(c.speech_at_end[i]),
               "speech_before_onset": bool(c.speech_before_onset[i]), "speech_in": int(c.speech_in_us[i]),
               "restarts": int(c.restarts[i])}
        assert got == twins.interruption(segs, starts, s, r, t)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 50), st.integers(0, 3)), min_size=1, max_size=12), st.integers(1, 40))
def test_bootstrap_ratio_kernel_equals_twin(pairs, reps):
    num = column([p[0] for p in pairs])
    den = column([p[1] for p in pairs])
    idx = np.random.default_rng(reps).integers(0, len(pairs), size=(reps, len(pairs)))
    values, kept = resample_ratios(num, den, idx)
    want = twins.ratios(num, den, idx)
    assert [None if not k else float(v) for v, k in zip(values, kept)] == want


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.integers(0, 10**7), st.just(INF)), min_size=1, max_size=15), st.data())
def test_bootstrap_quantile_kernel_equals_twin(values, data):
    n = len(values)
    rank = data.draw(st.integers(1, n))
    v = column(values)
    assert int(ranked(v, rank)) == twins.ranked(values, rank)
    idx = np.random.default_rng(n).integers(0, n, size=(25, n))
    got = resample_ranked(v, idx, rank)
    assert [int(x) for x in got] == [twins.ranked([values[j] for j in row], rank) for row in idx]


def test_edge_cases_named_by_the_spec():
    # touching pauses, a word exactly at a pause start, a null-end word, the last pause owning T itself
    pauses = [(10, 20), (20, 30)]
    words = [(20, 20), (30, 30)]
    c = pause_components(column([20, 30]), column([20, 30]), column([0, 2]), column([10, 20]), column([20, 30]),
                         column([0, 2]), column([30]))
    assert twins.pause(words, pauses, 30)["intruded_pauses"] == int(c.intruded_pauses[0]) == 1
    assert bool(c.inside_pause_onset[0]) is True and int(c.covered_us[0]) == 0
    # a reply exactly at R is a response with latency 0; a segment starting exactly at R is no carry-over
    out = interruption_outcomes(column([0, 50]), column([45, 60]), column([0, 2]), column([50]), column([0, 1]),
                                column([40]), column([50]), column([100]))
    assert NAMES[int(out.outcome[0])] == "response" and int(out.latency_us[0]) == 0 and int(out.stop_us[0]) == 5
    # a segment that runs to T has no observed stop
    out = interruption_outcomes(column([0]), column([100]), column([0, 1]), column([]), column([0, 0]),
                                column([40]), column([50]), column([100]))
    assert NAMES[int(out.outcome[0])] == "speaking_at_end" and int(out.stop_us[0]) == INF


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 50), st.integers(0, 3), st.integers(0, 50), st.integers(0, 3)),
                min_size=1, max_size=12), st.integers(1, 40))
def test_paired_ratio_difference_kernel_equals_twin(rows, reps):
    na, da, nb, db = (column([r[k] for r in rows]) for k in range(4))
    idx = np.random.default_rng(reps).integers(0, len(rows), size=(reps, len(rows)))
    values, kept = paired_ratio_differences(na, da, nb, db, idx)
    want = twins.ratio_differences(na, da, nb, db, idx)
    assert [None if not k else float(v) for v, k in zip(values, kept)] == want


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(*[st.one_of(st.integers(0, 10**7), st.just(INF))] * 2), min_size=1, max_size=15), st.data())
def test_paired_quantile_difference_kernel_equals_twin(pairs, data):
    n = len(pairs)
    rank = data.draw(st.integers(1, n))
    a, b = column([p[0] for p in pairs]), column([p[1] for p in pairs])
    idx = np.random.default_rng(n).integers(0, n, size=(25, n))
    values, kept = paired_ranked_differences(a, b, idx, rank)
    assert kept.all()  # a resample where both are never is a tie, not dropped
    assert [int(v) for v in values] == twins.ranked_differences(a, b, idx, rank)
    # swapping the systems negates every difference
    swapped, _ = paired_ranked_differences(b, a, idx, rank)
    assert np.array_equal(swapped, -values)
