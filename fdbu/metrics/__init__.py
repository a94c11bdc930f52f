"""Stage 3 and 4: per-sample components and their aggregation, one module per task.

Each task module has `components(samples, ...)` (per-sample quantities, computed by
the numba kernels over the whole subset at once) and `aggregate(...)` (components ->
metric records). The metric definitions live in those modules' `METRICS` tables;
`populations(c)` masks the samples each metric is over, `from_rows(rows)` rebuilds the
components from unified-samples.jsonl rows (for `fdbu compare`), and `INPUTS` names the row
fields that come from the dataset. The paired statistics of a comparison are in `paired`.

The task modules (and a family's hooks, `control`) are reached through the task registry (`fdbu.tasks`) only:
no module outside this folder imports one by name (tests/test_layers.py), so a family registers like any other.
This package imports none of them: reading a table or a statistic loads no task.
"""
