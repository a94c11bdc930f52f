"""The journal of a running `fdbu asr` (`.fdbu-asr.journal` in the tree): what a killed run had written, so the next
keeps it and does the rest."""
from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, cast

from ..common.atomic import open_own, sha256_bytes
from ..errors import FdbuError

if TYPE_CHECKING:
    from .stage import AsrInput


class Journal:
    """What a run of the stage is writing (`.fdbu-asr.journal` in the tree): one line per transcript,
    written before the transcript, with its key and SHA-256. The running stage holds a lock on it.
    A journal nobody holds is a killed run's: its transcripts whose bytes are as recorded are the
    stage's own, and the next run keeps them and does the rest."""

    NAME = ".fdbu-asr.journal"

    def __init__(self, root: Path):
        self.path = Path(root) / self.NAME
        self.fd: int | None = None
        self.written: dict[str, str] = {}  # sample id -> SHA-256 of the transcript this run recorded

    def left_by_a_killed_run(self) -> dict[str, tuple[str, str]]:
        """sample id -> (key, SHA-256) from a killed run; refuses while another run holds the journal."""
        if not self.path.exists() and not self.path.is_symlink():
            return {}
        fd = open_own(self.path, os.O_RDONLY, where="tree")  # a link is refused before the model loads
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except OSError:
                raise FdbuError("tree", self.NAME, "another fdbu asr is writing this tree; wait for it") from None
            with os.fdopen(os.dup(fd), "rb") as f:
                text = f.read().decode("utf-8", errors="replace")
        finally:
            os.close(fd)
        out = {}
        for line in text.splitlines():
            try:
                e = json.loads(line)
                out[e["sample_id"]] = (e["key"], e["sha256"])
            except (ValueError, KeyError, TypeError, RecursionError):
                continue  # a line cut short by the kill
        return out

    def open(self) -> None:
        self.fd = open_own(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644, where="tree")
        fcntl.flock(self.fd, fcntl.LOCK_EX)

    def record(self, job: "AsrInput", data: bytes) -> None:
        self.written[job.id] = sha256_bytes(data)  # what asr.json records for the file
        os.write(cast(int, self.fd), (json.dumps({"sample_id": job.id, "key": job.key,  # open() set it
                                                  "sha256": self.written[job.id]}) + "\n").encode())

    def release(self) -> None:
        """Let go of the lock; the file stays, so a run that failed is continued by the next."""
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)
