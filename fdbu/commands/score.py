"""`fdbu score`: registered in `fdbu.registry`, its config in `fdbu.config.store`, its console in `fdbu.cli.consoles`."""
from __future__ import annotations

from typing import TYPE_CHECKING

from pathlib import Path

from .. import registry
from ..registry import CALL, Call

if TYPE_CHECKING:  # the config dataclass its `run` reads (fdbu.config.store)
    from ..config.store import _ScoreConfig
from .base import Ran, bootstrap, commit, make_detector


@registry.command("score")
def run(cfg: _ScoreConfig, call: Call = CALL) -> Ran:
    """`fdbu score`: value is the `fdbu.scoring.pipeline.Scored`; for a console (`call.console`), the official rules'
    numbers too (computed before the commit, so they never stop it)."""
    from ..scoring import unified
    from ..scoring.pipeline import score_path
    from ..tree.load import require

    tree = Path(cfg.tree)
    require(tree)  # a wrong tree= is named for what it is, before out= is looked at
    outputs = unified.outputs(Path(cfg.out) if cfg.out is not None else tree, cfg.plot) if call.write else None
    detector = make_detector(cfg, cores=call.cores)
    scored = score_path(tree, detector, bootstrap(cfg), cfg.group_settings(), cfg.view_settings())
    column = None
    if call.console:
        from ..official.summary import reference_column as official_column

        inputs = scored.unified["inputs"]
        column = official_column(tree, inputs["manifest.json"], inputs["asr.json"])
    written, lines = commit(outputs, unified.files(scored, cfg.plot, tree.resolve().name, cfg.width, cfg.progress)
                            if outputs is not None else {})
    unscored = [f"not scored: {name} ({why})" for name, why in scored.unscored.items()]
    return Ran(scored, written, [*unscored, detector.stats.line(), *lines], column=column)


@registry.announces("score")
def names() -> set[str]:
    """Every file score can write: unified.json, its rows and, with plot=true, the figures (a family's too)."""
    from ..scoring import unified

    return {n for plot in (True, False) for n in unified.names(plot)}
