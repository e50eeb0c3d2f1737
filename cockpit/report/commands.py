"""`cockpit export` and `cockpit history`: the CLI handlers, ready for cli.py to call.

Export writes next to the session by default — REPORT.md with report.svg beside it,
report.html, report.json — and prints where. It only ever reads the session: the journal and
everything else in the folder stay as they were.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from pathlib import Path

from cockpit.errors import CockpitError
from cockpit.report.build import build_report
from cockpit.report.chart import ChartUnavailable, render_chart
from cockpit.report.history import workspace_summaries
from cockpit.report.html import render_html
from cockpit.report.jsonio import dumps, to_json
from cockpit.report.markdown import render_markdown
from cockpit.report.model import Report
from cockpit.report.trend import HistoryTable, history_table, minutes, pattern_ids, times
from cockpit.session.live import atomic_write
from cockpit.workspace import SessionRef, Workspace, list_sessions, resolve_session

FORMATS = ("md", "html", "json")
DEFAULT_NAMES = {"md": "REPORT.md", "html": "report.html", "json": "report.json"}
CHART_NAME = "report.svg"


def pick_session(ws: Workspace, spec: str | None) -> SessionRef:
    """The session named by id or number; the latest one (open or ended) when none is named."""
    if spec is None or spec == "latest":
        sessions = list_sessions(ws)
        if not sessions:
            raise CockpitError(f"no session in {ws.sessions_dir} to export; "
                               'create one with `cockpit new "OBJECTIVE"`')
        return sessions[-1]
    ref = resolve_session(ws, spec)
    assert ref is not None  # only "latest" may find none
    return ref


def export_files(report: Report, formats: Iterable[str], folder: Path,
                 out: Path | None = None) -> tuple[list[Path], str | None]:
    """Write each format (into `folder` under its usual name, or to `out`); the paths written
    and, when there is no chart, the one line saying why."""
    formats = list(formats)
    svg: str | None = None
    note: str | None = None
    if "md" in formats or "html" in formats:
        try:
            svg = render_chart(report)
        except ChartUnavailable as exc:
            note = str(exc)
    written = []
    for fmt in formats:
        path = out if out is not None else folder / DEFAULT_NAMES[fmt]
        if fmt == "md":
            chart = path.with_suffix(".svg").name if out is not None else CHART_NAME
            if svg is not None:
                written.append(_write(path.parent / chart, svg))
            written.append(_write(path, render_markdown(report, chart if svg else None, note)))
        elif fmt == "html":
            written.append(_write(path, render_html(report, svg, note)))
        else:
            written.append(_write(path, dumps(report)))
    return written, note


def _write(path: Path, text: str) -> Path:
    atomic_write(path, text)
    return path


def export_command(ws: Workspace, spec: str | None, fmt: str | None, out: Path | None,
                   now: float) -> int:
    if out is not None and fmt is None:
        fmt = {".md": "md", ".html": "html", ".htm": "html", ".json": "json"}.get(out.suffix.lower())
        if fmt is None:
            raise CockpitError(f"{out}: say which format with --format md|html|json "
                               "(or name the file .md, .html or .json)")
    ref = pick_session(ws, spec)
    report = build_report(ws, ref, now)
    written, note = export_files(report, [fmt] if fmt else FORMATS, ref.path, out)
    if note:
        print(f"cockpit: {note}", file=sys.stderr)
    for path in written:
        print(path)
    return 0


def history_command(ws: Workspace, as_json: bool, now: float) -> int:
    summaries, problems = workspace_summaries(ws, now)
    table = history_table(summaries, problems)
    if as_json:
        print(json.dumps(to_json(table), ensure_ascii=False))
    else:
        print(history_text(table))
    for problem in problems:
        print(f"cockpit: skipped {problem}", file=sys.stderr)
    return 0


def history_text(table: HistoryTable) -> str:
    """Sessions side by side, oldest first, then the trend and any regression."""
    if not table.sessions:
        return "no sessions yet; start one with: cockpit new \"OBJECTIVE\""
    from cockpit.report.formats import utc

    head = ("SESSION", "DATE", "DURATION", "1ST VALID", "VS SDPA", "VS FLASH", "PATTERNS",
            "MISTAKES", "OUTCOME", "OBJECTIVE")
    rows: list[tuple[str, ...]] = [head]
    for s in table.sessions:
        rows.append((s.id, utc(s.started_t)[:16], minutes(s.duration_s), minutes(s.first_valid_s),
                     times(s.best_speedup), times(s.best_vs_flash), pattern_ids(s.patterns_applied),
                     f"{len(s.mistakes)} ({pattern_ids(m.id for m in s.mistakes)})" if s.mistakes
                     else "0",
                     s.outcome + ("" if s.ended_t is not None else " (open)"), s.objective[:50]))
    widths = [max(len(r[i]) for r in rows) for i in range(len(head) - 1)]
    lines = ["  ".join([*(r[i].ljust(widths[i]) for i in range(len(head) - 1)), r[-1]]).rstrip()
             for r in rows]
    if table.vs_previous:
        lines.append("")
        lines.append(f"latest vs {table.vs_previous.previous_id}:")
        lines += [f"  {c.metric}: {c.this} (was {c.previous}) {c.change}" for c in table.vs_previous.rows]
    if table.overall:
        lines.append("")
        lines += [f"trend: {line}" for line in table.overall]
    for r in table.regressions:
        lines.append(f"REGRESSION {r.text}")
    return "\n".join(lines)
