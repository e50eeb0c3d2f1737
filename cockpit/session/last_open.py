"""The open session found last time, kept with the look of the sessions folder it was found in, so
that `cockpit status` does not list 10,000 folders every few seconds to find the same one again.

Finding the latest open session lists `sessions/` (session/workspace.py); on a big workspace the
listing, not the session, is most of what `cockpit status` costs. A folder's entries change only
with its modification time, so the answer is kept beside that time:

    $XDG_CACHE_HOME/cockpit/open/<hash of the sessions folder>

a header naming the folder, then the folder's device, inode, mtime and ctime (ns), then the id.
While the folder still looks so, no session was added, removed or renamed in it, and the kept
session is the answer if it is still open (its journal is asked, as the search asks it). The
ctime is kept because a copy that sets times (`rsync -a`, `cp -p`) can put an mtime back; nothing
puts back a ctime. A folder changed within `SETTLED_S` of the search is not kept: a file system
whose clock is coarse could give a session made just after the listing the same time (git calls
such an index entry racy). A journal mended by hand inside its folder (a first line restored) is
seen when the folder next changes, or when the kept session ends. Like the list of ended
sessions, this is the user's cache, never the workspace's; a file that cannot be read or written
only means the folder is listed again.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from cockpit.session.saved_state import cache_root, path_key

HEADER = "cockpit open session v1"
SETTLED_S = 2.0
"""A folder whose last change is younger than this when it was listed is not kept (coarse clocks)."""


def folder_look(sessions_dir: Path) -> str | None:
    """What the folder looks like (device, inode, mtime and ctime in ns), or None if it is not there."""
    try:
        st = os.stat(sessions_dir)
    except OSError:
        return None
    return f"{st.st_dev} {st.st_ino} {st.st_mtime_ns} {st.st_ctime_ns}"


def _kept_file(sessions_dir: Path) -> Path:
    return cache_root() / "open" / path_key(sessions_dir)


def _title(sessions_dir: Path) -> str:
    return f"{HEADER} {sessions_dir.resolve()}"


def kept_open(sessions_dir: Path) -> str | None:
    """The id found open when the folder last looked as it looks now; None when it changed since,
    or nothing was kept (or what was kept cannot be read)."""
    look = folder_look(sessions_dir)
    if look is None:
        return None
    try:
        lines = _kept_file(sessions_dir).read_text(encoding="utf-8").splitlines()
    except (OSError, ValueError):
        return None
    if len(lines) != 3 or lines[0] != _title(sessions_dir) or lines[1] != look:
        return None
    return lines[2] or None


def keep_open(sessions_dir: Path, session_id: str, look: str | None, listed_t: float) -> None:
    """Keep `session_id` as the open session of the folder as it looked (`look`) when it was
    listed at `listed_t`, unless it has changed since or had changed too shortly before."""
    if look is None or folder_look(sessions_dir) != look:
        return  # changed while it was searched: the next call lists it again
    changed_t = max(int(part) for part in look.split()[2:]) / 1e9
    if listed_t - changed_t < SETTLED_S:
        return
    path = _kept_file(sessions_dir)
    text = "\n".join([_title(sessions_dir), look, session_id]) + "\n"
    with contextlib.suppress(OSError, ValueError):
        if path.read_text(encoding="utf-8") == text:
            return  # kept already: tmux asks every few seconds, the file is not written again
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()
