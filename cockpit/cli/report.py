"""`cockpit export` and `cockpit history`: the report of one session, and every session side by side.

Export writes next to the session by default and prints where; it only ever reads the session.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from cockpit.cli.parser import workspace_of
from cockpit.errors import CockpitError
from cockpit.report.build import build_report
from cockpit.report.export import FORMATS, export_files, pick_session
from cockpit.report.formats import utc
from cockpit.report.history import SessionSummary, workspace_summaries
from cockpit.report.jsonio import to_json
from cockpit.report.trend import (
    HistoryTable,
    WorkloadHistory,
    history_table,
    minutes,
    pattern_ids,
    times,
)
from cockpit.session.workspace import Workspace


def export(args: argparse.Namespace) -> int:
    """`cockpit export [ID] [--format F] [-o FILE]`."""
    return export_session(workspace_of(args), args.session, args.format, args.out, time.time())


def export_session(ws: Workspace, spec: str | None, fmt: str | None, out: Path | None,
                   now: float) -> int:
    """Write the report of one session (the latest when `spec` is None) and print the paths."""
    if out is not None and fmt is None:
        fmt = {".md": "md", ".html": "html", ".htm": "html", ".json": "json"}.get(out.suffix.lower())
        if fmt is None:
            raise CockpitError(f"{out}: say which format with --format md|html|json "
                               "(or name the file .md, .html or .json)")
    ref = pick_session(ws, spec)
    report = build_report(ws, ref, now)
    written, note = export_files(report, [fmt] if fmt else FORMATS, ref.path, out, ws.root)
    if note:
        print(f"cockpit: {note}", file=sys.stderr)
    for path in written:
        print(path)
    return 0


def history(args: argparse.Namespace) -> int:
    """`cockpit history`: every session side by side, then the trend."""
    summaries, problems = workspace_summaries(workspace_of(args), time.time())
    table = history_table(summaries, problems)
    if args.json:
        print(json.dumps(to_json(table), ensure_ascii=False))
    else:
        print(history_text(table))
    for problem in problems:
        print(f"cockpit: skipped {problem}", file=sys.stderr)
    return 0


HISTORY_REFERENCES = 3
"""Reference columns per workload: its baseline and the next ones (--json has them all)."""


def history_text(table: HistoryTable) -> str:
    """Sessions side by side, oldest first, one table per workload (each against its own
    references), then the trend and any regression."""
    if not table.sessions:
        return "no sessions yet; start one with: cockpit new \"OBJECTIVE\""
    summaries = {s.id: s for s in table.sessions}
    lines: list[str] = []
    for group in table.workloads:
        if len(table.workloads) > 1:
            count = len(group.sessions)
            lines += [*([""] if lines else []),
                      f"WORKLOAD {group.workload}: {count} session{'s' if count != 1 else ''}"]
        lines += _workload_text(group, [summaries[i] for i in group.sessions])
    for r in table.regressions:
        lines.append(f"REGRESSION {r.text}")
    return "\n".join(lines)


def _workload_text(group: WorkloadHistory, sessions: list[SessionSummary]) -> list[str]:
    references = group.references[:HISTORY_REFERENCES]
    head = ("SESSION", "DATE", "DURATION", "1ST VALID", *(f"VS {label.upper()}" for _, label in references),
            "PATTERNS", "MISTAKES", "OUTCOME", "OBJECTIVE")
    rows: list[tuple[str, ...]] = [head]
    for s in sessions:
        rows.append((s.id, utc(s.started_t)[:16], minutes(s.duration_s), minutes(s.first_valid_s),
                     *(times(s.vs(ref)) for ref, _ in references), pattern_ids(s.patterns_applied),
                     f"{len(s.mistakes)} ({pattern_ids(m.id for m in s.mistakes)})" if s.mistakes
                     else "0",
                     s.outcome + ("" if s.ended_t is not None else " (open)"), s.objective[:50]))
    widths = [max(len(r[i]) for r in rows) for i in range(len(head) - 1)]
    lines = ["  ".join([*(r[i].ljust(widths[i]) for i in range(len(head) - 1)), r[-1]]).rstrip()
             for r in rows]
    if group.vs_previous:
        lines.append("")
        lines.append(f"latest vs {group.vs_previous.previous_id}:")
        lines += [f"  {c.metric}: {c.this} (was {c.previous}) {c.change}" for c in group.vs_previous.rows]
    if group.overall:
        lines.append("")
        lines += [f"trend: {line}" for line in group.overall]
    return lines
