"""The workspace checks: free disk for the build, a build lock a killed build left behind, and a
terminal multiplexer so an SSH drop does not end the session."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from .probe import MachineCheck, Probe, find_files, format_age, shell_quote

GIB = 1024**3


def nearest_existing(path: Path) -> Path:
    for folder in (path, *path.parents):
        if folder.exists():
            return folder
    return Path("/")


def torch_extensions_dir() -> Path:
    """Where `torch.utils.cpp_extension.load` builds by default."""
    explicit = os.environ.get("TORCH_EXTENSIONS_DIR")
    if explicit:
        return Path(explicit).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "torch_extensions"


def check_disk(p: Probe) -> MachineCheck:
    expected = "≥ 5 GiB free for the build (fail under 1 GiB)"
    where = nearest_existing(p.build_dir)
    free = shutil.disk_usage(where).free
    value = f"{free / GIB:.1f} GiB free at {where}"
    fix = f"du -xh {shell_quote(str(where))} | sort -h | tail  # free space there, or build on another disk"
    if free < GIB:
        return MachineCheck("disk", "fail", value, expected, fix)
    if free < 5 * GIB:
        return MachineCheck("disk", "warn", value, expected, fix)
    return MachineCheck("disk", "pass", value, expected)


def check_stale_lock(p: Probe) -> MachineCheck:
    expected = "no `lock` file (a killed build leaves one; every later load then hangs silently)"
    roots: list[Path] = []
    for root in (p.build_dir, torch_extensions_dir()):
        if not any(_inside(root, other) for other in roots):
            roots = [r for r in roots if not _inside(r, root)] + [root]
    now = time.time()
    found = []
    for root in roots:
        for path in find_files(root, lambda name: name == "lock"):
            try:
                age = format_age(now - path.stat().st_mtime)
            except OSError:
                continue  # a build finished and removed it just now
            found.append((path, age))
    if not found:
        return MachineCheck("stale_lock", "pass", "none in " + ", ".join(p.shown(r) for r in roots), expected)
    listed = "; ".join(f"{p.shown(path)}, {age} old" for path, age in found)
    rm = " ".join(shell_quote(str(path)) for path, _ in found)
    # Never deleted here: a build that is running right now holds it.
    return MachineCheck("stale_lock", "warn", listed, expected, f"if no build is running, delete it: rm {rm}")


def _inside(path: Path, root: Path) -> bool:
    try:
        Path(os.path.realpath(path)).relative_to(os.path.realpath(root))
    except ValueError:
        return False
    return True


def check_terminal_multiplexer(p: Probe) -> MachineCheck:
    expected = "inside tmux or screen"
    if os.environ.get("TMUX"):
        return MachineCheck("terminal_multiplexer", "pass", "tmux", expected)
    if os.environ.get("STY"):
        return MachineCheck("terminal_multiplexer", "pass", f"screen ({os.environ['STY']})", expected)
    return MachineCheck(
        "terminal_multiplexer", "warn", "not inside tmux/screen: an SSH drop kills the session",
        expected, "run inside tmux: tmux new -s kernel")
