"""fdbu: the Full-Duplex-Bench unified scorer.

Data flows tree -> samples (`fdbu.tree`) -> speech segments (`fdbu.vad`) ->
per-sample outcomes (`fdbu.kernels`, via `fdbu.metrics`) -> aggregates
(`fdbu.metrics`) -> report (`fdbu.report`). `fdbu.pipeline` runs that pipeline.
"""

__version__ = "0.1.0"

DEFINITIONS_VERSION = "fdb-v1.0-unified-4"

from .api import Result, SweepResult, score, sweep  # noqa: E402  (the notebook API; see fdbu.api)
from .errors import FdbuError  # noqa: E402

__all__ = ["score", "sweep", "Result", "SweepResult", "FdbuError", "__version__", "DEFINITIONS_VERSION"]
