"""One error type for every refusal, so the CLI can print it as one line and exit non-zero."""


class FdbuError(Exception):
    """A refusal that names where the problem is (sample id, file) and what it is."""

    def __init__(self, where: str, file: str | None, problem: str):
        self.where = where
        self.file = file
        self.problem = problem
        parts = [where] + ([file] if file else []) + [problem]
        super().__init__(": ".join(parts))
