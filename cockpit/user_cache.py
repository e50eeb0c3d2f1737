"""The user's cache: what the cockpit keeps about a workspace's files, outside the workspace.

    $XDG_CACHE_HOME/cockpit/KIND/<hash of the real path>   (~/.cache without the variable)

Looking at a workspace writes nothing in it (a committed session stays as it was), so saved folds
(session/saved_state.py), the list of ended sessions, the interpreters asked about and the answers
below live here. A cache that cannot be read or written only means the work is done again.

**Answers kept by look.** `cockpit status` runs from tmux's status line every few seconds and asks
the same questions of files that seldom change: which session of 10,000 folders is open, what a
cockpit.toml says. An answer is kept beside the *look* of what it was read from (device, inode,
size, mtime and ctime in ns) and used while the file or folder still looks so. The ctime is in the
look because a copy that sets times (`rsync -a`, `cp -p`) can put an mtime back; nothing puts
back a ctime. Something changed within `SETTLED_S` of the reading is not kept: on a file system
whose clock is coarse, a change just after the reading could leave the same times (git calls
such an index entry racy).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from cockpit.write_whole import write_whole

try:  # BLAKE2 without `hashlib`, whose import maps OpenSSL's libcrypto: ~0.55 MiB in every TUI
    from _blake2 import blake2b
except ImportError:  # an interpreter built without it
    from hashlib import blake2b

SETTLED_S = 2.0
"""What changed more recently than this before it was read is not kept (coarse clocks)."""


def cache_root() -> Path:
    """The cockpit's folder in the user's cache: $XDG_CACHE_HOME/cockpit, else ~/.cache/cockpit."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "cockpit"


def path_key(path: Path) -> str:
    """A short name for `path` (resolved) in the cache."""
    return blake2b(str(path.resolve()).encode(), digest_size=12).hexdigest()


def user_cache(kind: str, of: Path) -> Path:
    """`$XDG_CACHE_HOME/cockpit/KIND/<hash of OF's real path>/` (~/.cache without the variable):
    what the cockpit keeps about a file or a workspace, outside it (looking writes nothing there)."""
    return cache_root() / kind / path_key(of)


def look(path: Path) -> str | None:
    """What `path` looks like (device, inode, size, mtime and ctime in ns), or None if it is not there."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return f"{st.st_dev} {st.st_ino} {st.st_size} {st.st_mtime_ns} {st.st_ctime_ns}"


def _title(kind: str, path: Path) -> str:
    return f"cockpit {kind} v1 {path.resolve()}"


def kept(kind: str, path: Path) -> str | None:
    """The answer kept for `path` when it last looked as it looks now; None when it changed since,
    nothing was kept, or what was kept cannot be read."""
    seen = look(path)
    if seen is None:
        return None
    try:
        lines = user_cache(kind, path).read_text(encoding="utf-8").splitlines()
    except (OSError, ValueError):
        return None
    if len(lines) != 3 or lines[0] != _title(kind, path) or lines[1] != seen:
        return None
    return lines[2] or None


def keep(kind: str, path: Path, answer: str, seen: str | None, read_t: float) -> None:
    """Keep `answer` (one line) for `path` as it looked (`seen`) when it was read at `read_t`,
    unless it has changed since or had changed too shortly before."""
    if seen is None or look(path) != seen or "\n" in answer:
        return  # changed while it was read: the next reader reads it again
    changed_t = max(int(part) for part in seen.split()[3:]) / 1e9
    if read_t - changed_t < SETTLED_S:
        return
    target = user_cache(kind, path)
    text = "\n".join([_title(kind, path), seen, answer]) + "\n"
    with contextlib.suppress(OSError, ValueError):
        if target.read_text(encoding="utf-8") == text:
            return  # kept already: tmux asks every few seconds, the file is not written again
    with contextlib.suppress(OSError):  # not kept: the next reader reads the file again
        target.parent.mkdir(parents=True, exist_ok=True)
        write_whole(target, text)
