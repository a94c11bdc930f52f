"""fdbu's notes (a stopped run's leftovers removed, a calibration starting or waiting, a setting capped, NeMo's
slower decoding): the modules that find them log them under the `fdbu` logger and print nothing.

Each note is one whole line at WARNING level. The CLI shows it on stderr as it is (`console_handler`, above any
progress bar); in Python, with no handler configured, logging's last resort writes it to stderr as well.
`logging.getLogger("fdbu").setLevel(logging.ERROR)` silences the notes; a handler on that logger captures them.
`fit` (here, below the CLI, so the notes use it too) fits text to a terminal's width.
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


def _gaps(row: str) -> set:
    """Where a table row may be cut: after two spaces (inside a cell there is at most one, as in "not reached"
    or "[0.1, 0.2]"); a cut is taken only where every row of the table has one."""
    return {p for p in range(2, len(row)) if row[p - 1] == row[p - 2] == " "}


def _fold_table(rows: list[str], width: int) -> list[str]:
    """Table rows wider than `width`, each cut in a gap between cells they all share (so the cut-off cells stay
    under one another, right-aligned ones too), the rest on the following lines, indented four more; rows with no
    shared gap stay as they are."""
    return [line for parts in _fold_rows(rows, width) for line in parts]


def _fold_rows(rows: list[str], width: int) -> list[list[str]]:
    if all(len(r) <= width for r in rows):
        return [[r] for r in rows]
    indent = len(rows[0]) - len(rows[0].lstrip(" "))
    gaps = [_gaps(r) for r in rows]
    cut = next((p for p in range(width, indent + 2, -1) if all(p >= len(r) or p in g for r, g in zip(rows, gaps))),
               None)
    if cut is None:
        return [[r] for r in rows]
    long = [k for k, r in enumerate(rows) if len(r) > cut]
    tails = _fold_rows([" " * (indent + 4) + rows[k][cut:] for k in long], width)
    out = [[r[:cut].rstrip()] if len(r) > cut else [r] for r in rows]
    for k, parts in zip(long, tails):
        out[k] += parts
    return out


def fit(text: str, stream=None) -> str:
    """On a terminal (`stream`: stdout unless named), lines wider than it are fitted to it: prose wraps at spaces
    (indented under its start); a table's rows are cut at a column boundary they share, the rest of each row on the
    line below it, so no cell is split. Everything printed into a pipe or a file stays as it is."""
    if not (stream or sys.stdout).isatty():
        return text
    import re
    import shutil
    import textwrap

    width = max(40, shutil.get_terminal_size((100, 24)).columns)
    out: list[str] = []
    table: list[str] = []

    def flush():
        out.extend(_fold_table(table, width) if table else [])
        table.clear()

    for line in text.split("\n"):
        body = line.lstrip(" ")
        if len(re.findall(r"\S {2,}\S", body)) >= 2:  # a table row: kept with its table
            if table and len(table[0]) - len(table[0].lstrip(" ")) != len(line) - len(body):
                flush()
            table.append(line)
            continue
        flush()
        if len(line) <= width:
            out.append(line)
            continue
        indent = " " * (len(line) - len(body))
        kept = re.sub(r"\[[^\[\]]*\]", lambda m: m.group(0).replace(" ", "\x00"), body)  # an interval stays whole
        out += [w.replace("\x00", " ") for w in textwrap.wrap(kept, width, initial_indent=indent,
                                                               subsequent_indent=indent + "  ",
                                                               break_long_words=False, break_on_hyphens=False)]
    flush()
    return "\n".join(out)
