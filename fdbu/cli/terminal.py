"""What a person sees on a terminal: text fitted to its width (prose wrapped, tables cut between their columns),
and the one-line error. Everything printed into a pipe or a file stays as it is."""
from __future__ import annotations

import sys
from typing import NoReturn


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


def teller(command: str, progress: bool):
    """`say(text)` printing "fdbu COMMAND: text" on a terminal with progress on, for the steps that draw no bar (an
    official script running); None into a pipe, a file or with progress=false."""
    if not progress or not sys.stderr.isatty():
        return None
    return lambda text: print(fit(f"fdbu {command}: {text}", sys.stderr), file=sys.stderr, flush=True)


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


def show(*parts: str) -> None:
    """print, fitted to the terminal."""
    print(fit(" ".join(parts)))


def error(message: str, status: int = 2) -> NoReturn:
    print(f"fdbu: error: {message}", file=sys.stderr)
    sys.exit(status)
