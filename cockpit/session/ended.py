"""The sessions of a workspace known to have ended, kept so that finding the open one does not
search the journals of thousands of ended ones again.

`cockpit status` runs from tmux's status line every few seconds and needs the latest open session.
The newest session folders by name are the newest sessions, so the search usually stops at the
first one; but a workspace merged from a team, or copied in, can hold thousands of ended sessions
newer than the one open here, and searching each journal for its end took seconds. A session that
ended stays ended (its journal is append-only, and the cockpit writes nothing to an ended
session), so its id is kept once found, in the user's cache beside the saved folds:

    $XDG_CACHE_HOME/cockpit/ended/<hash of the sessions folder>

one id a line after a header naming the folder — never in the workspace (looking is read-only).
A list that cannot be read is searched past; one that cannot be written is skipped: the journals
are searched instead, only slower. A journal rewound by hand to before its end stays ended here
until that file is removed (a `git checkout` of an older commit of `sessions/` included).
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterator
from pathlib import Path

from cockpit.user_cache import cache_root, path_key
from cockpit.write_whole import write_whole

HEADER = "cockpit ended sessions v1"
_MINUTE = len("YYYYMMDD-HHMM")


def ended_file(sessions_dir: Path) -> Path:
    return cache_root() / "ended" / path_key(sessions_dir)


class EndedSessions:
    """The ids of one sessions folder known to have ended: read when first asked, written back
    (whole, replaced at once) when new ones were found."""

    def __init__(self, sessions_dir: Path) -> None:
        self._sessions_dir = sessions_dir
        self._known: set[str] | None = None
        self._found: set[str] = set()

    def unknown(self, names: list[str]) -> list[str]:
        """`names` without those known to have ended, sorted, in one pass."""
        if self._known is None:
            self._known = self._read()
        return sorted(set(names).difference(self._known, self._found))

    def add(self, session_id: str) -> None:
        self._found.add(session_id)

    def _title(self) -> str:
        return f"{HEADER} {self._sessions_dir.resolve()}"

    def _read(self) -> set[str]:
        try:
            lines = ended_file(self._sessions_dir).read_text(encoding="utf-8").splitlines()
        except (OSError, ValueError):
            return set()
        if not lines or lines[0] != self._title():  # another folder's list (a hash clash), or damaged
            return set()
        return set(lines[1:])

    def save(self) -> None:
        """Keep the ids found ended since the list was read (another process's additions kept too)."""
        if self._found <= (self._known if self._known is not None else self._read()):
            return  # nothing new: the file is not written again (tmux asks every few seconds)
        path = ended_file(self._sessions_dir)
        ids = self._read() | self._found
        with contextlib.suppress(OSError):  # no list: the next reader searches the journals
            path.parent.mkdir(parents=True, exist_ok=True)
            write_whole(path, "\n".join([self._title(), *sorted(ids)]) + "\n")
        self._known, self._found = ids, set()


def minutes_newest_first(stamped: list[str], ended: EndedSessions) -> Iterator[list[str]]:
    """The stamped names (sorted) by start minute, newest first; past the newest minute, the
    sessions known to have ended are left out in one pass (10,000 asked one by one take long)."""
    newest = list(itertools.takewhile(lambda n: n[:_MINUTE] == stamped[-1][:_MINUTE], reversed(stamped)))
    if newest:
        yield newest
    rest = ended.unknown(stamped[:len(stamped) - len(newest)])
    for _, minute in itertools.groupby(reversed(rest), key=lambda name: name[:_MINUTE]):
        yield list(minute)
