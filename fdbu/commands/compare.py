"""`fdbu compare`: registered in `fdbu.registry`, its config in `fdbu.config.store`, its console in `fdbu.cli.consoles`."""
from __future__ import annotations

from typing import TYPE_CHECKING

from pathlib import Path

from .. import registry
from ..registry import CALL, Call

if TYPE_CHECKING:  # the config dataclass its `run` reads (fdbu.config.store)
    from ..config.store import CompareConfig
from .base import Ran, commit, compare_systems, load_systems


@registry.command("compare")
def run(cfg: CompareConfig, call: Call = CALL) -> Ran:
    """`fdbu compare`: value is compare.json as a dict; written only where cfg.out names a folder."""
    from ..comparison.files import files, outputs as compare_outputs

    outputs = compare_outputs(Path(cfg.out), cfg.plot) if call.write and cfg.out is not None else None
    systems = load_systems(cfg)
    result = compare_systems(cfg, systems, cfg.compare, cfg.compare.pairs)
    written, lines = commit(outputs, files(result, systems, cfg.plot, cfg.width, cfg.progress)
                            if outputs is not None else {})
    return Ran(result, written, lines)


@registry.announces("compare")
def names() -> set[str]:
    from ..comparison import files as compare_outputs

    return {n for plot in (True, False) for n in compare_outputs.names(plot)}
