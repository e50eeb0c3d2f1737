"""Huge text cut to what a report can carry, with a count of what was left out: a 100 MB
SESSION.md or journaled note would otherwise be copied whole into REPORT.md, report.html and
report.json (and each export again). The session's own files keep every character."""

from __future__ import annotations

MAX_NOTES_CHARS = 256 << 10
"""SESSION.md in a report: 256 K characters (a week of notes is a few tens of KB)."""
MAX_LINE_CHARS = 2000
"""One journaled note or status in a report's timeline."""


def cut(text: str, limit: int, whole_in: str, between: str = "\n") -> str:
    """`text`, or its first `limit` characters and a line that says how many more are in `whole_in`."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}{between}… ({len(text) - limit:,} more characters cut; the whole is in {whole_in})"
