"""Batched loading of output.wav files, overlapping disk and decode with compute.

Batches are bounded by total audio seconds, so memory stays flat however many files a
job scores; the next batch is read on a background thread while the current one runs.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Iterator

import numpy as np

from ..common.audio import SAMPLE_RATE, read_wav


def batches(jobs: list[tuple[str, Path, int]], batch_seconds: float, sample_rate: int = SAMPLE_RATE
            ) -> Iterator[list[tuple[int, np.ndarray]]]:
    """jobs: (where, path, samples). Yields [(job index, audio)] batches of at most batch_seconds
    of audio (at least one file each), reading the next batch while the caller works."""
    limit = max(1, int(batch_seconds * sample_rate))
    groups: list[list[int]] = []
    current: list[int] = []
    size = 0
    for i, (_, _, n) in enumerate(jobs):
        if current and size + n > limit:
            groups.append(current)
            current, size = [], 0
        current.append(i)
        size += n
    if current:
        groups.append(current)

    def load(group):
        return [(i, read_wav(jobs[i][1], jobs[i][0], sample_rate)) for i in group]

    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = pool.submit(load, groups[0]) if groups else None
        for k in range(len(groups)):
            assert pending is not None  # groups[k] was submitted on the previous step
            batch = pending.result()
            pending = pool.submit(load, groups[k + 1]) if k + 1 < len(groups) else None
            yield batch
