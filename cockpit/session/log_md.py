"""SESSION.md as a new session starts it: the log an engineer fills in beside the journal; and its
Log lines read back (what the engineer wrote between a profile and the bench after it)."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from cockpit.files import read_head

if TYPE_CHECKING:
    from cockpit.config import PhaseSpec


def session_md(
    session_id: str, objective: str, template: str, phases: tuple[PhaseSpec, ...], now: float
) -> str:
    """The session log an engineer fills in: objective, plan, the four closing sections, and the
    log last, where the editor's cursor opens and where `>> SESSION.md` from a shell lands."""
    started = datetime.fromtimestamp(now, tz=timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    rows = "\n".join(f"| {i} | {p.name} | {p.budget_s / 60:g} min |" for i, p in enumerate(phases, 1))
    total = sum(p.budget_s for p in phases) / 60
    return f"""# Session {session_id}

**Objective:** {objective}
**Template:** {template} · **Started:** {started}

## Plan

| # | Phase | Budget |
|---|-------|--------|
{rows}

Total budget: {total:g} min. One change at a time; measure the baseline before touching code.

## What worked

## What failed

## Lessons (patterns to add or update)

## Next session

## Log
"""


LOG_NAME = "SESSION.md"
"""The session log's file name in its session folder."""
LOG_HEADING = "## Log"
LOG_READ_BYTES = 1 << 20
"""What is read of SESSION.md for its Log lines: the first MiB (a week of notes is tens of KB)."""


def log_lines(text: str) -> list[str]:
    """The non-empty lines under SESSION.md's last `## Log` heading, as written (none without one)."""
    lines = text.splitlines()
    heads = [i for i, line in enumerate(lines) if line.strip() == LOG_HEADING]
    return [line.rstrip() for line in lines[heads[-1] + 1:] if line.strip()] if heads else []


def read_log_lines(session_dir: Path) -> list[str] | None:
    """`log_lines` of the session's SESSION.md (a regular file, not followed through a link, read up
    to LOG_READ_BYTES; bytes that are not UTF-8 read as U+FFFD); None when it cannot be read (gone,
    a FIFO)."""
    try:
        head, _ = read_head(session_dir / LOG_NAME, LOG_READ_BYTES, follow=False)
    except OSError:
        return None
    return log_lines(head.decode("utf-8", errors="replace"))
