"""Searching a gate's output for the library's output triggers, under a time budget.

A pattern file is someone else's input: `(a+)+$` against a long line would backtrack for hours,
and 200 patterns each just under their own budget would still take minutes. So each pattern has
a budget of its own and the library one for all of them together, per gate run searched
(TriggerBudget). The `regex` module's timeout costs about 5 µs a search, more than a plain
trigger's search of one line; a trigger that can be searched over many lines at once is, so the
shipped library reads a 5,000-line log in milliseconds, not half a second.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import regex as bounded_re

from cockpit.patterns.pattern import OutputTrigger, Pattern

LIBRARY = -1
"""The key in `TriggerBudget.too_slow` of the line that says the library as a whole ran out of
time (pattern ids are 0 and up)."""

BATCH_LINES = 256
"""Lines searched in one call by a trigger that can be (`lines_regex`)."""

_LINE_BY_LINE = re.compile(r"\\[AZzG]|\(\*|[*+?}]\+|\(\?(?![aiLmsux-]*[:)]|P?<(?![=!])|P=|#|\|)")
"""What could make a search of many lines miss a match a line has on its own: anchors to the
whole text (\\A \\Z \\G), lookarounds, atomic groups and possessive quantifiers (they may hold on
to a newline a line never had), conditionals, recursion and verbs. Groups, named groups, inline
flags and comments are safe; a trigger with anything else is searched line by line."""


@dataclass
class TriggerBudget:
    """How long pattern triggers may search one gate run's output, and what ran out of it: one
    pattern may take `seconds`, the whole library `library_s` together. A pattern that spends
    its own budget is named once (`too_slow`, one line) and skipped from then on; a gate run on
    which the library spends `library_s` ends the search there, and no output trigger is
    searched again by this budget, with one line (`too_slow[LIBRARY]`) naming the slowest. Keep
    one for as long as the same patterns are matched (a TUI, a history over every session): what
    ran out is skipped from then on, so a pattern or a library that runs out costs its budget
    once. One that stays within it costs up to `library_s` each gate run searched (four triggers
    of 0.15 s each: 0.6 s a run), which is the budget's promise: a refresh within a second."""

    seconds: float = 0.25
    library_s: float = 1.0
    too_slow: dict[int, str] = field(default_factory=dict)
    """Pattern id -> the line that says what was skipped and why; LIBRARY -> the library's line."""


def lines_regex(regex: Any) -> Any | None:
    """`regex` compiled to search many lines joined by newlines, ^ and $ at each line's ends;
    None when only a line at a time gives the same answer (_LINE_BY_LINE)."""
    if _LINE_BY_LINE.search(regex.pattern):
        return None
    return bounded_re.compile(regex.pattern, regex.flags | bounded_re.MULTILINE)


def match_output(patterns: Sequence[Pattern], gate: str, lines: Iterable[str],
                 budget: TriggerBudget | None = None) -> list[tuple[Pattern, str]]:
    """Patterns whose output triggers fire on `gate`'s lines, each once with the first line that
    fired it; earliest line first, then by id. A pattern whose searches outlast `budget.seconds`
    is left out and named in `budget.too_slow`; once the library has spent `budget.library_s`
    here, the search ends with the patterns found so far and the library is named there."""
    budget = budget if budget is not None else TriggerBudget()
    listening = [(p, t) for p in patterns if p.id not in budget.too_slow for t in p.triggers
                 if isinstance(t, OutputTrigger) and t.gate in (None, gate)]
    if not listening or LIBRARY in budget.too_slow:
        return []
    wanted = {p.id for p, _ in listening}
    search = _Search(budget, gate)
    first: dict[int, tuple[int, Pattern, str]] = {}
    offset = 0
    for batch in _batches(lines):
        joined = "\n".join(batch)
        here: dict[int, tuple[int, Pattern, str]] = {}  # a pattern's earliest line over its triggers
        for pattern, trigger in listening:
            if pattern.id in first or pattern.id in budget.too_slow:
                continue
            index = search.first_line(pattern, trigger, batch, joined)
            if index is not None and (pattern.id not in here or offset + index < here[pattern.id][0]):
                here[pattern.id] = (offset + index, pattern, batch[index])
            if search.total >= budget.library_s:
                unsearched = wanted - first.keys() - here.keys()
                budget.too_slow[LIBRARY] = search.library_over(len(wanted), unsearched)
                return _in_order({**here, **first})
        first.update(here)
        offset += len(batch)
        if wanted <= first.keys() | budget.too_slow.keys():
            break
    return _in_order(first)


def _batches(lines: Iterable[str]) -> Iterator[list[str]]:
    batch: list[str] = []
    for line in lines:
        batch.append(line)
        if len(batch) == BATCH_LINES:
            yield batch
            batch = []
    if batch:
        yield batch


def _in_order(first: Mapping[int, tuple[int, Pattern, str]]) -> list[tuple[Pattern, str]]:
    return [(p, line) for _, p, line in sorted(first.values(), key=lambda x: (x[0], x[1].id))]


class _Search:
    """One gate run's searches: the time each pattern has spent on it, and the library's."""

    def __init__(self, budget: TriggerBudget, gate: str) -> None:
        self.budget, self.gate = budget, gate
        self.spent: dict[int, float] = {}
        self.total = 0.0

    def first_line(self, pattern: Pattern, trigger: OutputTrigger, batch: list[str],
                   joined: str) -> int | None:
        """The index of the first line of `batch` the trigger finds, if it finds one in time."""
        if trigger.lines_regex is not None and not self._finds(pattern, trigger.lines_regex, joined):
            return None  # none of the lines has it (a find may span two lines: each line says)
        for index, line in enumerate(batch):
            if self._finds(pattern, trigger.regex, line):
                return index
            if pattern.id in self.budget.too_slow or self.total >= self.budget.library_s:
                return None
        return None

    def _finds(self, pattern: Pattern, regex: Any, text: str) -> bool:
        """Whether `regex` finds `text` within what is left of the pattern's budget and the
        library's; a search that runs out of the pattern's own marks the pattern too slow."""
        own = self.budget.seconds - self.spent.get(pattern.id, 0.0)
        library = self.budget.library_s - self.total
        started = time.perf_counter()
        try:
            return regex.search(text, timeout=max(min(own, library), 1e-3)) is not None
        except TimeoutError:
            if own <= library:  # its own budget ran out, not the library's
                self.budget.too_slow[pattern.id] = (
                    f"pattern {pattern.id:02d} ({pattern.path.name}): its trigger /{regex.pattern}/ ran over "
                    f"{self.budget.seconds:g} s on {self.gate}'s output and is skipped (a nested repeat such "
                    "as (a+)+ backtracks for ever); rewrite it without one")
            return False
        finally:
            before = self.spent.get(pattern.id, 0.0)
            self.spent[pattern.id] = before + time.perf_counter() - started
            # One pattern counts for at most half the library's budget: it is named and skipped on
            # its own, and never ends the library alone, however far a search overran its timeout
            # (the regex module overruns one ~3x; a busy box, more).
            most = self.budget.library_s / 2
            self.total += min(self.spent[pattern.id], most) - min(before, most)

    def library_over(self, listening: int, unsearched: set[int]) -> str:
        """The one line for a library that spent its budget on one gate run: the slowest
        patterns, so the user knows which files to fix, and how many were never searched."""
        spent = self.spent
        slowest = sorted(spent, key=lambda pid: -spent[pid])[:3]
        named = ", ".join(f"{pid:02d} ({spent[pid]:.2f} s)" for pid in slowest)
        return (f"pattern triggers: the library's {listening} patterns with output triggers spent "
                f"{self.total:.1f} s on {self.gate}'s output, over their {self.budget.library_s:g} s "
                "together "
                f"(slowest: {named}); {len(unsearched - spent.keys())} were not searched, and no output "
                "trigger is searched again in this run of cockpit: make the slow triggers simpler or "
                "remove their patterns")
