"""What a session's journal may hold and still be shown: a cloned journal is someone else's input.

A phase budget of 1e308 s (two of them sum to infinity), a time of 1e17 (no calendar reaches it),
an objective of 69 KB (a first line no reader expects), a line of 10 MB or a status of 10 MB (its
first frame took 22 s to wrap) would otherwise stop every reader. Each is read here as something
the screens can show, with one line saying what was refused and why; the journal itself is never
rewritten, so the user's text stays there whole.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from cockpit.config import PhaseSpec
from cockpit.config.phases import MAX_BUDGET_MIN

MAX_OBJECTIVE_CHARS = 4000
"""An objective is a line or a paragraph; a longer text belongs in SESSION.md."""
MAX_FIRST_LINE_BYTES = 1 << 20
"""How much of a journal's first line a reader takes to learn when the session started."""
MAX_EVENT_BYTES = 16 << 20
"""The longest journal line read as an event: the cockpit writes a few KB (a result over 16 KB goes
to its own file). A longer line is skipped and named, never held whole (a 3 GB line would be); a
shorter one's status, note or summary is cut to be shown (MAX_LINE_CHARS)."""
MAX_LINE_CHARS = 2000
"""A status, a note or a gate summary as the fold keeps it, and the screens and reports show it:
the cockpit writes one line; more is cut with a count (the journal keeps it whole)."""
LATEST_T = 32_503_680_000.0
"""3000-01-01 UTC: a later time is no clock's (time.localtime and datetime stop near year 9999)."""


def cut(text: str, limit: int, whole_in: str, between: str = "\n") -> str:
    """`text`, or its first `limit` characters and a line that says how many more are in `whole_in`:
    the one cut of the cockpit's texts (the fold's statuses and summaries, a report's SESSION.md)."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}{between}… ({len(text) - limit:,} more characters cut; the whole is in {whole_in})"


def line_cut(value: object) -> str:
    """A status, note or gate summary from the journal as the fold keeps it (MAX_LINE_CHARS)."""
    return cut(str(value), MAX_LINE_CHARS, "the journal", " ")


def time_refused(value: Any) -> str | None:
    """Why an event's `t` cannot be shown as a date, or None when it can."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None  # not a number at all: not an event (journal._event_or_none)
    if 0 <= value <= LATEST_T:
        return None
    return f"its time t = {value:g} is no date (the cockpit writes seconds since 1970, before year 3000)"


def phases_read(items: Iterable[Any]) -> tuple[tuple[PhaseSpec, ...], str | None]:
    """The phases a session_started event lists; a budget that is not seconds a session can last
    (negative, NaN, infinite, over a week) reads as no budget, named in the line returned."""
    phases, refused = [], []
    for p in items:
        if not isinstance(p, Mapping) or "name" not in p or "budget_s" not in p:
            continue
        budget = p["budget_s"]
        ok = isinstance(budget, (int, float)) and not isinstance(budget, bool) and \
            0 <= budget <= MAX_BUDGET_MIN * 60
        phases.append(PhaseSpec(str(p["name"]), float(budget) if ok else 0.0))
        if not ok:
            refused.append(f"{p['name']} ({budget!r:.20})")
    if not refused:
        return tuple(phases), None
    return tuple(phases), (f"phase budgets shown as none: {', '.join(refused)}; a budget is seconds up to "
                           f"a week ({MAX_BUDGET_MIN * 60:g} s)")


def objective_read(objective: Any) -> tuple[str, str | None]:
    """The objective as shown: cut to MAX_OBJECTIVE_CHARS with a count, named in the line returned."""
    text = str(objective if objective is not None else "")
    if len(text) <= MAX_OBJECTIVE_CHARS:
        return text, None
    cut = len(text) - MAX_OBJECTIVE_CHARS
    return (text[:MAX_OBJECTIVE_CHARS] + f" … ({cut:,} characters cut)",
            f"the objective is {len(text):,} characters: shown cut to {MAX_OBJECTIVE_CHARS:,} "
            "(the journal keeps it whole)")


def objective_refused(objective: str) -> str | None:
    """Why `cockpit new` refuses this objective, or None."""
    if len(objective) <= MAX_OBJECTIVE_CHARS:
        return None
    return (f"the objective is {len(objective):,} characters, over the {MAX_OBJECTIVE_CHARS:,} a session "
            "keeps; say it in a line or a paragraph and put the rest in SESSION.md")


def cost_read(value: Any) -> tuple[float, str | None]:
    """The GPU cost per hour a session_started event gives; anything but a price reads as 0."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) \
            and value >= 0:
        return float(value), None
    if value is None:
        return 0.0, None
    return 0.0, f"gpu_cost_per_hour {value!r:.20} is not a price: shown as 0"
