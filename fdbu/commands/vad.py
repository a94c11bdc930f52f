"""`fdbu vad`: registered in `fdbu.registry`, its config in `fdbu.config.store`, its console in `fdbu.cli.consoles`."""
from __future__ import annotations

from typing import TYPE_CHECKING


from .. import registry
from ..registry import CALL, Call

if TYPE_CHECKING:  # the config dataclass its `run` reads (fdbu.config.store)
    from ..config.store import VadStageConfig
from .base import Ran, make_detector


@registry.command("vad")
def run(cfg: VadStageConfig, call: Call = CALL) -> Ran:
    """`fdbu vad`: speech probabilities into the cache, for score and sweep to assemble from."""
    from ..scoring.shard import label
    from ..vad import stage

    detector = make_detector(cfg, shard=label(cfg.shard, cfg.shards) if cfg.sharded else None, cores=call.cores)
    rules = [cfg.vad.settings().rule] + ([p.rule for p in cfg.sweep.points()] if cfg.for_sweep else [])
    return Ran(None, lines=[stage.run(cfg.roots(), detector, rules, (cfg.shard, cfg.shards), tuple(cfg.views)), detector.stats.line()])
