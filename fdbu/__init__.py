"""fdbu: the Full-Duplex-Bench unified scorer.

Data flows tree -> samples (`fdbu.tree`) -> speech segments (`fdbu.vad`) ->
per-sample outcomes (`fdbu.kernels`, via `fdbu.metrics`) -> aggregates
(`fdbu.metrics`) -> report (`fdbu.report`). `fdbu.score` runs that pipeline.
"""

__version__ = "0.1.0"

DEFINITIONS_VERSION = "fdb-v1.0-unified-4"

import sys as _sys  # noqa: E402
import types as _types  # noqa: E402

from .api import CompareResult, Result, SweepResult, compare, score, sweep  # noqa: E402  (the notebook API)
from .errors import FdbuError  # noqa: E402

_API = ("score", "sweep", "compare")


class _Package(_types.ModuleType):
    """`fdbu.score`, `fdbu.sweep` and `fdbu.compare` stay the API functions: Python binds a submodule on its
    package when it first loads it (fdbu/score.py, ...), which would replace them. Inside fdbu the submodules
    are imported by name (`from .sweep import ...`), never as `from . import sweep`."""

    def __setattr__(self, name, value):
        if name in _API and isinstance(value, _types.ModuleType):
            return
        super().__setattr__(name, value)


_sys.modules[__name__].__class__ = _Package

__all__ = ["score", "sweep", "compare", "Result", "SweepResult", "CompareResult", "FdbuError", "__version__",
           "DEFINITIONS_VERSION"]
