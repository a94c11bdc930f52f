"""fdbu's notes (a stopped run's leftovers removed, a calibration starting or waiting, a setting capped, NeMo's
slower decoding): the modules that find them log them under the `fdbu` logger and print nothing.

Each note is one whole line at WARNING level. The CLI shows it on stderr as it is (`console_handler`, above any
progress bar); in Python, with no handler configured, logging's last resort writes it to stderr as well.
`logging.getLogger("fdbu").setLevel(logging.ERROR)` silences the notes; a handler on that logger captures them.
"""
from __future__ import annotations

import logging
import sys

logger = logging.getLogger("fdbu")


def note(text: str) -> None:
    """Say `text` (one line, already worded for a person: "fdbu: note: ...")."""
    logger.warning(text)


class _Console(logging.Handler):
    """Each note on its own line of stderr, even while a progress bar is drawn there (tqdm.write moves the bar), and
    on a terminal wrapped at its width (words kept whole)."""

    def emit(self, record: logging.LogRecord) -> None:
        from tqdm import tqdm

        from ..cli.terminal import fit

        try:
            tqdm.write(fit(record.getMessage(), sys.stderr), file=sys.stderr)
            sys.stderr.flush()
        except Exception:  # a closed stderr must not end the run
            self.handleError(record)


class AboveBars:
    """A stream for a library's log handler that writes each record above the progress bars (tqdm.write: the bars
    cleared, the line written, the bars drawn again below it), as fdbu's own notes are, so a warning NeMo prints
    while the asr bar is drawn does not leave that bar stranded mid-screen."""

    def __init__(self, stream):
        self.stream = stream

    def write(self, text: str) -> int:
        from tqdm import tqdm

        if text.strip():
            tqdm.write(text.rstrip("\n"), file=self.stream)
        else:
            self.stream.write(text)
        return len(text)

    def flush(self) -> None:
        self.stream.flush()


def console_handler() -> None:
    """The CLI's console: notes on stderr, once (a second call adds nothing), and not again through the root
    logger's handlers."""
    if not any(isinstance(h, _Console) for h in logger.handlers):
        logger.addHandler(_Console())
    logger.propagate = False
    logger.disabled = False  # a logging config that disables existing loggers (Hydra's job_logging=disabled) ...
    level = logger.level if logging.NOTSET < logger.level <= logging.WARNING else logging.WARNING
    logger.setLevel(level)  # ... or raises the root's level still leaves the notes on the console (and setLevel
    # clears the logger's cache of what it lets through)
