"""The end-of-session report written to files: which session, which formats, where.

Export writes next to the session by default — REPORT.md with report.svg beside it,
report.html, report.json — and prints where. It only ever reads the session: the journal and
everything else in the folder stay as they were.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from cockpit.errors import CockpitError
from cockpit.report.chart import ChartUnavailable, render_chart
from cockpit.report.html import render_html
from cockpit.report.jsonio import dumps
from cockpit.report.markdown import render_markdown
from cockpit.report.model import Report
from cockpit.report.pr import render_pr
from cockpit.session.inside import confine
from cockpit.session.live import atomic_write
from cockpit.session.paths import stored_path
from cockpit.session.workspace import SessionRef, Workspace, list_sessions, resolve_session

FORMATS = ("md", "html", "json")
DEFAULT_NAMES = {"md": "REPORT.md", "html": "report.html", "json": "report.json", "pr": "PR.md"}
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
                 out: Path | None = None, workspace: Path | None = None) -> tuple[list[Path], str | None]:
    """Write each format (into `folder` under its usual name, or to `out`); the paths written
    and, when there is no chart, the one line saying why. A session folder that leads out of
    `workspace` (a symlink in a cloned repository) is refused: only `out`, named by the engineer,
    may be elsewhere."""
    formats = list(formats)
    if out is None and workspace is not None:
        confine(folder, workspace)
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
        elif fmt == "pr":
            link = stored_path(folder / DEFAULT_NAMES["md"], workspace) if workspace else DEFAULT_NAMES["md"]
            written.append(_write(path, render_pr(report, link)))
        else:
            written.append(_write(path, dumps(report)))
    return written, note


def _write(path: Path, text: str) -> Path:
    atomic_write(path, text)
    return path
