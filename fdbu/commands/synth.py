"""`fdbu synth`: registered in `fdbu.registry`, its config in `fdbu.config.store`, its console in `fdbu.cli.consoles`."""
from __future__ import annotations

from typing import TYPE_CHECKING

from pathlib import Path

from .. import registry
from ..registry import CALL, Call

if TYPE_CHECKING:  # the config dataclass its `run` reads (fdbu.config.store)
    from ..config.store import SynthConfig
from .base import Ran


@registry.command("synth")
def run(cfg: SynthConfig, call: Call = CALL) -> Ran:
    """`fdbu synth`: value is the new tree's path."""
    from ..synth.trees import synthesize

    tree = synthesize(Path(cfg.out), n=cfg.n, seed=cfg.seed, system=cfg.system, ineligible=cfg.ineligible,
                      progress=cfg.progress, layout=cfg.layout, family=cfg.family, **cfg.synth_options())
    return Ran(tree, [tree])
