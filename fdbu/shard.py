"""Shards: a deterministic 1/N of a stage's work, balanced by audio seconds.

Work items are keyed by content (a wav's SHA-256, a transcript's cache key), so the same
file in two trees is one item, and every machine that lists the same trees makes the same
split: items sorted by key are dealt, longest first, to the shard with the fewest audio
seconds so far (ties to the lower shard number). A sharded run only fills the
content-addressed caches; the unsharded command afterwards assembles its outputs from them.
"""
from __future__ import annotations

from typing import Callable, Iterable, TypeVar

T = TypeVar("T")


def split(items: Iterable[T], shards: int, key: Callable[[T], str], weight: Callable[[T], float]) -> list[list[T]]:
    """Every shard's items (each item once, by key), longest-processing-time first."""
    unique = {}
    for item in items:
        unique.setdefault(key(item), item)
    load = [0.0] * shards
    out: list[list[T]] = [[] for _ in range(shards)]
    for k in sorted(unique, key=lambda k: (-weight(unique[k]), k)):
        target = min(range(shards), key=lambda s: (load[s], s))
        out[target].append(unique[k])
        load[target] += weight(unique[k])
    return [sorted(part, key=key) for part in out]


def select(items: Iterable[T], shard: int, shards: int, key: Callable[[T], str],
           weight: Callable[[T], float]) -> list[T]:
    """Shard `shard` of `shards` (checked by `fdbu.config`): its part of `split`."""
    return split(items, shards, key, weight)[shard]


def label(shard: int, shards: int) -> str:
    """How a cache entry records the shard that computed it."""
    return f"{shard}/{shards}"


def listed(labels) -> str:
    """Shard labels in order for the console: '0/4, 1/4, 3/4'."""
    return ", ".join(sorted(labels, key=lambda s: tuple(map(int, s.split("/")))))
