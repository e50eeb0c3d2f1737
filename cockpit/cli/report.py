"""`cockpit export` and `cockpit history`: the report of one session, and every session side by side.

Export writes next to the session by default and prints where; it only ever reads the session.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

from cockpit.cli.parser import session_named, workspace_of
from cockpit.errors import CockpitError
from cockpit.report.build import build_report
from cockpit.report.export import FORMATS, export_files, pick_session
from cockpit.report.history_columns import cell_width, fit_columns, history_columns, history_row, table_line
from cockpit.report.history_reader import HistoryReader
from cockpit.report.jsonio import to_json
from cockpit.report.trend import HistoryTable
from cockpit.session.workspace import Workspace, cannot_open


def export(args: argparse.Namespace) -> int:
    """`cockpit export [ID] [--format F] [-o FILE]`."""
    return export_session(workspace_of(args), session_named(args), args.format, args.out, time.time())


def export_session(ws: Workspace, spec: str | None, fmt: str | None, out: Path | None,
                   now: float) -> int:
    """Write the report of one session (the latest when `spec` is None) and print the paths."""
    if out is not None and fmt is None:
        fmt = {".md": "md", ".html": "html", ".htm": "html", ".json": "json"}.get(out.suffix.lower())
        if fmt is None:
            raise CockpitError(f"{out}: say which format with --format md|html|json "
                               "(or name the file .md, .html or .json)")
    ref = pick_session(ws, spec)
    refused = cannot_open(ref)  # what the TUI says of it too; a journal that reads still reports
    if refused is not None and not refused.journal_reads:
        raise CockpitError(refused.why)
    report = build_report(ws, ref, now)
    written, note = export_files(report, [fmt] if fmt else FORMATS, ref.path, out, ws.root)
    if note:
        print(f"cockpit: {note}", file=sys.stderr)
    for path in written:
        print(path)
    return 0


def history(args: argparse.Namespace) -> int:
    """`cockpit history`: every session as it is read, oldest first, in a table that fits the
    terminal (--wide: every column whole), then each workload's trend. --json: one object once all
    are read. Ctrl+C stops the reading and prints the trend so far."""
    reader = HistoryReader(workspace_of(args), time.time())
    stopped = False
    try:
        if args.json:
            for _ in reader:
                pass
        else:
            print_rows(reader, table_room(args.wide))
    except KeyboardInterrupt:
        stopped = True
    table = reader.table()
    if args.json:
        if stopped:
            raise CockpitError(f"stopped after {len(reader.rows)} of {len(reader)} sessions: nothing printed")
        print(json.dumps(to_json(table), ensure_ascii=False))
    else:
        if stopped:
            print(f"(stopped after {len(reader.rows)} of {len(reader)} sessions: the trend is theirs)")
        print(trend_text(table), flush=True)
    for problem in table.problems:
        print(f"cockpit: skipped {problem}", file=sys.stderr)
    return 0


PIPED_WIDTH = 100
"""The table's width where stdout is no terminal (a file, a pipe) and COLUMNS is not set."""


def table_room(wide: bool) -> int | None:
    """The cells a line of the table may take: the terminal's width (COLUMNS first, as a shell
    sets it), PIPED_WIDTH when printing to no terminal; None with --wide: every column whole."""
    if wide:
        return None
    if not os.environ.get("COLUMNS", "").strip() and not sys.stdout.isatty():
        return PIPED_WIDTH
    return shutil.get_terminal_size((PIPED_WIDTH, 24)).columns


def print_rows(reader: HistoryReader, room: int | None) -> None:
    """The header, then one row per session, each flushed as it is read. Every width is known
    before the first session is read (the session's is the longest folder name; a longer cell is
    cut with …), so each row prints as soon as its session is read."""
    if not len(reader):
        return
    fitted = fit_columns(history_columns(max(cell_width(r.id) for r in reader.refs)), room)
    columns, widths = [c for c, _ in fitted], [w for _, w in fitted]
    if room is None:
        widths[-1] = sys.maxsize  # --wide: the objective whole
    print(table_line([c.title.upper() for c in columns], widths), flush=True)
    for s in reader:
        print(table_line(history_row(s, columns), widths), flush=True)


def trend_text(table: HistoryTable) -> str:
    """After the rows: each workload's latest session against the one before and its trend (a header
    per workload when there are several), then every regression."""
    if not table.sessions:
        return "no sessions yet; start one with: cockpit new \"OBJECTIVE\""
    lines: list[str] = []
    for group in table.workloads:
        lines.append("")
        if len(table.workloads) > 1:
            count = len(group.sessions)
            lines.append(f"WORKLOAD {group.workload}: {count} session{'s' if count != 1 else ''}")
        if group.vs_previous:
            lines.append(f"latest vs {group.vs_previous.previous_id}:")
            lines += [f"  {c.metric}: {c.this} (was {c.previous}) {c.change}" for c in group.vs_previous.rows]
        lines += [f"trend: {line}" for line in group.overall]
    if table.regressions:
        lines.append("")
    lines += [f"REGRESSION {r.text}" for r in table.regressions]
    return "\n".join(lines)
