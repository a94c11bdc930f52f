"""`fdbu export`: registered in `fdbu.registry`, its config in `fdbu.config.store`, its console in `fdbu.cli.consoles`."""
from __future__ import annotations

from typing import TYPE_CHECKING

from pathlib import Path

from .. import registry
from ..registry import CALL, Call

if TYPE_CHECKING:  # the config dataclass its `run` reads (fdbu.config.store)
    from ..config.store import ExportConfig
from .base import Ran


@registry.command("export")
def run(cfg: ExportConfig, call: Call = CALL) -> Ran:
    """`fdbu export`: value is the new tree's path."""
    from ..tree.export import export as run

    e = cfg.export
    tree = run(Path(cfg.dataset) if cfg.dataset else None, Path(cfg.outputs) if cfg.outputs else None, Path(cfg.out),
               roots=e.roots, transcripts=e.transcripts, model=e.model, length=e.length, only=e.only,
               progress=cfg.progress, judge=Path(e.judge) if e.judge else None)
    return Ran(tree, [tree])
