"""fdbu: the Full-Duplex-Bench unified scorer.

Data flows tree -> samples (`fdbu.tree.load`) -> speech segments (`fdbu.vad`) ->
per-sample outcomes (`fdbu.kernels`, via `fdbu.metrics`) -> aggregates
(`fdbu.metrics`) -> outputs (`fdbu.scoring.unified`). `fdbu.scoring.pipeline` runs that pipeline. The
notebook API is `fdbu.score`, `fdbu.sweep`, `fdbu.compare` and `fdbu.report` (`fdbu.api`); no module is named
like them, so they stay the functions.
"""

from .errors import FdbuError
from .version import DEFINITIONS_VERSION, __version__

_API = ("score", "sweep", "compare", "report", "Result", "SweepResult", "CompareResult")


def __getattr__(name: str):
    """The notebook API, imported on first use: `import fdbu` (and so `fdbu --help`) loads no torch,
    numba or NeMo until a function needs them, and the CLI can catch Ctrl-C from its first moment."""
    if name in _API:
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'fdbu' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The API is loaded on first use, yet listed: `dir(fdbu)` and tab completion show it."""
    return sorted(set(globals()) | set(_API))


__all__ = ["score", "sweep", "compare", "report", "Result", "SweepResult", "CompareResult", "FdbuError", "__version__",
           "DEFINITIONS_VERSION"]
