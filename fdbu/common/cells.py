"""A number or a text as a table cell shows it: the console's, compare's, the report's and the exported tables'.

One formatter per kind of cell, so "not reached", n/a and an interval read the same everywhere; and the
escapes that make text inert where it leaves fdbu (Markdown, CSV).
"""
from __future__ import annotations

import math

from ..config.settings import NOT_REACHED


def fmt(x, digits: int = 3) -> str:
    """A number for the console: n/a for null, "not reached" as is, else `digits` decimals."""
    if x is None:
        return "n/a"
    return x if isinstance(x, str) else f"{x:.{digits}f}"


def num(x, digits: int = 3) -> str:
    """A value in a table cell (compare's leaderboard, the report's): n/r for not reached, else as `fmt`."""
    if isinstance(x, float) and math.isinf(x):  # a paired difference with one side not reached
        return "+inf" if x > 0 else "-inf"
    return "n/r" if x == NOT_REACHED else fmt(x, digits)


def record_text(value, interval) -> str:
    """A value and its interval as a table cell shows them: `0.375 [0.137, 0.694]`."""
    return num(value) + ("" if interval is None else f" [{num(interval[0])}, {num(interval[1])}]")


def split_reached(x) -> tuple:
    """A record's number for a CSV: (number or None, not reached)."""
    return (None, True) if x == NOT_REACHED else (x, False)


# Text that leaves fdbu in a table is made inert for the tools people open it with (issue 38): a Markdown
# renderer that passes HTML through, a spreadsheet that evaluates formulas.
MD_ESCAPE = {"\\": "\\\\", "|": "\\|", "<": "&lt;", ">": "&gt;", "&": "&amp;", "*": "\\*", "_": "\\_",
             "`": "\\`", "[": "\\[", "]": "\\]", "#": "\\#", "~": "\\~", "\n": " ", "\r": " "}


def md_text(text) -> str:
    """Text as a Markdown table cell shows it literally: no emphasis, link, tag, column break or heading."""
    return "".join(MD_ESCAPE.get(ch, ch) for ch in str(text))


FORMULA = ("=", "+", "-", "@", "\t", "\r")  # what a spreadsheet reads as a formula at the start of a cell


def csv_text(value):
    """A CSV cell: a text a spreadsheet would evaluate (OWASP: CSV injection) gets a leading apostrophe;
    numbers, booleans and empty cells are written as they are."""
    if isinstance(value, str) and value.startswith(FORMULA):
        return "'" + value
    return value


def interval_text(p) -> str:
    """An interval as the console shows it: `[0.137, 0.694]`, n/a for none."""
    return "n/a" if p is None else f"[{fmt(p[0])}, {fmt(p[1])}]"


def _diff_part(x, flag) -> str:
    if flag is not None:
        return flag
    return "n/a" if x is None else f"{x:+.3f}"


def difference_text(d: dict) -> str:
    """A paired difference record (`fdbu.metrics.paired.paired_line`'s `difference`) as printed: +0.123 [lo, hi],
    an end beyond the captures as +inf or -inf."""
    text = _diff_part(d["value"], d["value_flag"])
    if d["interval"] is not None:
        text += f" [{_diff_part(d['interval'][0], d['interval_flags'][0])}, " \
                f"{_diff_part(d['interval'][1], d['interval_flags'][1])}]"
    return text


def p_text(p: float | None) -> str:
    """A p-value as printed: three decimals, `<0.001` below 0.001, n/a when there is none."""
    return "n/a" if p is None else "<0.001" if p < 0.001 else f"{p:.3f}"
