"""A session driven through the real TUI on a lent H100 (bench/device/tui_session.py): the app's
own gate runner ran env, build, correctness, bench and profile, its GPU feed wrote the session's
telemetry track from live NVML, and End session wrote the report. Exported again here."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from cockpit.report.build import build_report
from cockpit.report.export import FORMATS, export_files
from cockpit.report.model import SCHEMA_VERSION
from cockpit.session.workspace import Workspace, list_sessions
from cockpit.telemetry.track import read_track

FIXTURE = Path(__file__).parent / "fixtures" / "sessions" / "h100-tui"


def test_the_h100_session_exports_with_its_machine_outcome_and_live_telemetry(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "ws")
    shutil.copytree(FIXTURE, ws.root)
    (ref,) = list_sessions(ws)
    before = hashlib.sha256(ref.journal.read_bytes()).hexdigest()
    track = read_track(ref.path / "telemetry.jsonl")
    assert len(track.rows) == 18 and not track.problems  # 17 while it ran, the last window on close
    assert track.gpus[0].name == "NVIDIA H100 80GB HBM3" and track.gpus[0].uuid.startswith("GPU-2a036aa4")
    report = build_report(ws, ref, ref_end(ref))
    written, note = export_files(report, FORMATS, ref.path)
    assert {p.name for p in written} == {"REPORT.md", "report.svg", "report-speedup.svg", "report-roofline.svg",
                                         "report.html", "report.json"}  # bytes: the attention workload's model
    assert note is None  # the chart was drawn from the live track
    md = (ref.path / "REPORT.md").read_text()
    assert "NVIDIA H100 80GB HBM3 × 1; driver 580.159.04" in md
    assert "0.55x vs SDPA \\(HIGH\\)" in md
    assert "comparable \\(power cap 36% of the window" in md
    assert "memory-bound" in md and "(report.svg)" in md
    data = json.loads((ref.path / "report.json").read_text())
    assert data["schema_version"] == SCHEMA_VERSION
    assert (data["outcome"]["workload"], data["outcome"]["baseline"]) == ("attention", "SDPA")
    assert hashlib.sha256(ref.journal.read_bytes()).hexdigest() == before  # export never writes it


def ref_end(ref) -> float:  # type: ignore[no-untyped-def]
    last = ref.journal.read_text().splitlines()[-1]
    return float(json.loads(last)["t"])
