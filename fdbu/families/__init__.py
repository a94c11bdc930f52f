"""The releases of Full-Duplex-Bench, one folder each: what a release brings (its tasks and subsets, their metric
modules, its settings group and entries, its official scripts' rules, its run layout), declared in its folder's
`__init__` as `FAMILY` (fdbu.family.Family, its `subsets` in the report's order) and registered by the task
registry (`fdbu.tasks.RELEASES`: one line per release). No layer imports a release's folder; the registry is the
only door (tests/test_layers.py).
"""
