"""Clarification 1: times become integer microseconds by rounding the float's exact value half to even."""
from decimal import ROUND_HALF_EVEN, Decimal

import pytest
from hypothesis import given, strategies as st

from fdbu.common.timebase import to_us, window_us


def exact_us(x: float) -> int:
    return int(Decimal(x).quantize(Decimal("1e-6"), rounding=ROUND_HALF_EVEN) * 1000000)


@given(st.floats(min_value=0, max_value=100000, allow_nan=False))
def test_to_us_rounds_the_exact_value_half_to_even(x):
    assert to_us(x) == exact_us(x) == round(round(x, 6) * 1e6)


def test_float_noise_disappears():
    assert to_us(6.32000000000005) == to_us(6.32) == 6_320_000
    assert to_us(0.0000005) == exact_us(0.0000005)  # just below or above the tie, by its binary value


def test_window_is_samples_over_rate_then_rounded():
    assert window_us(402133, 16000) == exact_us(402133 / 16000) == 25_133_312


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_non_finite_is_refused(bad):
    with pytest.raises(ValueError):
        to_us(bad)
