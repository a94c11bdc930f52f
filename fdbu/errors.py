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
        parts = [where] + ([file] if file else []) + ([problem] if problem is not None else [])
        super().__init__(": ".join(parts))
