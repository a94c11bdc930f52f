"""`fdbu calibrate`: registered in `fdbu.registry`, its config in `fdbu.config.store`, its console in `fdbu.cli.consoles`."""
from __future__ import annotations

from typing import TYPE_CHECKING


from .. import registry
from ..registry import CALL, Call

if TYPE_CHECKING:  # the config dataclass its `run` reads (fdbu.config.store)
    from ..config.store import CalibrateConfig
from ..common.cachedir import CALIBRATION
from .base import Ran, make_detector


@registry.command("calibrate")
def run(cfg: CalibrateConfig, call: Call = CALL) -> Ran:
    """`fdbu calibrate`: value is the `fdbu.vad.calibration.Calibration`; written: where it is stored
    (nothing where the cache is not writable)."""
    detector = make_detector(cfg, backend="batched", cores=call.cores)
    cal = detector.calibration(force=True)
    stored = detector.cache_root / CALIBRATION / f"{cal.key}.json"
    if stored.is_file():
        return Ran(cal, [stored], [f"stored as {stored}"])
    return Ran(cal, [], [f"not stored: {stored.parent} is not writable"])
