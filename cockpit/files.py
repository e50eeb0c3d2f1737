"""The one door for reading a workspace's files: only a regular file is read, never blocking, and
never more than its reader's stated cap.

A workspace is someone else's clone or tarball. A FIFO where the journal, a gate log or SESSION.md
should be blocks `open` for ever (the TUI's main thread with it: no `q`, no ctrl+c); a folder, a
socket or a device node is no file to read; a 3 GB sparse "result" costs no disk and would be read
whole. So every reader opens here: O_NONBLOCK (a FIFO's open returns at once), then fstat, and
only a regular file is read, up to the cap the reader names. Anything else is `RefusedFile`: one
line naming the file and what it is. It is an OSError as well, so a reader that already says
"cannot read" or skips a missing file does the same for it. Nothing here writes.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

from cockpit.errors import CockpitError


class RefusedFile(CockpitError, OSError):
    """A workspace file that is not read: not a regular file, or over its reader's cap."""

    def __init__(self, path: Path | str, why: str) -> None:
        super().__init__(None, why)
        self.filename = os.fspath(path)

    def __str__(self) -> str:
        return f"{self.filename} is {self.strerror}"


def size_words(size: int) -> str:
    """3.2 GB, 64 MB, 12 KB, 900 bytes: a size as a person reads it (units of 1024, as `ls -lh`
    and `truncate -s 3G` count)."""
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}".replace(".0 ", " ")
    return f"{size:,} bytes"


def _kind(mode: int) -> str:
    kinds = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISDIR, "a folder"), (stat.S_ISSOCK, "a socket"),
             (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
             (stat.S_ISLNK, "a symlink"))
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def not_a_file(path: Path | str, mode: int) -> RefusedFile:
    """The refusal of `path`, whose mode says it is `mode`'s kind and not a regular file."""
    return RefusedFile(path, f"{_kind(mode)}, not a file: remove it or put the file back")


def regular_fd(path: Path | str, flags: int = os.O_RDONLY, follow: bool = True, mode: int = 0o644) -> int:
    """`path` opened with `flags` when it is a regular file; else RefusedFile (the fd closed).
    O_NONBLOCK keeps a FIFO's open from waiting for a writer (or a reader); `follow=False` adds
    O_NOFOLLOW, where a symlink must not be followed at all. Missing and unreadable files raise
    the usual OSError."""
    extra = os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags | extra, mode)
    except OSError as exc:
        if exc.errno in (errno.ENXIO, errno.ELOOP, errno.EISDIR):  # a socket, a FIFO for writing, a link
            with_mode = _mode_or_none(path, follow)
            if with_mode is not None and not stat.S_ISREG(with_mode):
                raise not_a_file(path, with_mode) from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise not_a_file(path, st.st_mode)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _mode_or_none(path: Path | str, follow: bool) -> int | None:
    try:
        return (os.stat if follow else os.lstat)(path).st_mode
    except OSError:
        return None


def open_file(path: Path | str, follow: bool = True) -> BinaryIO:
    """`path` open for binary reading when it is a regular file (RefusedFile otherwise)."""
    return os.fdopen(regular_fd(path, os.O_RDONLY, follow), "rb")


def read_file(path: Path | str, cap: int, what: str, follow: bool = True) -> bytes:
    """The whole of `path`, refused (RefusedFile: its size and `what` the cap is for) when it holds
    more than `cap` bytes: for a file that means nothing cut (JSON, YAML, TOML)."""
    with open_file(path, follow) as f:
        data = f.read(cap + 1)
        if len(data) > cap:
            raise too_big(path, os.fstat(f.fileno()).st_size, cap, what)
    return data


def too_big(path: Path | str, size: int, cap: int, what: str) -> RefusedFile:
    """The refusal of a file over its reader's cap, e.g. "3.2 GB, over the 16 MB a gate's result may
    be: not read (the file is left as it is)"."""
    return RefusedFile(path, f"{size_words(size)}, over the {size_words(cap)} {what}: not read "
                             "(the file is left as it is)")


def read_head(path: Path | str, cap: int, follow: bool = True) -> tuple[bytes, os.stat_result]:
    """The first `cap` bytes of `path` and its stat: a reader that shows a file's beginning says
    how much more there is."""
    with open_file(path, follow) as f:
        return f.read(cap), os.fstat(f.fileno())


def read_tail(path: Path | str, cap: int, follow: bool = True) -> tuple[bytes, int]:
    """The last `cap` bytes of `path` and its size (a log's end is where a failure is)."""
    with open_file(path, follow) as f:
        size = os.fstat(f.fileno()).st_size
        f.seek(max(0, size - cap))
        return f.read(cap), size
