"""Can the unprivileged user the permission tests run fdbu as reach what fdbu needs?

As root, a permission error is only met by running fdbu as another user (`setpriv --reuid 65534`).
That user needs to enter every folder above the interpreter, the installed packages and the test's
own files. A checkout inside a folder only its owner may enter (mode 0700: what `mktemp -d` makes,
and root's home) fails that for a reason unrelated to the refusal under test, so those tests skip
naming the folder instead of failing.
"""
from __future__ import annotations

import contextlib
import functools
import os
import shutil
import stat
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

NOBODY = 65534  # uid and gid of `nobody` / `nogroup`; setpriv runs with --clear-groups


def _can_enter(st: os.stat_result, uid: int, gid: int) -> bool:
    """Search permission on a folder for a user with no supplementary groups (owner, else group,
    else other bits: the kernel's order, which never falls through)."""
    if st.st_uid == uid:
        return bool(st.st_mode & stat.S_IXUSR)
    if st.st_gid == gid:
        return bool(st.st_mode & stat.S_IXGRP)
    return bool(st.st_mode & stat.S_IXOTH)


def blocking_folder(path: Path, uid: int = NOBODY, gid: int = NOBODY) -> Path | None:
    """The first folder above `path` (as written, and with links resolved) that the user cannot
    enter, or None."""
    path = Path(os.path.abspath(path))
    for chain in (path, Path(os.path.realpath(path))):
        for folder in [*reversed(chain.parents), *([chain] if chain.is_dir() else [])]:
            try:
                st = folder.stat()
            except OSError:
                return folder
            if not _can_enter(st, uid, gid):
                return folder
    return None


def needed() -> list[tuple[str, Path]]:
    """What a `setpriv ... fdbu` run opens before it reads any argument: the interpreter,
    site-packages and the fdbu package itself (an editable install lives in the
    checkout)."""
    import fdbu
    import fdbu.kernels

    return [("the interpreter", Path(sys.executable)), ("site-packages", Path(sysconfig.get_paths()["purelib"])),
            ("the fdbu package", Path(fdbu.__file__)), ("fdbu's kernels", Path(fdbu.kernels.__file__))]


def _existing(path: Path) -> Path:
    """The path, or its nearest existing folder (an out= the run would create)."""
    path = Path(os.path.abspath(path))
    return next(p for p in [path, *path.parents] if p.exists())


def _as(uid: int, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["setpriv", "--reuid", str(uid), "--regid", str(uid), "--clear-groups",
                          sys.executable, *args], capture_output=True, text=True, cwd="/")


@functools.lru_cache(maxsize=None)
def _starts(uid: int) -> bool:
    """Whether fdbu's interpreter imports fdbu and its heavy dependencies for the user: asked of
    the user itself, since only the kernel knows (a sandbox, ACLs, an interpreter that falls back
    to another standard library)."""
    return _as(uid, "-c", "import fdbu.kernels, fdbu.cli.main, torch, numba").returncode == 0


def unreachable(*extra: Path, uid: int = NOBODY) -> str | None:
    """Why uid cannot run fdbu on the given paths, in one line naming the folder and its mode; None
    when it can."""
    if _starts(uid):
        paths = [_existing(p) for p in extra]
        code = "import os, sys; print('\\n'.join(p for p in sys.argv[1:] if not os.access(p, os.F_OK)))"
        missed = _as(uid, "-S", "-c", code, *map(str, paths)).stdout.splitlines()
        blocked = [("the test's files", p) for p in paths if str(p) in missed]
    else:
        blocked = [(w, p) for w, p in needed() if blocking_folder(p, uid)] or needed()[:1]
    if not blocked:
        return None
    what, path = blocked[0]
    folder = blocking_folder(path, uid) or path
    try:
        mode = f"mode {stat.S_IMODE(folder.stat().st_mode):04o}"
    except OSError as e:
        mode = f"unreadable: {e.strerror}"
    return (f"{what} ({path}) is under {folder} ({mode}), which uid {uid} cannot enter: the permission "
            f"tests run fdbu as that user and need it to reach the checkout")


@contextlib.contextmanager
def public_folder(prefix: str):
    """A temporary folder every user may enter (pytest's own is private to its owner), for runs as nobody;
    removed afterwards, whatever modes a test left inside it."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    path.chmod(0o755)
    try:
        yield path
    finally:
        for p in [path, *path.rglob("*")]:
            if p.is_dir() and not p.is_symlink():
                p.chmod(0o755)
        shutil.rmtree(path, ignore_errors=True)
