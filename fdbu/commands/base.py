"""What every command shares: `Ran` (what a command gives back), the speech detector its config asks for,
the bootstrap, writing its files as one unit, and the scored systems compare and report read."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..common.cachedir import VAD_PROBS


@dataclass
class Ran:
    """What a command computed (`value`), the files it wrote, and the lines the console shows after
    its result (detector statistics, stopped runs finished or removed, what was written)."""

    value: Any
    written: list = field(default_factory=list)
    lines: list = field(default_factory=list)
    column: str | None = None          # score: the reference column, when asked for
    disagreements: list = field(default_factory=list)  # evaluate: official scripts that differ from fdbu


def make_detector(cfg, backend: str | None = None, shard: str | None = None, cores: int | None = None):
    """The speech detector a command's config asks for: Silero settings plus how to compute them (`cores`: the
    threads when vad.threads leaves them open, as a launcher's share of the machine)."""
    from ..vad import SpeechDetector

    vad = cfg.vad
    threads = vad.threads if vad.threads is not None else cores
    return SpeechDetector(vad.settings(), backend=backend or vad.backend, device=cfg.device, cache=vad.cache,
                          cache_dir=cfg.cache_root() / VAD_PROBS, verify=vad.verify, threads=threads,
                          batch_seconds=vad.batch_seconds, progress=cfg.progress, shard=shard,
                          require_cached=vad.require_shards and shard is None)


def bootstrap(cfg):
    from ..metrics.stats import Bootstrap

    return Bootstrap(cfg.bootstrap.resamples, cfg.bootstrap.seed)


def commit(outputs, files: dict) -> tuple[list, list]:
    """Write a command's files as one unit: (files written, the console's lines about them)."""
    if outputs is None:
        return [], []
    written = outputs.commit(files)
    return written, outputs.report(written)


def load_systems(cfg) -> list:
    """The scored trees of compare or report, read and checked, with their names."""
    from ..comparison.systems import load

    return [load(Path(t), name) for t, name in zip(cfg.trees, cfg.system_names())]


def compare_systems(cfg, systems: list, options, pairs: str = "baseline") -> dict:
    """compare.json of `systems` as `options` (a `PairingOptions`) ask."""
    from ..comparison.pairwise import compare as run

    return run(systems, baseline=cfg.baseline, pairs=pairs, allow_different_samples=options.allow_different_samples,
               allow_mixed_transcripts=options.allow_mixed_transcripts, alpha=options.level(), family=options.holm_family(), progress=cfg.progress)
