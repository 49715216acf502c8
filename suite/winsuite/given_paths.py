"""Paths a user gave (flags, job fields, the environment), looked at without a traceback: what is there, or one line
naming the path and why it cannot be read (a directory that cannot be entered, a name or a path longer than the
file system allows, a symlink loop)."""

from __future__ import annotations

import enum
import errno
import os
import stat
from pathlib import Path

from winsuite.errors import UsageError

SHOWN_CHARS = 200  # a path longer than this is shown by its head and tail: one line still names the file
NAME_MAX = 255  # bytes in one name, where the file system cannot say (ext4, xfs, btrfs, tmpfs)
PATH_MAX = 4096  # bytes in a whole path (Linux)


class Found(enum.Enum):
    MISSING = "missing"
    FILE = "file"
    DIRECTORY = "directory"
    OTHER = "other"  # a FIFO, a socket, a device


def shown(path: Path | str) -> str:
    """The path as one line shows it: whole, or its head and tail around an ellipsis when it is very long."""
    text = str(path)
    if len(text) <= SHOWN_CHARS:
        return text
    half = SHOWN_CHARS // 2
    return f"{text[:half]}…{text[-half:]}"


def why_unreadable(path: Path | str, err: OSError) -> str:
    """Why the path cannot be used, for the person who gave it: more exact than strerror where the kernel's words
    are vague (which name is too long, which directory is closed)."""
    if err.errno == errno.ENAMETOOLONG:
        return _too_long(Path(path))
    if err.errno == errno.EACCES:
        closed = _first_closed_directory(Path(path))
        if closed is not None:
            return f"Permission denied (the directory {shown(closed)} cannot be entered)"
    return err.strerror or type(err).__name__


def probe(path: Path | str, what: str) -> Found:
    """What is at `path` (MISSING when nothing is); UsageError naming the path when it cannot even be looked at."""
    try:
        info = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return Found.MISSING
    except OSError as err:
        raise UsageError(f"cannot read {what} {shown(path)}: {why_unreadable(path, err)}") from None
    except ValueError:  # a NUL byte in the path
        raise UsageError(f"cannot read {what} {str(path)!r}: not a file name (it holds a NUL byte)") from None
    if stat.S_ISREG(info.st_mode):
        return Found.FILE
    if stat.S_ISDIR(info.st_mode):
        return Found.DIRECTORY
    return Found.OTHER


def unreadable(what: str, path: Path | str, err: OSError) -> UsageError:
    """The one-line error for an OSError met while reading a path the user gave."""
    return UsageError(f"cannot read {what} {shown(path)}: {why_unreadable(path, err)}")


def unwritable(what: str, path: Path | str, err: OSError) -> UsageError:
    """The one-line error for an OSError met while creating a path the user gave (a results directory)."""
    return UsageError(f"cannot write {what} to {shown(path)}: {why_unreadable(path, err)}")


def _too_long(path: Path) -> str:
    longest = max(path.parts, key=lambda part: len(os.fsencode(part)), default="")
    name_max = _name_max(path)
    if len(os.fsencode(longest)) > name_max:
        return f"File name too long (a name of {len(os.fsencode(longest))} bytes; the file system allows {name_max})"
    return f"File name too long (a path of {len(os.fsencode(str(path)))} bytes; the system allows {PATH_MAX})"


def _name_max(path: Path) -> int:
    """NAME_MAX of the file system the path would be on: that of its nearest existing directory."""
    for directory in (path, *path.parents):
        try:
            return os.pathconf(directory, "PC_NAME_MAX")
        except (OSError, ValueError):
            continue
    return NAME_MAX


def _first_closed_directory(path: Path) -> Path | None:
    """The first directory on the path this process may not enter (search permission), if one is the reason."""
    absolute = Path(os.path.abspath(path))
    for directory in reversed(absolute.parents):
        try:
            if directory.is_dir() and not os.access(directory, os.X_OK, effective_ids=True):
                return directory
        except OSError:
            return directory
    return None
