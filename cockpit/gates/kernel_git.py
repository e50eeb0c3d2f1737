"""The kernel's files in git: the commit a confirmed KEEP makes, the restore a confirmed REVERT
makes, and the commit a bench or a tune records it ran on.

The only place the cockpit runs git. It touches only the paths the workload names
(cockpit/workload/kernel_files.py: its sources' folders, its module's folder), never the rest of
the workspace, and only after the engineer confirms (ui/controllers/decisions.py); reading the head commit
changes nothing. Each git call is one line on failure (`CockpitError`), within 30 s.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Sequence
from pathlib import Path

from cockpit.errors import CockpitError


def _git(repo: Path, *args: str) -> str:
    try:
        out = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                             timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CockpitError(f"git {' '.join(args)} did not run: {exc}") from exc
    if out.returncode != 0:
        err = out.stderr.strip().splitlines()
        raise CockpitError(f"git {' '.join(args)}: {err[-1] if err else 'failed'}")
    return out.stdout


def head_commit(repo: Path) -> str | None:
    try:
        return _git(repo, "rev-parse", "--short", "HEAD").strip() or None
    except CockpitError:
        return None  # not a git checkout: decisions still work, nothing to commit or restore


def kernel_diff_stat(repo: Path, paths: Sequence[str]) -> str:
    """What changed in the kernel's files since the last commit (read-only)."""
    return _git(repo, "diff", "--stat", "HEAD", "--", *paths).strip()


def diff_stat_since(repo: Path, commit: str, paths: Sequence[str]) -> str:
    """What changed in the kernel's files from `commit` to the working tree (read-only). `commit`
    comes from a result file in the workspace: anything but a hex commit name is refused, never
    handed to git (where "--output=..." would be an option)."""
    return _git(repo, "diff", "--stat", _named(commit), "--", *paths).strip()


def subjects_since(repo: Path, commit: str, paths: Sequence[str], most: int = 3) -> list[str]:
    """The subjects of the commits after `commit` that touched the kernel's files, oldest first
    (the last `most`; read-only): what the engineer said of the change. `commit` as in
    `diff_stat_since`: anything but a hex name is refused."""
    out = _git(repo, "log", f"-{most}", "--reverse", "--format=%s", f"{_named(commit)}..HEAD", "--", *paths)
    return [line.strip() for line in out.splitlines() if line.strip()]


def _named(commit: str) -> str:
    """`commit` when it is a hex commit name, else refused: it comes from a file in the workspace."""
    if not re.fullmatch(r"[0-9a-f]{4,40}", commit):
        raise CockpitError(f"{commit[:40]!r} is no commit name")
    return commit


def commit_kernel(repo: Path, paths: Sequence[str], message: str) -> str:
    """KEEP, confirmed: commit the kernel's files alone; returns the new commit."""
    _git(repo, "add", "--", *paths)
    _git(repo, "commit", "-m", message, "--", *paths)
    return _git(repo, "rev-parse", "--short", "HEAD").strip()


def restore_kernel(repo: Path, paths: Sequence[str]) -> str:
    """REVERT, confirmed: put the kernel's files back as they were at the last commit (the last
    kept version). Files the last commit does not have are left alone (git restore refuses them)."""
    stat = kernel_diff_stat(repo, paths)
    tracked = [p for p in paths if _git(repo, "ls-tree", "--name-only", "HEAD", "--", p.rstrip("/")).strip()]
    if tracked:
        _git(repo, "restore", "--source=HEAD", "--staged", "--worktree", "--", *tracked)
    return stat
