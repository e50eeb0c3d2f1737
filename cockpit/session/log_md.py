"""SESSION.md as a new session starts it: the log an engineer fills in beside the journal."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import TYPE_CHECKING

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
