"""The workspace is a boundary: nothing under `sessions/` or `patterns/` is read or written
through a symlink that leads out of it.

Sessions and patterns are committed, shared and cloned, so a symlink in them is someone else's
choice: a session folder, `journal.jsonl`, `logs/` or `SESSION.md` linked to a file elsewhere
would have the cockpit append events to it, write logs into it, show it, or copy it in. Every
opener asks this module first; a path whose symlinks, followed, lead outside is refused in one
line that names the link, where it leads, and what to do. Symlinks that stay inside are fine.
"""

from __future__ import annotations

import os
from pathlib import Path

from cockpit.errors import CockpitError

SESSIONS = "sessions"
SESSION_ENTRIES = ("journal.jsonl", "SESSION.md", "logs", "results", "status.txt", "telemetry.jsonl", "tune")
"""What the cockpit reads or writes in a session folder (DESIGN.md's Files)."""


class OutsideWorkspace(CockpitError):
    """A path under the workspace that a symlink leads out of it."""


def inside(path: Path, workspace: Path) -> bool:
    """Whether `path`, its symlinks followed, lies in the workspace (its own symlinks followed)."""
    try:
        return path.resolve().is_relative_to(workspace.resolve())
    except (OSError, RuntimeError):  # a symlink loop
        return False


def confine(path: Path, workspace: Path) -> Path:
    """`path` when nothing in it leads out of `workspace`; else OutsideWorkspace, one line."""
    if _no_link_below(os.fspath(path), os.fspath(workspace)) or inside(path, workspace):
        return path
    raise OutsideWorkspace(refusal(path, workspace))


def _no_link_below(path: str, workspace: str) -> bool:
    """The fast answer for the usual case (every session opens several files, history reads
    thousands): `path` is spelled under `workspace` and nothing below it is a symlink or `..`."""
    if not path.startswith(workspace.rstrip(os.sep) + os.sep):
        return False
    step = workspace.rstrip(os.sep)
    for part in path[len(step) + 1:].split(os.sep):
        step = f"{step}{os.sep}{part}"
        if part == ".." or os.path.islink(step):
            return False
    return True


def confine_session_path(path: Path) -> Path:
    """`confine` for a path under `<workspace>/sessions/` (a journal, SESSION.md, a log, a
    result), its workspace being the folder that holds `sessions/`. A path elsewhere (a journal
    a test or a replay names directly) is not a session's and is returned as it is."""
    parts = path.parts
    if SESSIONS not in parts[:-1]:
        return path
    at = len(parts) - 2 - parts[-2::-1].index(SESSIONS)
    return confine(path, Path(*parts[:at]) if at else Path("."))


def confine_session(folder: Path, workspace: Path) -> None:
    """Refuse a session whose folder, or any file or folder the cockpit keeps in it, leads out of
    the workspace: checked when a session is opened, before anything in it is read or written."""
    confine(folder, workspace)
    base = os.fspath(folder)
    for name in SESSION_ENTRIES:
        if os.path.islink(os.path.join(base, name)):  # in a folder inside, only a link leads out
            confine(folder / name, workspace)


def refusal(path: Path, workspace: Path) -> str:
    """What was refused, in one line: the first symlink (from the workspace down) that leads
    out, where it leads, and what to do."""
    try:
        relative = path.relative_to(workspace)
    except ValueError:
        return f"{path}: outside the workspace {workspace}: refused; name a path inside it"
    step = workspace
    for part in relative.parts:
        step = step / part
        if step.is_symlink() and not inside(step, workspace):
            kind = "folder" if step.is_dir() else "file"
            return (f"{step.relative_to(workspace).as_posix()} is a symlink to {_target(step)}, outside "
                    f"the workspace: refused; replace it with the {kind} itself")
    return (f"{relative.as_posix()} leads outside the workspace (to {_target(path)}): refused; "
            "name a path inside it")


def _target(path: Path) -> str:
    try:
        return str(path.resolve())
    except (OSError, RuntimeError):
        return "a symlink loop"
