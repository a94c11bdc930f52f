"""What a person sees on a terminal: text fitted to its width (`fdbu.common.log.fit`: prose wrapped, tables cut
between their columns), the steps told as they run, and the one-line error. Everything printed into a pipe or a
file stays as it is."""
from __future__ import annotations

import sys
from typing import NoReturn

from ..common.log import fit


def teller(command: str, progress: bool):
    """`say(text)` printing "fdbu COMMAND: text" on a terminal with progress on, for the steps that draw no bar (an
    official script running); None into a pipe, a file or with progress=false."""
    if not progress or not sys.stderr.isatty():
        return None
    return lambda text: print(fit(f"fdbu {command}: {text}", sys.stderr), file=sys.stderr, flush=True)


def show(*parts: str) -> None:
    """print, fitted to the terminal."""
    print(fit(" ".join(parts)))


def error(message: str, status: int = 2) -> NoReturn:
    print(f"fdbu: error: {message}", file=sys.stderr)
    sys.exit(status)
