"""Paths inside journals and results are stored relative to the workspace, so a session moved,
cloned or merged from another machine still finds its logs. Journals written before that hold
absolute paths: they are mapped by their `sessions/<ID>/...` tail."""

from __future__ import annotations

import os
from pathlib import Path, PurePath

from cockpit.session.inside import inside


def stored_path(path: Path, workspace: Path) -> str:
    """What a journal stores for `path`: relative to the workspace when it lies inside it."""
    try:
        return PurePath(os.path.relpath(path, workspace)).as_posix() if path.is_relative_to(
            workspace) else str(path)
    except ValueError:  # another drive (Windows): keep it whole
        return str(path)


REFUSED = ".outside-the-workspace"
"""Where a stored path that leads out of the workspace resolves to: a name that never exists, so
a reader says "missing" and never shows or overwrites a file outside the workspace."""


def resolve_stored(stored: str, workspace: Path) -> Path:
    """The file a stored path names in this workspace. A relative path is under the workspace;
    an absolute one (a journal from before relative paths, or from another machine) is mapped by
    its `sessions/<ID>/` tail when the original is not in this workspace. Sessions are committed
    and cloned: a path that still leads outside (`../`, an absolute path, a symlink) resolves to
    a name that does not exist (REFUSED), never to the file it names."""
    path = Path(stored)
    if path.is_absolute() and not inside(path, workspace) and "sessions" in path.parts:
        parts = path.parts
        tail = len(parts) - 1 - parts[::-1].index("sessions")
        path = Path(*parts[tail:])
    candidate = path if path.is_absolute() else workspace / path
    if inside(candidate, workspace):
        return candidate
    return workspace / REFUSED / path.name
