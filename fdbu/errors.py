"""One error type for every refusal, so the CLI can print it as one line and exit non-zero."""


class FdbuError(Exception):
    """A refusal that names where the problem is (sample id, file) and what it is.

    `FdbuError(where, file, problem)` reads "where: file: problem"; a single argument is the whole
    message (as libraries that re-raise an exception with a new message construct it).
    """

    def __init__(self, where: str, file: str | None = None, problem: str | None = None):
        self.where = where
        self.file = file
        self.problem = problem
        parts = [one_line(where)] + ([one_line(file)] if file else []) + ([problem] if problem is not None else [])
        super().__init__(": ".join(parts))


def one_line(text) -> str:
    """A path or name as it is shown in a one-line error: a newline in a folder name is written `\\n`."""
    return str(text).replace("\r", "\\r").replace("\n", "\\n")


def short(value) -> str:
    """A value for a message: huge integers by their size, long structures cut."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**18:
        return f"an integer of {len(str(abs(value)))} digits"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
