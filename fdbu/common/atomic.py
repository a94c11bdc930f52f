"""Files as fdbu writes and reads them: atomic output (an interrupted run leaves the old file or the new one, never
half of one), never through a final link, and nothing but a regular file read."""
import errno
import hashlib
import stat
import json
import os
import tempfile
from pathlib import Path


def dumps(obj) -> str:
    """The one JSON encoding fdbu writes: stable key order as built, no NaN, trailing newline."""
    return json.dumps(obj, indent=2, allow_nan=False, ensure_ascii=False) + "\n"


def umask_mode(mode: int = 0o666) -> int:
    """What an ordinary open() would have given: temporary files start private (0600)."""
    current = os.umask(0)
    os.umask(current)
    return mode & ~current


def open_own(path, flags: int, mode: int = 0o644, where: str = "output") -> int:
    """os.open for a file fdbu writes, appends to or locks, never through a final symbolic link (O_NOFOLLOW):
    a link there (even a dangling one) is refused by name instead of writing, or creating, its target."""
    from ..errors import FdbuError

    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK, mode)  # a FIFO would block the open itself
    except OSError as e:
        if e.errno not in (errno.ELOOP, errno.ENXIO):
            raise
        if e.errno == errno.ENXIO:  # a FIFO opened for writing with no reader
            raise FdbuError(where, Path(path).name, f"is a FIFO (named pipe), not a regular file ({path})") from None

        try:
            target = os.readlink(path)
        except OSError:
            target = "?"
        raise FdbuError(where, Path(path).name, f"is a symbolic link ({path} -> {target}); fdbu writes no file "
                        "through a link: remove it and run again") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise FdbuError(where, Path(path).name, f"is not a regular file ({path}); fdbu writes only regular files")
    os.set_blocking(fd, True)
    return fd


def write_bytes(path: Path, data: bytes) -> None:
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, umask_mode())
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text(path: Path, text: str) -> None:
    write_bytes(path, text.encode("utf-8"))


def write_json(path: Path, obj) -> None:
    write_text(path, dumps(obj))


def regular_bytes(path: Path) -> bytes | None:
    """The bytes of the regular file at `path` (after links), or None where something else is there (a FIFO, a
    folder, a device): opened without blocking and checked on the open file, so the read never waits on a FIFO's
    writer, not even one put there after a check. OSError as opening it raises (FileNotFoundError: nothing there)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read()
    finally:
        os.close(fd)


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def written_by_fdbu(path: Path) -> bool:
    """True when `path` is a JSON object fdbu wrote (`"generator": "fdbu"`), so it may be replaced."""
    try:
        return json.loads(Path(path).read_bytes()).get("generator") == "fdbu"
    except (ValueError, AttributeError, OSError):
        return False


FILE_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
         (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


def kind_of(mode: int) -> str | None:
    """What a path's mode says is there instead of a regular file (None: a regular file)."""
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in FILE_KINDS if test(mode)), "not a regular file")


def regular(path: Path, where: str, file: str) -> None:
    """Refuse anything but a regular file (after links) before it is opened: reading a FIFO or a
    device would block or never end. Raises OSError (FileNotFoundError) as opening it would."""
    kind = kind_of(os.stat(path).st_mode)
    if kind is not None:
        from ..errors import FdbuError

        raise FdbuError(where, file, f"is {kind}, not a regular file ({path})")
