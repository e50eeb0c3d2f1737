"""Every session of a workspace read one at a time, oldest first: what `cockpit history` prints as
it goes and the History screen fills in as it reads. A workspace of 10,000 sessions is never held
whole: each session's journal is read, summed up in one row and let go; the rows keep no per-config
medians (regressions are found as the rows arrive, trend.RegressionWatch); the caller may stop
between any two sessions."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from cockpit.patterns.library import load_patterns
from cockpit.patterns.triggers import TriggerBudget
from cockpit.report.history import SessionSummary, pattern_birth, summarize
from cockpit.report.reading import read_session
from cockpit.report.trend import HistoryTable, Regression, RegressionWatch, history_table
from cockpit.session.workspace import Workspace, list_sessions, started_t


class HistoryReader:
    """Iterate for each session's summary, whole, as it is read (a session that cannot be read is
    skipped and named in `problems`); then `table()` for the trend over the rows read so far."""

    def __init__(self, ws: Workspace, now: float) -> None:
        self.workspace, self.now = ws, now
        self.patterns, _ = load_patterns(ws.patterns_dir)
        self.refs = list_sessions(ws)
        self.births = pattern_birth(self.patterns, {r.id: started_t(r) for r in self.refs})
        self.budget = TriggerBudget()
        self.rows: list[SessionSummary] = []
        """The summaries read so far, without their per-config medians and intervals."""
        self.problems: list[str] = []
        self.regressions: list[Regression] = []
        self._watch = RegressionWatch()

    def __len__(self) -> int:
        """The sessions the workspace holds (some may turn out unreadable)."""
        return len(self.refs)

    def __iter__(self) -> Iterator[SessionSummary]:
        for ref in self.refs:
            read = read_session(ref)
            if read.state is None:
                self.problems.append(f"{ref.id}: {'; '.join(read.problems)}")
                continue
            summary = summarize(read.state, read.events, self.workspace.root, self.patterns, self.births,
                                self.now, self.budget, self.problems)
            del read  # this session's journal and its bench results go with it
            if (regression := self._watch.see(summary)) is not None:
                self.regressions.append(regression)
            self.rows.append(dataclasses.replace(summary, best_ms=(), best_ci=()))
            yield summary

    def all_problems(self) -> list[str]:
        """Sessions skipped, and pattern triggers that outlasted their time budget."""
        return self.problems + list(self.budget.too_slow.values())

    def table(self) -> HistoryTable:
        return history_table(self.rows, self.all_problems(), self.regressions)


def workspace_summaries(ws: Workspace, now: float) -> tuple[list[SessionSummary], list[str]]:
    """Every session of the workspace summed up whole (its medians kept), oldest first; and the
    sessions that could not be read, one line each. For a few sessions: a big workspace streams."""
    reader = HistoryReader(ws, now)
    summaries = sorted(reader, key=lambda s: (s.started_t, s.id))
    return summaries, reader.all_problems()
