"""One way to replace a file the cockpit keeps (trust answers, cached answers, a big gate result):
whole, at once.

The text is written beside the file under a name of this process and thread, then moved over it
(`os.replace`, atomic on one file system): a reader — another cockpit, tmux's status line — sees
the old file or the new one, never half of one, and two writers never write into one temporary
file (each one's move wins whole; the last one stays).
"""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path


def write_whole(path: Path, text: str) -> None:
    """`text` (UTF-8) in place of `path`; the OSError the write raised, the temporary file removed."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
