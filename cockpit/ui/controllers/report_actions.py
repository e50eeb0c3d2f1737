"""The end-of-session report from the TUI: REPORT.md (+ report.svg), report.html and report.json
written into the session's folder, in a thread (matplotlib takes a second to import)."""

from __future__ import annotations

from pathlib import Path

from cockpit.errors import CockpitError
from cockpit.ui.controllers.host import CockpitHost


def export_report(host: CockpitHost, why: str) -> None:
    """Write the session's report in the background and say where it went."""
    live = host.live
    if live is None:
        host.notify("No session is open: ctrl+n starts one.", severity="warning")
        return
    ref, ws, now = live.ref, host.workspace, host.clock.now()

    def write() -> None:
        from cockpit.report.build import build_report
        from cockpit.report.export import FORMATS, export_files

        try:
            written, note = export_files(build_report(ws, ref, now), FORMATS, ref.path, workspace=ws.root)
        except CockpitError as exc:
            host.call_from_thread(host.notify, f"Report not written: {exc}", severity="error",
                                  markup=False, timeout=15)
            return
        names = ", ".join(_relative(p, ws.root) for p in written)
        text = f"{why}: report written to {names}." + (f" {note}" if note else "")
        host.call_from_thread(host.notify, text, title="Report", markup=False, timeout=15)

    host.run_worker(write, thread=True, group="report", exclusive=True, exit_on_error=False,
                    name="report")


def _relative(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)
