"""The TUI's malloc tuning: fewer arenas before threads start, free pages handed back after."""

from __future__ import annotations

import subprocess
import sys


def test_on_glibc_the_tui_limits_arenas_and_hands_free_pages_back() -> None:
    code = """
import sys
from cockpit.memory import limit_malloc_arenas, release_free_memory
assert limit_malloc_arenas(2) is True
junk = [bytes(4096) for _ in range(20000)]  # ~80 MB, then freed
del junk
assert release_free_memory() is True
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
