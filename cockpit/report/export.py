"""The end-of-session report written to files: which session, which formats, where.

Export writes next to the session by default — REPORT.md with report.svg beside it,
report.html, report.json — and prints where. It only ever reads the session: the journal and
everything else in the folder stay as they were.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from cockpit.errors import CockpitError
from cockpit.report.charts import NAMES, Drawn, draw
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
"""The telemetry chart's file beside REPORT.md; the others are report-speedup.svg, ... (`_chart_file`)."""


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
    and, when there is no telemetry chart, the one line saying why. A session folder that leads out of
    `workspace` (a symlink in a cloned repository) is refused: only `out`, named by the engineer,
    may be elsewhere."""
    formats = list(formats)
    if out is None and workspace is not None:
        confine(folder, workspace)
    charts = draw(report) if "md" in formats or "html" in formats else {}
    written = []
    for fmt in formats:
        path = out if out is not None else folder / DEFAULT_NAMES[fmt]
        written += _write_format(fmt, report, charts, path, out is not None, folder, workspace)
    return written, charts["telemetry"].note if charts else None


def _write_format(fmt: str, report: Report, charts: dict[str, Drawn], path: Path, named: bool,
                  folder: Path, workspace: Path | None) -> list[Path]:
    """Write one format to `path`; Markdown's charts beside it (named after `path` when the
    engineer `named` it, else the usual chart names). The paths written, in order."""
    if fmt == "md":
        written = []
        files: dict[str, str | None] = dict.fromkeys(NAMES)
        for name, chart in charts.items():
            if chart.svg is not None:
                file = _chart_file(name, path if named else Path(CHART_NAME))
                written.append(_write(path.parent / file, chart.svg))
                files[name] = file
        return [*written, _write(path, render_markdown(report, files, _notes(charts)))]
    if fmt == "html":
        return [_write(path, render_html(report, {n: c.svg for n, c in charts.items()}, _notes(charts)))]
    if fmt == "pr":
        link = from_repository_root(folder / DEFAULT_NAMES["md"], workspace) if workspace \
            else DEFAULT_NAMES["md"]
        return [_write(path, render_pr(report, link))]
    return [_write(path, dumps(report))]


def _chart_file(name: str, path: Path) -> str:
    """Chart `name`'s file beside `path`: NAME.svg for the telemetry, NAME-speedup.svg, ..."""
    return path.with_suffix(".svg").name if name == "telemetry" else f"{path.stem}-{name}.svg"


def _notes(charts: dict[str, Drawn]) -> dict[str, str | None]:
    return {name: chart.note for name, chart in charts.items()}


def from_repository_root(path: Path, workspace: Path) -> str:
    """`path` as a link from the root of the git repository the workspace is in (what a PR's
    reader and GitHub resolve a relative link against); workspace-relative outside of one."""
    root = workspace.resolve()
    for folder in (root, *root.parents):
        if (folder / ".git").exists():
            try:
                return path.resolve().relative_to(folder).as_posix()
            except ValueError:
                break
    return stored_path(path, workspace)


def _write(path: Path, text: str) -> Path:
    atomic_write(path, text)
    return path
