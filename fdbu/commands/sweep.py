"""`fdbu sweep`: registered in `fdbu.registry`, its config in `fdbu.config.store`, its console in `fdbu.cli.consoles`."""
from __future__ import annotations

from typing import TYPE_CHECKING

from pathlib import Path

from .. import registry
from ..registry import CALL, Call

if TYPE_CHECKING:  # the config dataclass its `run` reads (fdbu.config.store)
    from ..config.store import _SweepConfig
from .base import Ran, bootstrap, commit, make_detector


@registry.command("sweep")
def run(cfg: _SweepConfig, call: Call = CALL) -> Ran:
    """`fdbu sweep`: value is sweep.json as a dict."""
    from ..scoring.sweep import check_size, files, outputs as sweep_outputs, sweep as run
    from ..tree.load import require

    trees = [Path(t) for t in cfg.trees()]
    if call.write and cfg.out is None and len(trees) > 1:  # where would its outputs go? (computing alone needs none)
        from ..errors import FdbuError

        raise FdbuError("config", None, "out=None: a sweep over several trees needs out=DIR for its outputs")
    for tree in trees:
        require(tree)
    points = cfg.sweep.points()
    check_size(trees, points, cfg.sweep.allow_large, cfg.sweep.subset)
    outputs = sweep_outputs(Path(cfg.out) if cfg.out is not None else trees[0], cfg.plot) if call.write \
        else None
    detector = make_detector(cfg, cores=call.cores)
    result = run(trees, detector, bootstrap(cfg), points, names=cfg.system_names(), subset=cfg.sweep.subset,
                 groups=cfg.group_settings())
    written, lines = commit(outputs, files(result, cfg.plot, cfg.width, cfg.progress) if call.write else {})
    return Ran(result, written, [detector.stats.line(), *lines])


@registry.announces("sweep")
def names() -> set[str]:
    from ..scoring import sweep as sweep_grid

    return {n for plot in (True, False) for n in sweep_grid.names(plot)}
