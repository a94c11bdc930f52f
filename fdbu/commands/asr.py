"""`fdbu asr`: registered in `fdbu.registry`, its config in `fdbu.config.store`, its console in `fdbu.cli.consoles`."""
from __future__ import annotations

from typing import TYPE_CHECKING

from pathlib import Path
from typing import cast

from .. import registry
from ..registry import CALL, Call

if TYPE_CHECKING:  # the config dataclass its `run` reads (fdbu.config.store)
    from ..config.store import AsrConfig
from ..common.cachedir import ASR
from .base import Ran


@registry.command("asr")
def run(cfg: AsrConfig, call: Call = CALL) -> Ran:
    """`fdbu asr`: transcripts of every tree (or of one shard of their files, into the cache)."""
    from ..asr import stage
    from ..asr.nemo_model import ParakeetASR
    from ..common.device import resolve_device

    a = cfg.asr
    models: list = []
    if call.cores is not None:  # a launcher's share of this machine
        import torch

        torch.set_num_threads(call.cores)

    def model():  # made once, after the trees are checked; its weights load only if something is transcribed
        if not models:
            models.append(ParakeetASR(Path(a.checkpoint) if a.checkpoint else None, model=a.model, sha256=a.sha256,
                                      device=resolve_device(cfg.device), verbose=a.verbose))
        return models[0]

    cache = cfg.cache_root() / ASR if a.cache else None
    if cfg.sharded:
        return Ran(None, lines=[stage.run_shard(cfg.roots(), model, cast(Path, cache), cfg.shard, cfg.shards,
                                                batch_size=a.batch_size, max_batch_seconds=a.max_batch_seconds,
                                                verify=a.verify, progress=cfg.progress)])
    written, lines = [], []
    for root in cfg.roots():
        path, counts = stage.run(root, model, batch_size=a.batch_size, max_batch_seconds=a.max_batch_seconds,
                                 resume=a.resume, cache_dir=cache, verify=a.verify, progress=cfg.progress,
                                 require_shards=a.require_shards)
        written.append(path)
        if "completed" in counts:
            lines.append(f"finished {path}: a stopped run had left all {counts['completed']} transcripts and "
                         "asr.json complete (its journal removed; nothing transcribed)")
            continue
        lines.append(f"wrote {path}: {counts['transcribed']} transcribed, {counts['from_cache']} from the cache"
                     f"{stage.by_shards(counts)}, {counts['kept']} kept{stage.decoding_note(counts)}")
    return Ran(None, written, lines)
