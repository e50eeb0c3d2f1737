"""Text from someone else (a gate's output, a journal, a session file) made safe to print: the one
definition of a terminal escape sequence every layer strips with. Standard library only."""

from __future__ import annotations

import re

ESCAPES = re.compile(
    r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\|$)"  # OSC: title, clipboard (52), hyperlinks; BEL or ST ends it
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\|$)"  # DCS, SOS, PM, APC strings
    r"|\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves, the alternate screen
    r"|\x1b[ -/]*[0-~]"  # two-byte and nF escapes
    r"|\x1b"  # a lone ESC
)


def strip_escapes(text: str) -> str:
    """`text` with every escape sequence removed (control characters are the caller's to handle)."""
    return ESCAPES.sub("", text)
