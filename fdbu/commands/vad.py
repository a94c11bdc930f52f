"""`fdbu vad`: registered in `fdbu.registry`, its config in `fdbu.config`, its console in `fdbu.cli`."""
from __future__ import annotations


from .. import registry
from .base import Ran, make_detector


@registry.command("vad")
def run(cfg, cores: int | None = None) -> Ran:
    """`fdbu vad`: speech probabilities into the cache, for score and sweep to assemble from."""
    from ..shard import label
    from ..vad import stage

    detector = make_detector(cfg, shard=label(cfg.shard, cfg.shards) if cfg.sharded else None, cores=cores)
    rules = [cfg.vad.settings().rule] + ([p.rule for p in cfg.sweep.points()] if cfg.for_sweep else [])
    return Ran(None, lines=[stage.run(cfg.roots(), detector, rules, cfg.shard, cfg.shards, tuple(cfg.views)), detector.stats.line()])
