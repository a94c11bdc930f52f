"""Stage 3 and 4: per-sample components and their aggregation, one module per task.

Each task module has `components(samples, ...)` (per-sample quantities, computed by
the numba kernels over the whole subset at once) and `aggregate(...)` (components ->
metric records). The metric definitions live in those modules' `METRICS` tables;
`populations(c)` masks the samples each metric is over, `from_rows(rows)` rebuilds the
components from unified-samples.jsonl rows (for `fdbu compare`), and `INPUTS` names the row
fields that come from the dataset. The paired statistics of a comparison are in `paired`.
"""
from . import interruption, overlap, pause, turn_taking

__all__ = ["pause", "turn_taking", "interruption", "overlap"]
