"""A line from someone else's file reaches neither the terminal nor the report with an escape in it:
the gate log and the report strip with one definition (cockpit/printable.py)."""

from __future__ import annotations

import pytest

from cockpit.gates.output import terminal_line
from cockpit.report.text import clean_block, clean_line

HOSTILE = [
    "\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07",  # OSC 52: the clipboard
    "\x1b]0;owned\x1b\\",  # OSC 0: the window title, ST-terminated
    "\x1bP+q544e\x1b\\",  # DCS: a terminfo query
    "\x1b_payload\x1b\\",  # APC
    "\x1b[?1049h",  # the alternate screen
]


@pytest.mark.parametrize("escape", HOSTILE)
def test_an_escape_in_a_line_reaches_neither_the_log_nor_the_report(escape: str) -> None:
    line = f"before {escape}after"
    for cleaned in (terminal_line(line), clean_line(line), clean_block(line)):
        assert "\x1b" not in cleaned and cleaned.startswith("before ") and cleaned.endswith("after")
