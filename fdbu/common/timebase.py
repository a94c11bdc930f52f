"""Integer microseconds: every time is converted once, on loading (docs: Definition 1).

Later comparisons and subtractions are exact integer arithmetic, so an annotation
at 6.32000000000005 and a word at 6.32 compare equal.
"""
import math

US_PER_S = 1_000_000


def to_us(x: float) -> int:
    """`round(x, 6)` on the float's exact value (half to even), as integer microseconds.

    `round(x, 6)` is the nearest double to a multiple of 1e-6; scaling it by 1e6 lands
    within far less than 0.5 of that integer, so the second rounding is exact.
    """
    x = float(x)
    if not math.isfinite(x):
        raise ValueError(f"{x!r} is not a finite time")
    return int(round(round(x, 6) * 1e6))


def seconds(us: int) -> float:
    """Microseconds back to seconds for the output (integer / 1e6)."""
    return us / US_PER_S


def window_us(input_samples: int, sample_rate: int) -> int:
    """T: `input_samples / sample_rate` as a float, then rounded like every other time."""
    return to_us(input_samples / sample_rate)
