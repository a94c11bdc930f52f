"""`fdbu vad`: speech probabilities of every output a task runs Silero on, into the cache.

The stage a cluster shards: each run takes its shard of the trees' files (`fdbu.scoring.shard`), computes
their window probabilities, runs the guard (and the sentinel) for the settings `fdbu score` (and,
with `for_sweep`, every point of `fdbu sweep`) will use, and leaves the results in the shared
probability cache. The unsharded `fdbu score` or `fdbu sweep` then assembles from the cache and
computes nothing that is there. Only manifest.json and the shard's own wavs are read (each hash-checked: a shard
picks its files by the SHA-256 the manifest lists, so its start-up does not grow with the tree).
"""
from __future__ import annotations

from pathlib import Path
from typing import cast

from ..common import faults
from ..common.audio import seconds_of
from ..scoring.shard import select
from ..tree.load import hashed, read_manifest
from .detect import Job, SpeechDetector


def jobs(roots: list[Path], views: tuple[str, ...] = ()) -> list[Job]:
    """Every file Silero runs on (Task.detected: output.wav; for v1.5 also clean_output.wav) of every eligible sample
    whose task detects speech, in every tree; and the output.wav a view of `views` segments where its task does not
    (fdbu.views: VideoFDB's stay-silent on the pause subsets). Each job's SHA-256 is the manifest's, not yet checked
    against the file (`checked`)."""
    from ..views import segmented  # numpy and the kernels, which this stage loads anyway

    out = []
    for root in roots:
        m = read_manifest(root)
        for s in m.samples:
            own = s.kind.speech_detection
            if s.eligible and (own or (bool(views) and segmented(views, s.kind.name))):
                for file in s.kind.detected if own else ("output.wav",):
                    digest = m.files[s.sample_id].get(file)
                    out.append(Job(s.sample_id, s.folder / file, cast(str, digest), s.samples_of(file), file, root))
    return out


def checked(jobs: list[Job]) -> list[Job]:
    """The jobs, each file's bytes checked against the SHA-256 manifest.json lists (a missing digest refused)."""
    for j in jobs:
        hashed(j.path, j.where, j.file, j.sha256, "manifest.json", cast(Path, j.root))
    return jobs


def run(roots: list[Path], detector: SpeechDetector, rules, part: tuple[int, int] = (0, 1),
        views: tuple[str, ...] = ()) -> str:
    """Fill the cache with the files of shard `part` (k of n); returns the shard's one-line report."""
    shard, shards = part
    mine = checked(select(jobs(roots, views), shard, shards, key=lambda j: j.sha256 or "", weight=lambda j: j.samples))
    faults.point(f"vad:shard:{shard}")
    detector.fill_cache(mine, rules)
    st = detector.stats
    return (f"shard {shard}/{shards}: {len(mine)} files, {seconds_of(sum(j.samples for j in mine)):.0f} s of audio: "
            f"{st.computed} computed, {st.cache_hits} already cached, {st.recomputed} recomputed by the guard, "
            f"{st.verified} verified")
