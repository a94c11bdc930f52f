"""`fdbu synth`: registered in `fdbu.registry`, its config in `fdbu.config`, its console in `fdbu.consoles`."""
from __future__ import annotations

from pathlib import Path

from .. import registry
from ..registry import CALL, Call
from .base import Ran


@registry.command("synth")
def run(cfg, call: Call = CALL) -> Ran:
    """`fdbu synth`: value is the new tree's path."""
    from ..synth.trees import synthesize

    tree = synthesize(Path(cfg.out), n=cfg.n, seed=cfg.seed, system=cfg.system, ineligible=cfg.ineligible,
                      interruption_tail_s=tuple(cfg.interruption_tail_s),
                      session_turns=tuple(cfg.session_turns), progress=cfg.progress, layout=cfg.layout,
                      family=cfg.family)
    return Ran(tree, [tree])
