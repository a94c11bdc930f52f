"""What a compare mark holds: the Holm family options (compare.family), each decided line's family by name, and the
note said wherever marks are shown together (the console legend, the report's captions and notes, the forest's key).
Light on purpose: the readers and renderers import it without the comparison's computing or reading stack."""
from __future__ import annotations

from ..config.settings import HOLM_FAMILY, PAIRS

# compare.family, by compare.pairs: which headline lines one Holm adjustment covers (compare.json's comparison.family)
FAMILY_RULES = {"subset": {"baseline": "per subset and pair", "all": "per subset, across all pairs"},
                "pair": dict.fromkeys(PAIRS, "per pair, over every subset"),
                "leaderboard": dict.fromkeys(PAIRS, "over every pair and subset")}


def family_name(family: str, pairs_mode: str, pair: dict, section_family: str, view: str | None) -> str:
    """The Holm family a decided line of `pair` belongs to, by name (compare.json's `family`): `section_family` is
    its section's family under compare.family=subset (the subset, or "VIEW on SUBSET"), `view` the view it is in
    terms of (None: the unified metrics)."""
    versus = f"{pair['b']} vs {pair['a']}"
    if family == "subset":
        return f"{section_family}, " + ("all pairs" if pairs_mode == "all" else versus)
    over = f"{view} on every subset" if view else "every subset"
    return f"{over}, " + ("all pairs" if family == "leaderboard" else versus)


def holm_rule(comparison: dict) -> str:
    """The family in a few words: 'Holm per subset and pair (compare.family=subset)' (a figure's key)."""
    family = comparison.get("holm_family", HOLM_FAMILY)
    return f"Holm {FAMILY_RULES[family][comparison['pairs']]} (compare.family={family})"


def holm_note(comparison: dict | None, subsets: int = 1, views: bool = False) -> str:
    """What the marks shown together hold (a subset's table; a system's summary row over `subsets` subsets), said
    where they are shown (the console legend, the report's captions and notes). Within a family Holm keeps the
    chance of any mark under the null at most alpha; marks of k families together, at most k alpha (the union
    bound). Per system: each system against the baseline is its own family unless compare.family says otherwise."""
    if not comparison:
        return ""
    family, alpha, mode = comparison.get("holm_family", HOLM_FAMILY), comparison["alpha"], comparison["pairs"]
    held = {("subset", "baseline"): "a system's marks on one subset", ("subset", "all"): "one subset's marks",
            ("pair", "baseline"): "a system's marks over every subset (its row)",
            ("pair", "all"): "a pair's marks over every subset",
            ("leaderboard", "baseline"): "all the board's marks", ("leaderboard", "all"): "all the board's marks"}
    text = f"{holm_rule(comparison)}: {held[family, mode]} hold alpha {alpha:g} together"
    if family == "subset" and subsets > 1:
        over, row = ("a system's", "a system's row") if mode == "baseline" else ("the", "a pair's row")
        text += (f"; over {over} {subsets} subsets a chance mark can appear in up to {min(1.0, subsets * alpha):.2g} "
                 f"of runs (compare.family=pair holds {alpha:g} over {row})")
    return text + ("; each view's marks are a family apart" if views else "")
