"""A command's outputs, written as one unit: checked before the work, moved in together after it.

`Outputs(out, command, names, head)` is made before any work: `out` (or its nearest existing
folder) must be a writable folder, no target may be a folder, and files that are there already
may be replaced only when `head` (the command's JSON header file) is there and fdbu wrote it.
After the work, `commit({name: bytes})` writes every file into a staging folder inside `out`,
marks it complete (`COMMIT`, fsynced with its folder, so a power loss leaves it whole or absent),
then renames each file into place. A run killed before the mark leaves only its staging folder,
which the next run removes; a run killed after it leaves a complete staging folder, which the
next run (or any fdbu command reading `out`, `recover`) finishes moving in. Recovery moves only
the files the command's registry entry names (`fdbu.registry`, so the writer imports no command); a
COMMIT that lists anything else, or cannot be read, is refused, touching nothing. A staging folder's owner holds a lock on it, so a run never touches
the staging folder of a run still going.
"""
from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import tempfile
from pathlib import Path

from . import faults
from .atomic import open_own, umask_mode, written_by_fdbu
from ..errors import FdbuError
from .log import note
from ..registry import COMMANDS

STAGING = ".fdbu-staging-"
COMMIT = "COMMIT"
LOCK = "LOCK"


def writable_folder(path: Path, what: str) -> Path:
    """The nearest existing folder at or above `path`, checked writable by creating a file in it."""
    probe = Path(path)
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if not probe.is_dir():
        raise FdbuError("output", None, f"{what} {path}: {probe} is not a folder")
    try:
        with tempfile.TemporaryFile(dir=probe):
            pass
    except OSError as e:
        raise FdbuError("output", None, f"{what} {path}: cannot write in {probe} ({e.strerror})") from None
    return probe


def _locked(folder: Path) -> bool:
    """True when a live run holds the staging folder's lock."""
    try:
        fd = os.open(folder / LOCK, os.O_RDWR | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except OSError:
        return True
    finally:
        os.close(fd)


def _stopped(out: Path):
    """(staging folder, complete) of each run stopped while writing into `out` (fdbu's: it holds a LOCK file;
    no live run holds it)."""
    for staging in sorted(Path(out).glob(STAGING + "*")):
        if staging.is_dir() and (staging / LOCK).is_file() and not _locked(staging):
            yield staging, (staging / COMMIT).is_file()


def _committed(staging: Path) -> list[str]:
    """The names a complete staging folder's COMMIT lists, checked: outputs of the command that wrote it, each
    a file in the folder or already moved. Anything else (an empty or torn COMMIT, a name outside the outputs)
    is refused before anything is moved, saying which folder to delete."""
    command = staging.name[len(STAGING):].split("-")[0]
    try:
        names = json.loads((staging / COMMIT).read_bytes())
        problem = None
    except (OSError, ValueError, RecursionError) as e:
        names, problem = None, f"cannot be read ({getattr(e, 'strerror', None) or type(e).__name__})"
    owner = COMMANDS.get(command)
    if problem is None and not (isinstance(names, list) and names and len(set(map(str, names))) == len(names)
                                and owner is not None and all(isinstance(n, str) and owner.owns(n) for n in names)):
        problem = (f"lists {str(names)[:60]!r}, not outputs of fdbu {command} "
                   f"({', '.join(owner.writes) if owner and owner.writes else 'none'})")
    if problem is None:
        odd = next((n for n in names if (staging / n).is_symlink() or
                    ((staging / n).exists() and not (staging / n).is_file())), None)
        problem = None if odd is None else f"lists {odd}, which is not a file in the folder"
    if problem:
        raise FdbuError("output", None, f"{staging / COMMIT} {problem}; nothing was moved: delete the folder "
                        f"{staging} (what a stopped run left) and run again")
    return names


def interrupted(out: Path) -> str | None:
    """The staging folder of a run stopped while moving its outputs into `out` (some files new,
    some old), if there is one: a reader refuses the folder until a writing run finishes the move."""
    return next((staging.name for staging, complete in _stopped(out) if complete), None)


def recover(out: Path) -> list[str]:
    """Finish or remove what killed runs left in `out`; returns what was done, for the console."""
    out = Path(out)
    done: list[str] = []
    if not out.is_dir():
        return done
    for staging, complete in _stopped(out):
        if complete:
            names = _committed(staging)
            for name in names:
                if (staging / name).exists():
                    os.replace(staging / name, out / name)
            done.append(f"finished moving in {', '.join(names)} from a run that was stopped after writing them")
        else:
            done.append(f"removed {staging.name}, left by a run that was stopped before its outputs were complete")
        shutil.rmtree(staging, ignore_errors=True)
    return done


class Outputs:
    def __init__(self, out: Path, command: str, names: list[str], head: str | None = None):
        self.out, self.command, self.names, self.head = Path(out), command, list(names), head
        stray = [n for n in self.names if not (command in COMMANDS and COMMANDS[command].owns(n))]
        if stray:  # a name the registry does not declare could never be recovered after a stop
            raise ValueError(f"{stray} are not among fdbu {command}'s outputs in fdbu.registry")
        writable_folder(self.out, "out=")
        for name in self.names:
            if (self.out / name).is_dir():
                raise FdbuError("output", name, f"{self.out / name} is a folder; {command} writes a file there")
        self.notes = recover(self.out)
        present = [n for n in self.names if (self.out / n).exists()]
        if present and head is not None and not ((self.out / head).is_file() and written_by_fdbu(self.out / head)):
            raise FdbuError("output", present[0], f"{self.out} already holds {present[0]} not written by fdbu "
                            f"{command}; move it away or pass out=DIR")

    def report(self, written: list[Path]) -> list[str]:
        """The console's last lines: what was finished or removed for stopped runs, and what was written."""
        return [*self.notes, "wrote " + ", ".join(map(str, written))]

    def path(self, name: str) -> Path:
        return self.out / name

    def commit(self, files: dict[str, bytes]) -> list[Path]:
        """Move every file in at once (names in `files` must be among those announced)."""
        unknown = set(files) - set(self.names)
        if unknown:
            raise ValueError(f"outputs not announced: {sorted(unknown)}")
        try:
            self.out.mkdir(parents=True, exist_ok=True)
            staging = Path(tempfile.mkdtemp(prefix=STAGING + self.command + "-", dir=self.out))
        except OSError as e:
            raise FdbuError("output", None, f"cannot write in {self.out}: {e.strerror or e}") from None
        lock = _lock(staging)
        try:
            for name, data in files.items():
                fd = os.open(staging / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, umask_mode())
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
                    f.flush()
                    os.fsync(f.fileno())
                faults.point(f"{self.command}:staged:{name}")
            names = list(files)
            _durable(staging / COMMIT, json.dumps(names).encode())  # on disk before it counts
            for k, name in enumerate(names):
                os.replace(staging / name, self.out / name)
                faults.point(f"{self.command}:moved:{k}")
        except BaseException as e:
            committed = (staging / COMMIT).exists()
            if not committed:
                shutil.rmtree(staging, ignore_errors=True)
            elif isinstance(e, KeyboardInterrupt):
                raise KeyboardInterrupt(f"some outputs in {self.out} are new, some old; they are complete in "
                                        f"{staging.name}, which the next fdbu {self.command} there moves in "
                                        "(fdbu compare refuses the folder until then)") from None
            if isinstance(e, OSError):  # a full disk, a file size limit, an I/O error
                state = (f"they are complete in {staging.name}, which the next fdbu run moves in" if committed
                         else "no file there was changed")
                raise FdbuError("output", None, f"cannot write the outputs in {self.out}: {e.strerror or e}; "
                                f"{state}") from None
            raise
        finally:
            os.close(lock)
        shutil.rmtree(staging, ignore_errors=True)
        return [self.out / n for n in files]


def _durable(path: Path, data: bytes) -> None:
    """`data` at `path`, written and fsynced under a temporary name, renamed, and the folder fsynced: after a
    power loss the file is either absent or whole."""
    tmp = path.with_name(path.name + ".tmp")
    fd = open_own(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, umask_mode(), where=str(path.parent))
    with os.fdopen(fd, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    folder = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)


def _lock(folder: Path) -> int:
    fd = open_own(folder / LOCK, os.O_RDWR | os.O_CREAT, 0o600, where=str(folder))
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def leftovers(out: Path) -> list[Path]:
    """Temporary folders of killed runs that were building `out` (not those of a run still going)."""
    out = Path(out)
    if not out.parent.is_dir():
        return []
    return [p for p in sorted(out.parent.glob(f".{out.name}.*.fdbu-new"))
            if p.is_dir() and (p / LOCK).exists() and not _locked(p)]


@contextlib.contextmanager
def new_folder(out: Path, command: str):
    """Build a new folder in a temporary one beside `out`, renamed into place at the end, so `out`
    appears whole or not at all. An existing `out` is refused (`command` writes new folders only);
    what a killed run left beside it is removed first, and said in a note (`fdbu.common.log`)."""
    out = Path(out)
    writable_folder(out.parent, "out=")
    if out.exists():
        raise FdbuError("output", None, f"{out} already exists; {command} writes a new tree only")
    for old in leftovers(out):
        shutil.rmtree(old, ignore_errors=True)
        note(f"fdbu: note: removed {old.name}, left beside {out.name} by a {command} run that was stopped")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".fdbu-new", dir=out.parent))
    lock = _lock(tmp)
    try:
        tmp.chmod(umask_mode(0o777))
        yield tmp
        faults.point(command.removeprefix("fdbu ") + ":complete")  # whole, not yet in place
        (tmp / LOCK).unlink()
        tmp.rename(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        os.close(lock)
