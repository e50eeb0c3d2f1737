"""The one door for text from someone else (a journal, a session file, a pattern, a gate's or a
workload's output, an exception): `printable` removes every terminal control sequence before the
text reaches Textual or a terminal. Standard library only.

Nothing from outside carries colour in: SGR is removed with the rest, and the cockpit colours
text with its own styles. A gate's log file keeps the child's bytes as written (`less -R` shows
its colours); only what is shown of it passes here.
"""

from __future__ import annotations

import re

CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""A control character other than tab and newline: every escape sequence starts with one (ESC or a
C1), so text without one passes the door untouched, at the speed of one character class."""

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


def printable(text: str, mark: str = "") -> str:
    """`text` with every escape sequence and control character removed; tabs, newlines and CRLF
    kept. A lone control character (not an escape) becomes `mark` when one is given, so a report
    can show that a byte was there."""
    if not CONTROLS.search(text):
        return text
    if not mark:
        return UNPRINTABLE.sub("", text)
    return UNPRINTABLE.sub(lambda m: mark if len(m[0]) == 1 and m[0] != "\x1b" else "", text)

