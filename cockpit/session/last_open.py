"""The open session found last time, kept with the look of the sessions folder it was found in, so
that `cockpit status` does not list 10,000 folders every few seconds to find the same one again.

Finding the latest open session lists `sessions/` (session/workspace.py); on a big workspace the
listing, not the session, was most of what `cockpit status` cost. A folder's entries change only
with its times, so the id found is kept in the user's cache beside the folder's look
(cockpit/user_cache.py: `$XDG_CACHE_HOME/cockpit/open/<hash of the sessions folder>`). While the
folder still looks so, no session was added, removed or renamed in it, and the kept session is the
answer if it is still open (its journal is asked, as the search asks it). A journal mended by hand
inside its folder (a first line restored) is seen when the folder next changes, or when the kept
session ends.
"""

from __future__ import annotations

from pathlib import Path

from cockpit.user_cache import keep, kept, look

KIND = "open"


def folder_look(sessions_dir: Path) -> str | None:
    """The sessions folder's look before it is listed (None: it is not there)."""
    return look(sessions_dir)


def kept_open(sessions_dir: Path) -> str | None:
    """The id found open when the folder last looked as it looks now, or None."""
    return kept(KIND, sessions_dir)


def keep_open(sessions_dir: Path, session_id: str, seen: str | None, listed_t: float) -> None:
    """Keep `session_id` as the open session of the folder as it looked (`seen`) when it was
    listed at `listed_t` (not if it changed since, or too shortly before: user_cache.keep)."""
    keep(KIND, sessions_dir, session_id, seen, listed_t)
