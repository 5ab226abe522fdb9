"""Whose a file is: the checks the package makes before it reads a file it finds on its own
(an instruction file, a ``.env``), so that another user of the machine cannot put words or a
key in front of this user.

A file is this user's when it belongs to them, or to root (who can read everything of theirs
anyway, and owns what ``sudo`` made in their folders). A folder every user can write, without
the sticky bit that stops them replacing each other's files (``/tmp`` has it), lets anyone put
a file there or swap the one that is. Files are opened without blocking (a FIFO would hang the
kernel) and checked by the descriptor, not by the name, so a file swapped between the check
and the read is not read.

Imports nothing of the package.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["not_yours", "open_for_others", "open_regular", "opened_path", "owner", "read_at_most"]

_OPEN = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def owner(uid: int) -> str:
    """``nobody (uid 65534)``: a user as the notices name them."""
    try:
        import pwd

        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except (ImportError, KeyError):
        return f"uid {uid}"


def not_yours(info: os.stat_result) -> str | None:
    """Why the file (or link) ``info`` describes is not this user's, or None when it is."""
    if not hasattr(os, "geteuid") or info.st_uid in (os.geteuid(), 0):
        return None
    return f"it belongs to {owner(info.st_uid)}, not to you"


def open_for_others(folder: Path) -> str | None:
    """Why every user can put a file in ``folder`` or swap the one there (it is writable by
    all and has no sticky bit), or None."""
    try:
        mode = os.stat(folder).st_mode
    except OSError:
        return None
    if mode & stat.S_IWOTH and not mode & stat.S_ISVTX:
        return f"its folder {folder} can be written by every user (mode {stat.S_IMODE(mode):o})"
    return None


def open_regular(path: Path, *, follow: bool) -> tuple[int, os.stat_result] | str | None:
    """A descriptor open for reading on ``path`` and its ``fstat``; else why not (a FIFO, a
    folder, an error), or None when there is no such file. ``follow=False``: a link as the last
    component is refused (``O_NOFOLLOW``). The caller closes the descriptor
    (:func:`read_at_most` does)."""
    try:
        fd = os.open(path, _OPEN | (0 if follow else _NOFOLLOW))
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:  # ELOOP: a link where none may be (made one since it was resolved)
        return f"cannot be opened ({type(exc).__name__})"
    try:
        info = os.fstat(fd)
    except OSError as exc:
        os.close(fd)
        return f"cannot be opened ({type(exc).__name__})"
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        return "not a regular file"
    return fd, info


def opened_path(fd: int) -> Path | None:
    """Where the open descriptor's file really is (Linux's ``/proc/self/fd``), or None where the
    system does not say."""
    try:
        return Path(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:
        return None


def read_at_most(fd: int, limit: int) -> bytes:
    """Up to ``limit`` bytes from the descriptor, which is then closed."""
    with os.fdopen(fd, "rb", closefd=True) as handle:
        return handle.read(limit)
