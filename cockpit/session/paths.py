"""Paths inside journals and results are stored relative to the workspace, so a session moved,
cloned or merged from another machine still finds its logs. Journals written before that hold
absolute paths: they are mapped by their `sessions/<ID>/...` tail."""

from __future__ import annotations

import os
from pathlib import Path, PurePath


def stored_path(path: Path, workspace: Path) -> str:
    """What a journal stores for `path`: relative to the workspace when it lies inside it."""
    try:
        return PurePath(os.path.relpath(path, workspace)).as_posix() if path.is_relative_to(
            workspace) else str(path)
    except ValueError:  # another drive (Windows): keep it whole
        return str(path)


def resolve_stored(stored: str, workspace: Path) -> Path:
    """The file a stored path names in this workspace. A relative path is under the workspace;
    an absolute one from another machine or folder is mapped by its `sessions/<ID>/` tail when
    the original is not there."""
    path = Path(stored)
    if not path.is_absolute():
        return workspace / path
    parts = path.parts
    if "sessions" not in parts or path.exists():
        return path
    tail = len(parts) - 1 - parts[::-1].index("sessions")
    return workspace.joinpath(*parts[tail:])
