"""fdbu: the Full-Duplex-Bench unified scorer.

Data flows tree -> samples (`fdbu.tree`) -> speech segments (`fdbu.vad`) ->
per-sample outcomes (`fdbu.kernels`, via `fdbu.metrics`) -> aggregates
(`fdbu.metrics`) -> report (`fdbu.report`). `fdbu.score` runs that pipeline.
"""

__version__ = "0.1.0"

DEFINITIONS_VERSION = "fdb-v1.0-unified-4"
