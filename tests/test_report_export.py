"""`cockpit export`: a session recorded on an H200 turned into REPORT.md (+ report.svg),
report.html and report.json — compared with golden files — and the same for sessions that a
crash, a hand edit or a hostile objective left behind. Exporting never touches the journal."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sys
from pathlib import Path

import pytest

from cockpit.cli import main
from cockpit.config import Config
from cockpit.report.build import build_report
from cockpit.report.chart import render_chart
from cockpit.report.export import export_files
from cockpit.report.jsonio import ReportFormatError, dumps, loads, schema
from cockpit.session import events as ev
from cockpit.session.journal import JournalWriter
from cockpit.session.workspace import Workspace, create_session, list_sessions

FIXTURE = Path(__file__).parent / "fixtures" / "sessions"
GOLDEN = FIXTURE / "golden"
B_ID = "20261122-0121-c41b-bench-recording"
A_ID = "20261121-2318-7a3e-build-loop"
UPDATE = os.environ.get("COCKPIT_UPDATE_GOLDEN") == "1"


@pytest.fixture
def recorded(tmp_path: Path) -> Workspace:
    """A copy of the fixture workspace (export writes into the session folder)."""
    shutil.copytree(FIXTURE / "ws", tmp_path / "ws")
    return Workspace(tmp_path / "ws")


def folder_hashes(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def without_chart(html: str) -> str:
    """The page with the inline SVG's body left out: matplotlib's drawing is checked on its own,
    the page around it is golden."""
    return re.sub(r"<svg.*?</svg>", "<svg>…</svg>", html, flags=re.S)


def golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), f"{name} differs (COCKPIT_UPDATE_GOLDEN=1 rewrites it)"


def test_the_fixture_is_what_the_recordings_make(tmp_path: Path) -> None:
    sys.path.insert(0, str(FIXTURE))
    try:
        import make_fixture
    finally:
        sys.path.remove(str(FIXTURE))
    make_fixture.main(tmp_path)
    assert folder_hashes(tmp_path / "ws") == folder_hashes(FIXTURE / "ws")


def test_the_recorded_session_exports_as_the_golden_files(recorded: Workspace, capsys) -> None:
    session = recorded.sessions_dir / B_ID
    before = folder_hashes(session)
    assert main(["--workspace", str(recorded.root), "export", B_ID]) == 0
    printed = capsys.readouterr().out.split()
    assert printed == [str(session / n) for n in ("report-speedup.svg", "report-roofline.svg", "report.svg",
                                                  "REPORT.md", "report.html", "report.json")]
    after = folder_hashes(session)
    assert {k: v for k, v in after.items() if k in before} == before  # nothing it read was changed
    golden("REPORT.md", (session / "REPORT.md").read_text())
    golden("report.json", (session / "report.json").read_text())
    golden("report.html", without_chart((session / "report.html").read_text()))
    md = (session / "REPORT.md").read_text()
    assert "![GPU utilization, power, temperature and SM clock" in md and "](report.svg)" in md


def test_what_the_report_says_about_the_recorded_session(recorded: Workspace) -> None:
    report = build_report(recorded, list_sessions(recorded)[-1], now=0.0)
    assert report.outcome.text == "no valid benchmark: 1 run(s), all suspect or failed"
    bench, profile = report.gates
    assert (bench.speedup, bench.valid) == (pytest.approx(0.6696, abs=1e-4), False)
    assert any(f.label == "the one fix" and f.value.startswith("larger tiles") for f in profile.facts)
    assert profile.duration_s is None  # the recording did not keep it: shown as unknown
    # no cockpit was open: the chart is the bench probe's own NVML samples, 5 s a point
    [series] = report.telemetry
    assert series.sources == ("002-bench",) and 17 <= len(series.t) <= 19
    assert report.comparison is not None and report.comparison.previous_id == A_ID
    assert [(m.id, m.run_id) for m in report.repeated_mistakes] == [(13, "002-bench")]
    earlier = build_report(recorded, list_sessions(recorded)[0], now=0.0)
    assert earlier.machine is not None
    assert (earlier.machine.gpu, earlier.machine.gpu_count, earlier.machine.driver, earlier.machine.cuda,
            earlier.machine.nvcc) == ("NVIDIA H200", 1, "580.159.04", "13.0", "release 13.0")
    assert [p.id for p in earlier.patterns_created] == [13]
    assert earlier.telemetry[0].sources == ("cockpit",)  # its bench kept no samples of its own
    assert [g.phase for g in earlier.gpu_phases] == ["Environment", "Baseline"]


def test_json_round_trips_exactly(recorded: Workspace) -> None:
    report = build_report(recorded, list_sessions(recorded)[-1], now=0.0)
    text = dumps(report)
    again = loads(text)
    assert again == report and dumps(again) == text
    data = json.loads(text)
    data["gates"][0]["duration_s"] = "slow"
    with pytest.raises(ReportFormatError, match=r"^gates\[0\]\.duration_s: expected a number, found \"slow\""):
        loads(json.dumps(data))
    data["gates"][0]["duration_s"] = None
    assert loads(json.dumps({**data, "schema_version": 1})).outcome == report.outcome
    # versions 2 to 4 carried the first workload's `vs_flash` beside `vs`: they read as before, and
    # a version 5 holding it is refused (a field that names one workload is written no more)
    assert loads(json.dumps({**data, "schema_version": 4,
                             "outcome": {**data["outcome"], "vs_flash": None}})).outcome == report.outcome
    with pytest.raises(ReportFormatError, match="unknown field 'vs_flash'"):
        loads(json.dumps({**data, "outcome": {**data["outcome"], "vs_flash": 1.25}}))
    version_2 = {k: v for k, v in data["outcome"].items() if k not in ("workload", "baseline", "vs")}
    read = loads(json.dumps({**data, "schema_version": 2, "outcome": {**version_2, "vs_flash": 1.25}}))
    assert [(v.reference, v.label, v.speedup) for v in read.outcome.vs] == [
        ("sdpa", "SDPA", report.outcome.best_speedup), ("flash", "FLASH", 1.25)]
    with pytest.raises(ReportFormatError, match="schema_version is 7"):
        loads(json.dumps({**json.loads(text), "schema_version": 7}))


def test_the_documented_schema_is_the_one_the_code_writes() -> None:
    committed = json.loads((Path(__file__).parent.parent / "docs" / "report.schema.json").read_text())
    assert committed == schema()


def test_the_chart_is_deterministic_and_can_neither_run_nor_fetch(recorded: Workspace) -> None:
    report = build_report(recorded, list_sessions(recorded)[0], now=0.0)
    svg = render_chart(report)
    assert svg == render_chart(report)
    assert svg.startswith("<svg") and "<script" not in svg.lower() and "<!DOCTYPE" not in svg
    assert not re.search(r"(?:href|src)\s*=\s*\"(?!#)", svg)
    for label in ("Environment", "Baseline", "util %", "power W", "temp °C", "SM MHz"):
        assert label in svg  # text stays text (svg.fonttype none)


def test_without_matplotlib_export_still_works_and_says_why(recorded: Workspace,
                                                           monkeypatch: pytest.MonkeyPatch,
                                                           capsys) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert main(["--workspace", str(recorded.root), "export", B_ID, "--format", "md"]) == 0
    err = capsys.readouterr().err.strip()
    assert err == "cockpit: the chart needs matplotlib: pip install -e '.[report]'"
    md = (recorded.sessions_dir / B_ID / "REPORT.md").read_text()
    assert "pip install -e '.\\[report\\]'" in md and "report.svg" not in md
    assert not (recorded.sessions_dir / B_ID / "report.svg").exists()


def test_one_format_to_a_file_of_your_choice(recorded: Workspace, tmp_path: Path, capsys) -> None:
    out = tmp_path / "pr" / "session.md"
    out.parent.mkdir()
    assert main(["--workspace", str(recorded.root), "export", B_ID, "-o", str(out)]) == 0
    assert capsys.readouterr().out.split() == [str(tmp_path / "pr" / "session-speedup.svg"),
                                               str(tmp_path / "pr" / "session-roofline.svg"),
                                               str(tmp_path / "pr" / "session.svg"), str(out)]
    assert "](session.svg)" in out.read_text()
    assert main(["--workspace", str(recorded.root), "export", B_ID, "-o", str(tmp_path / "r.txt")]) == 2
    assert "say which format with --format" in capsys.readouterr().err


def test_an_unknown_session_is_one_line_and_exit_2(recorded: Workspace, capsys) -> None:
    assert main(["--workspace", str(recorded.root), "export", "no-such-session"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("cockpit: no session 'no-such-session'")


HOSTILE = ("<script>alert(1)</script> [x](javascript:alert(1)) a|b `rm -rf` <img src=x onerror=alert(1)> "
           "[bold red]boom[/] \x1b[31mred\x1b]8;;http://evil\x07link\x1b]8;;\x07 \x00\x07 $x$ #1 @you")


def hostile_session(ws: Workspace) -> Path:
    ref = create_session(ws, Config(), HOSTILE, "optimize", 1_795_300_000.0)
    writer = JournalWriter(ref.journal)
    writer.append(ev.status(1_795_300_060.0, HOSTILE, auto=False))
    writer.append(ev.note(1_795_300_070.0, HOSTILE))
    writer.append(ev.gate_started(1_795_300_080.0, "001-env", "env", ("x",), "sessions/x/<b>.log", 1))
    writer.append(ev.gate_finished(1_795_300_090.0, "001-env", "env", "fail", HOSTILE, 1.0, 1,
                                   "sessions/x/<b>.log", {"checks": [{"name": HOSTILE, "status": "fail",
                                                                     "value": HOSTILE, "fix": HOSTILE}]}))
    writer.close()
    with ref.journal.open("ab") as f:  # garbage, then a torn last line
        f.write(b"\xff\xfe{not json}\n{\"t\": 1795300100, \"type\": \"status\", \"text\": \"cut")
    ref.log_md.write_bytes(b"# notes\n" + HOSTILE.encode() + b"\n\xff\xfe invalid utf-8 ``` fence\n")
    return ref.path


def test_hostile_text_shows_literally_and_harmlessly(ws: Workspace, capsys) -> None:
    folder = hostile_session(ws)
    journal = (folder / "journal.jsonl").read_bytes()
    assert main(["--workspace", str(ws.root), "export"]) == 0
    assert (folder / "journal.jsonl").read_bytes() == journal
    md = (folder / "REPORT.md").read_text()
    html = (folder / "report.html").read_text()
    data = json.loads((folder / "report.json").read_text())
    for text in (md, html, json.dumps(data)):
        assert "\x1b" not in text and "\x00" not in text and "\x07" not in text
    # Markdown: every special character escaped, so nothing becomes a tag, a link or a cell break
    outside_notes = re.sub(r"````text.*?````", "", md, flags=re.S)  # the notes are a code block
    assert "\\<script\\>alert\\(1\\)\\</script\\>" in md and "<script" not in outside_notes.replace("\\<script", "")
    assert "\\[x\\]\\(javascript:alert\\(1\\)\\)" in md and "a\\|b" in md and "\\`rm -rf\\`" in md
    assert "\\[bold red\\]boom\\[/\\]" in md and "\\$x\\$" in md and "\\#1" in md
    assert "````text" in md  # the notes' fence is longer than the ``` inside them
    # HTML: escaped by the template engine; the only <script> would be ours, and there is none
    assert "<script" not in html and "<img" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "javascript:" not in re.sub(r"&[^;]+;|\[x\]\(javascript:alert\(1\)\)", "", html)
    assert "\ufffd invalid utf-8" in html
    # what could not be read is said, with the journal's line numbers
    problems = data["problems"]
    assert any(":7: not a journal event, skipped" in p for p in problems)
    assert any(":8: torn last line" in p for p in problems)
    assert data["machine"]["gpu"] is None and data["telemetry"] == []  # the env run named no GPU


def test_a_journal_that_lost_its_first_line_still_reports(ws: Workspace) -> None:
    ref = create_session(ws, Config(), "lost header", "optimize", 1_795_300_000.0)
    lines = ref.journal.read_bytes().split(b"\n")
    ref.journal.write_bytes(b"\n".join([b"{garbage", *lines[1:]]))
    ref.log_md.unlink()
    report = build_report(ws, ref, now=1_795_300_600.0)
    assert report.session == ref.id and report.objective == ""
    assert report.machine is None  # no env run, no telemetry
    assert any("no session_started event" in p for p in report.problems)
    assert any(p.endswith("SESSION.md: missing (no notes to report)") for p in report.problems)
    written, note = export_files(report, ("md", "html", "json"), ref.path)
    assert [p.name for p in written] == ["REPORT.md", "report.html", "report.json"]
    assert note == "no GPU telemetry was kept for this session, so there is no chart"
