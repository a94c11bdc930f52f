"""On-disk cache of Silero window probabilities, keyed by what they depend on.

An entry is one file: a JSON header line, then the float32 probabilities. The header
repeats the key (wav SHA-256, silero-vad version, model SHA-256), says whether the
probabilities are the reference path's own (`exact`) or the batched backend's (with the guard
margin calibrated for the device that computed them, and that calibration's key; a batched
entry whose first windows the guard recomputed says how many, `exact_windows`), and holds
the SHA-256 of the payload. The guard uses each entry's own margin, so entries computed on
another device stay exact when a cache is shared. Anything that does not match,
cannot be parsed or is truncated is treated as missing and recomputed, never trusted.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..common.atomic import regular_bytes, sha256_bytes, write_bytes
from ..common.cachedir import VAD_PROBS, cache_root
from ..common.outputs import writable_folder

FORMAT = "fdbu-vad-probs-1"


def default_dir() -> Path:
    return cache_root() / VAD_PROBS


@dataclass
class Entry:
    probs: np.ndarray  # float32, one per 512-sample window
    exact: bool        # computed by the reference path
    margin: float | None = None       # batched: the guard margin of the device that computed them
    calibration: str | None = None    # batched: that device's calibration key
    by: str | None = None             # the shard that computed it ("3/16"), if a sharded run did
    fresh: bool = False               # computed by this run (not stored)
    exact_windows: int = 0            # batched: its first windows are the reference path's (the guard's prefix)

    @property
    def guarded(self) -> bool:
        """Usable by the guard: exact, or batched with a margin in (0, 0.5)."""
        return self.exact or (isinstance(self.margin, float) and 0 < self.margin < 0.5)


class ProbabilityCache:
    def __init__(self, root: Path, silero_version: str, model_sha256: str):
        self.root = Path(root)
        self.version = silero_version
        self.model = model_sha256
        self.rejected = 0
        writable_folder(self.root, "cache_dir")  # a cache that cannot be kept is refused before any work

    def _path(self, wav_sha256: str) -> Path:
        return self.root / wav_sha256[:2] / f"{wav_sha256}.probs"

    def _key(self, wav_sha256: str) -> dict:
        return {"format": FORMAT, "wav_sha256": wav_sha256, "silero_vad_version": self.version,
                "model_sha256": self.model}

    def get(self, wav_sha256: str, frames: int) -> Entry | None:
        path = self._path(wav_sha256)
        try:
            data = regular_bytes(path)
        except OSError:
            return None
        if data is None:  # a FIFO would block the read forever: recomputed
            self.rejected += 1
            return None
        try:
            head, payload = data.split(b"\n", 1)
            header = json.loads(head)
            ok = (all(header.get(k) == v for k, v in self._key(wav_sha256).items())
                  and header.get("frames") == frames and len(payload) == 4 * frames
                  and header.get("payload_sha256") == sha256_bytes(payload) and isinstance(header.get("exact"), bool))
        except (ValueError, AttributeError, RecursionError):
            ok = False
        if not ok:
            self.rejected += 1
            return None
        margin = header.get("margin")
        text = {k: header.get(k) if isinstance(header.get(k), str) else None for k in ("calibration", "by")}
        prefix = header.get("exact_windows", 0)
        prefix = prefix if isinstance(prefix, int) and not isinstance(prefix, bool) and 0 <= prefix <= frames else 0
        return Entry(np.frombuffer(payload, "<f4").copy(), header["exact"],
                     float(margin) if isinstance(margin, (int, float)) and not isinstance(margin, bool) else None,
                     text["calibration"], text["by"], exact_windows=prefix)

    def put(self, wav_sha256: str, entry: Entry) -> bool:
        """Store an entry; a path that cannot take it (a folder in its place) only costs the caching."""
        payload = np.ascontiguousarray(entry.probs, "<f4").tobytes()
        header = {**self._key(wav_sha256), "frames": len(entry.probs), "exact": entry.exact, "margin": entry.margin,
                  "calibration": entry.calibration, "by": entry.by, "payload_sha256": sha256_bytes(payload)}
        if entry.exact_windows and not entry.exact:  # (absent otherwise: a reader before it guards every window)
            header["exact_windows"] = entry.exact_windows
        path = self._path(wav_sha256)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_bytes(path, json.dumps(header).encode() + b"\n" + payload)
            return True
        except OSError:  # a full or read-only cache: the entry is computed again next time
            return False
