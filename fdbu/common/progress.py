"""fdbu's progress bars: tqdm's, but a bar that Ctrl-C stops is cleared from the screen rather than left at its last
count above the "interrupted (Ctrl-C); ..." line (which then reads as the whole story: what a rerun keeps)."""
from __future__ import annotations

import sys

from tqdm import tqdm


def _stopped(exc: BaseException | None) -> bool:
    return isinstance(exc, KeyboardInterrupt)


class Bar(tqdm):
    """A tqdm bar whose line is cleared when it closes because of a KeyboardInterrupt: from `with` (the exception
    reaches `__exit__`) or from a `finally:` (the exception being handled, sys.exc_info). A loop over the bar left
    by an exception closes tqdm's iterator first (GeneratorExit, which says nothing of why): that close is left to
    the bar's owner (`with`, `finally`; else when the bar is collected), which knows."""

    def __exit__(self, exc_type, exc_value, traceback):
        if _stopped(exc_value):
            self.leave = False
        return super().__exit__(exc_type, exc_value, traceback)

    def close(self) -> None:
        exc = sys.exc_info()[1]
        if isinstance(exc, GeneratorExit):
            return
        if _stopped(exc):
            self.leave = False
        super().close()


FIGURES_FORMAT = "{l_bar}{bar}| {n:.1f}/{total_fmt} figures [{elapsed}]"


def figure_bar(total: int, progress: bool) -> Bar:
    """A bar over `total` figures that moves inside each (`figure_step`): a figure is seconds of layout and rendering
    on a full tree, page by page; on a terminal only."""
    return Bar(total=total, desc="figures", unit="figure", bar_format=FIGURES_FORMAT,
               disable=None if progress else True)


def figure_step(bar: Bar, k: int):
    """`tick(done, of)` for the k-th figure (from 0) of `bar`: the bar at k + done/of (fdbu.figures.plot._save's
    steps: each page laid out, then each page rendered)."""
    def tick(done: int, of: int) -> None:
        bar.n = k + done / of
        bar.refresh()
    return tick
