"""SESSION.md on disk for the editor: load (non-UTF-8, or over MAX_EDIT_BYTES, is shown read-only,
never rewritten), save atomically (temp file, fsync, rename), and tell whether someone else changed
it since. Every read goes through cockpit/files.py: a FIFO in its place is one line, never a hang."""

from __future__ import annotations

import contextlib
import os
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path

from cockpit.errors import CockpitError
from cockpit.files import RefusedFile, open_file, read_file, read_head, size_words, too_big
from cockpit.session.inside import OutsideWorkspace, confine_session_path


@dataclass(frozen=True)
class Stamp:
    """What the file was when we last read or wrote it."""

    mtime_ns: int
    size: int
    digest: str


MAX_EDIT_BYTES = 8 << 20
"""The biggest SESSION.md the editor edits (a week of notes is a few tens of KB): at 8 MB a key
takes 0.4 s; at 50 MB the first frame took 37 s and a key 15 s. A bigger one is shown read-only,
in part, and never written."""
SHOWN_BYTES = 256 << 10
"""What the editor shows of a SESSION.md over MAX_EDIT_BYTES, its beginning: drawn in half a second."""
KEPT_UP_TO = 64 << 20
"""The biggest version of SESSION.md that is kept aside whole (`.theirs`) before the editor's text
is written over it: 8 times what the editor edits (a log someone appended a build's output to).
A bigger one is not read, so it is not written over either."""


@dataclass(frozen=True)
class Loaded:
    text: str
    editable: bool
    stamp: Stamp | None
    problem: str | None = None
    read_only_why: str = "not UTF-8"
    """What the editor's border says when `editable` is False."""


def _digest(data: bytes) -> str:
    # Compared only when size or mtime moved, to tell a touch from an edit: a CRC is enough, and
    # hashlib would load OpenSSL's libcrypto (~0.5 MiB resident) into the TUI for it.
    return f"{zlib.crc32(data):08x}"


def stamp_of(path: Path) -> Stamp | None:
    """What the file is now; of one over MAX_EDIT_BYTES (shown read-only), the digest of its
    beginning, with its size and time."""
    confine_session_path(path)
    try:
        data, st = read_head(path, MAX_EDIT_BYTES + 1)
        return Stamp(st.st_mtime_ns, st.st_size, _digest(data))
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise CockpitError(f"{path}: cannot read ({exc.strerror})") from exc


def load(path: Path) -> Loaded:
    """The file's text. Bytes that are not UTF-8 are shown as U+FFFD and the file is marked
    read-only, so a save can never replace what the engineer had there. A SESSION.md that
    leads out of the workspace is never read (OutsideWorkspace, one line)."""
    confine_session_path(path)
    try:
        data, st = read_head(path, MAX_EDIT_BYTES + 1)
    except FileNotFoundError:
        return Loaded("", True, None)
    except RefusedFile:
        raise
    except OSError as exc:
        raise CockpitError(f"{path}: cannot read ({exc.strerror})") from exc
    stamp = Stamp(st.st_mtime_ns, st.st_size, _digest(data))
    if len(data) > MAX_EDIT_BYTES:
        return _too_big(path, data[:SHOWN_BYTES], stamp)
    try:
        return Loaded(data.decode("utf-8"), True, stamp)
    except UnicodeDecodeError as exc:
        return Loaded(data.decode("utf-8", errors="replace"), False, stamp,
                      f"{path.name} is not UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start}): "
                      "shown read-only so nothing in it is lost; convert it to UTF-8 to edit it here")


def _too_big(path: Path, head: bytes, stamp: Stamp) -> Loaded:
    size = size_words(stamp.size)
    text = head.decode("utf-8", errors="replace")
    return Loaded(f"{text}\n\n… ({path.name} is {size}: only its first {size_words(len(head))} are shown)\n",
                  False, stamp,
                  f"{path.name} is {size}, over the {size_words(MAX_EDIT_BYTES)} the editor edits: its "
                  f"first {size_words(len(head))} shown read-only, the file left as it is; edit it in "
                  "another editor", f"{size}, too big to edit here")


def disk_version(path: Path) -> tuple[bytes, Stamp | None]:
    """The file's exact bytes (not UTF-8, or over MAX_EDIT_BYTES, alike) and their stamp, read at
    once: what is kept aside before the editor's text replaces it. A missing file is b"" and None;
    one over KEPT_UP_TO, or no file (a FIFO), is RefusedFile: not kept, so not to be written over."""
    confine_session_path(path)
    try:
        with open_file(path) as f:
            data, st = f.read(KEPT_UP_TO + 1), os.fstat(f.fileno())
    except FileNotFoundError:
        return b"", None
    except RefusedFile:
        raise
    except OSError as exc:
        raise CockpitError(f"{path}: cannot read ({exc.strerror})") from exc
    if len(data) > KEPT_UP_TO:
        raise too_big(path, st.st_size, KEPT_UP_TO, "kept aside whole")
    return data, Stamp(st.st_mtime_ns, st.st_size, _digest(data[:MAX_EDIT_BYTES + 1]))  # as stamp_of


def read_aside(path: Path) -> bytes:
    """A copy kept beside SESSION.md (`.mine`, `.theirs`), its bytes; RefusedFile (an OSError) for a
    FIFO or a file over KEPT_UP_TO: no copy kept here is ever that."""
    return read_file(path, KEPT_UP_TO, "kept aside whole")


def save(path: Path, text: str) -> Stamp:
    """Write `text` atomically (save_bytes)."""
    return save_bytes(path, text.encode("utf-8"))


def save_bytes(path: Path, data: bytes) -> Stamp:
    """Write atomically: a crash leaves either the old file or the new one, never half of one.
    Never through a session folder that leads out of the workspace (OutsideWorkspace)."""
    confine_session_path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with tmp.open("wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
        st = path.stat()
    except OSError as exc:
        with contextlib.suppress(OSError):  # a read-only folder refuses the unlink as well
            tmp.unlink(missing_ok=True)
        raise CockpitError(f"{path}: cannot save ({exc.strerror}); your text is still in the "
                           "editor — free disk space or fix permissions, it is retried") from exc
    return Stamp(st.st_mtime_ns, st.st_size, _digest(data))


def rescue_dir() -> Path:
    """Outside every workspace, where the folder that refused a save is not: the user's state
    folder ($XDG_STATE_HOME, else ~/.local/state), else the temp folder."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "cockpit" / "rescue"


def rescue(path: Path, text: str) -> Path | None:
    """A copy of text its own file would not take (a full disk, a read-only folder), named after
    the session folder and file; None when no place took it either."""
    name = f"{path.parent.name}-{path.name}"
    for folder in (rescue_dir(), Path(tempfile.gettempdir()) / f"cockpit-rescue-{os.getuid()}"):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            target = folder / name
            target.write_text(text, encoding="utf-8")
            return target
        except OSError:
            continue
    return None


def changed_since(path: Path, stamp: Stamp | None) -> bool:
    """True when the file on disk is no longer what we last read or wrote (content, not time).
    A file that now leads out of the workspace is not read: the next save says it is refused."""
    try:
        confine_session_path(path)
    except OutsideWorkspace:
        return False
    try:
        st = path.stat()
    except FileNotFoundError:
        return stamp is not None
    if stamp is not None and (st.st_mtime_ns, st.st_size) == (stamp.mtime_ns, stamp.size):
        return False
    try:
        now = stamp_of(path)
    except CockpitError:
        return True  # no longer a file it can read (a FIFO put in its place): loading it says why
    return now is not None and (stamp is None or now.digest != stamp.digest)
