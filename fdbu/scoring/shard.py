"""Shards: a deterministic 1/N of a stage's work, balanced by audio seconds.

Work items are keyed by content (a wav's SHA-256, a transcript's cache key), so the same
file in two trees is one item, and every machine that lists the same trees makes the same
split: items sorted by key are dealt, longest first, to the shard with the fewest audio
seconds so far (ties to the lower shard number). A sharded run only fills the
content-addressed caches; the unsharded command afterwards assembles its outputs from them.
"""
from __future__ import annotations

import heapq
from typing import Callable, Iterable, TypeVar

from ..errors import FdbuError

T = TypeVar("T")


def split(items: Iterable[T], shards: int, key: Callable[[T], str], weight: Callable[[T], float]) -> list[list[T]]:
    """Every shard's items (each item once, by key), longest-processing-time first."""
    unique: dict[str, T] = {}
    for item in items:
        unique.setdefault(key(item), item)
    least = [(0.0, s) for s in range(shards)]  # (audio seconds so far, shard): a heap, so the least loaded shard
    out: list[list[T]] = [[] for _ in range(shards)]  # (ties to the lower number) is found in log(shards) steps
    for k in sorted(unique, key=lambda k: (-weight(unique[k]), k)):
        load, target = least[0]
        out[target].append(unique[k])
        heapq.heapreplace(least, (load + weight(unique[k]), target))
    return [sorted(part, key=key) for part in out]


def select(items: Iterable[T], shard: int, shards: int, key: Callable[[T], str],
           weight: Callable[[T], float]) -> list[T]:
    """Shard `shard` of `shards` (checked by `fdbu.config.store`): its part of `split`."""
    return split(items, shards, key, weight)[shard]


def label(shard: int, shards: int) -> str:
    """How a cache entry records the shard that computed it."""
    return f"{shard}/{shards}"


def listed(labels) -> str:
    """Shard labels in order for the console: '0/4, 1/4, 3/4'."""
    return ", ".join(sorted(labels, key=lambda s: tuple(map(int, s.split("/")))))


def missing(found, computed: int, done_here: str = "computed here") -> str | None:
    """What an assembling run says when it has to do work that shards' caches should have held:
    'shard 3/4 missing (13 files): computed here'. `found` are the shard labels its cache hits name;
    the shards not among them are the missing ones (of each shard count seen)."""
    if not computed or not found:
        return None
    counts = sorted({int(f.split("/")[1]) for f in found})
    absent = [label(k, n) for n in counts for k in range(n) if label(k, n) not in found]
    if not absent:
        return f"{computed} files in no shard's cache: {done_here}"
    return f"shard{'s' if len(absent) > 1 else ''} {listed(absent)} missing ({computed} files): {done_here}"


def refuse_missing(found, todo: int, key: str) -> None:
    """`key`=true (an assembling run that must not compute): refuse when `todo` files are in no cache."""
    if todo:
        what = missing(found, todo, "") or f"{todo} files in no cache"
        raise FdbuError("cache", None, f"{key}=true: {what.rstrip(': ')}; run the missing shard (or leave "
                        f"{key} out to compute them here)")
