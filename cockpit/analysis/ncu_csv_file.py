"""An ncu CSV read from a workspace: its raw page (profile.csv) or its details page
(profile.details.csv), by the profile gate and `cockpit analyze` alike.

The file is someone else's, named by a gate's result or found beside the one the user named: it is
read through the door (cockpit/files.py): only a regular file (a FIFO in its place would block the
reader for ever), and only up to MAX_NCU_CSV_BYTES (a bigger one is refused in one line, never
read whole).
"""

from __future__ import annotations

from pathlib import Path

from cockpit.files import read_file

MAX_NCU_CSV_BYTES = 256 << 20
"""The biggest ncu CSV read: a bigger one is refused in one line, never read whole."""
NCU_CSV_WHAT = "an ncu CSV may be"


def read_ncu_csv(path: Path | str) -> str:
    """The text of the ncu CSV at `path` (bytes that are not UTF-8 replaced). RefusedFile (one
    line naming it) for anything but a regular file or one over the cap; the usual OSError for a
    missing or unreadable one."""
    return read_file(path, MAX_NCU_CSV_BYTES, NCU_CSV_WHAT).decode("utf-8", errors="replace")
