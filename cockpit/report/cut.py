"""SESSION.md cut to what a report can carry, with a count of what was left out: a 100 MB SESSION.md
would otherwise be read and copied whole into REPORT.md, report.html and report.json (and each
export again). Only its first bytes are read; the file keeps every character. A journal's statuses,
notes and gate summaries come cut by the fold, with the same engine (session/bounds.py's `cut`)."""

from __future__ import annotations

from cockpit.files import size_words
from cockpit.report.text import clean_block, decode
from cockpit.session.bounds import cut

MAX_NOTES_CHARS = 256 << 10
"""SESSION.md in a report: 256 K characters (a week of notes is a few tens of KB)."""
NOTES_READ_BYTES = 4 * MAX_NOTES_CHARS
"""What is read of SESSION.md for a report: MAX_NOTES_CHARS characters of UTF-8 at the most."""


def notes_cut(head: bytes, size: int) -> str:
    """SESSION.md's first bytes (`size` in all) as the report shows them: whole when it is all
    there and short, else cut with a line that says what is left out and where the whole is."""
    text = clean_block(decode(head))
    if size <= len(head):
        return cut(text, MAX_NOTES_CHARS, "SESSION.md")
    shown = text[:MAX_NOTES_CHARS]
    return (f"{shown}\n… (SESSION.md is {size_words(size)}: cut to its first {len(shown):,} characters; "
            "the whole is in SESSION.md)")
