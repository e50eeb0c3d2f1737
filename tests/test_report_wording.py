"""The report says only what the session recorded: no "None" where the env gate recorded nothing,
no "n/a" where the validity evidence has no number, an empty per-phase GPU table with its true
reason, phase names on the chart that never print over each other, and docs that name the verb,
the schema version and the session folders as the cockpit has them."""

from __future__ import annotations

import json
import re
import shutil
from datetime import datetime, timezone
from itertools import pairwise
from pathlib import Path

import pytest

from cockpit.cli import main
from cockpit.config import Config
from cockpit.gates.bench.view import evidence_lines as lines_of
from cockpit.report.build import build_report
from cockpit.report.chart import render_chart
from cockpit.report.chart_labels import place_labels, width_pt
from cockpit.report.gate_details import details
from cockpit.report.jsonio import dumps, loads
from cockpit.report.model import SCHEMA_VERSION
from cockpit.session import events as ev
from cockpit.session.journal import Event, JournalWriter
from cockpit.session.workspace import SessionRef, Workspace, create_session, new_session_id
from cockpit.slug import slugify
from cockpit.telemetry.track import TRACK_NAME, TrackRow, row_json
from cockpit.telemetry.window_evidence import WindowEvidence

ROOT = Path(__file__).resolve().parent.parent
T = 1_795_300_000.0
NONE_WORD = re.compile(r"\bNone\b")


def journal(ref: SessionRef, *events: Event) -> None:
    writer = JournalWriter(ref.journal)
    for e in events:
        writer.append(e)
    writer.close()


def env_run(checks: list[dict[str, object]]) -> tuple[Event, Event]:
    log = "sessions/x/001-env.log"
    return (ev.gate_started(T + 10, "001-env", "env", ("python", "-m", "env"), log, 1),
            ev.gate_finished(T + 20, "001-env", "env", "fail", "the env gate found problems", 10.0, 1,
                             log, {"checks": checks}))


def exported(ws: Workspace, ref: SessionRef, capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    """REPORT.md, report.html, report.json and PR.md of the session, as text."""
    assert main(["--workspace", str(ws.root), "export", ref.id]) == 0
    assert main(["--workspace", str(ws.root), "export", ref.id, "--format", "pr"]) == 0
    capsys.readouterr()
    return {name: (ref.path / name).read_text() for name in ("REPORT.md", "report.html", "report.json", "PR.md")}


# 1. Facts the env gate did not record are left out, never printed as None --------------------


def test_an_env_gate_that_recorded_nothing_leaves_no_none_in_any_report(
        ws: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    ref = create_session(ws, Config(), "a box whose driver is missing", "optimize", T)
    journal(ref, *env_run([{"name": "driver", "status": "fail", "value": None, "fix": None},
                           {"name": "torch", "status": "fail", "value": None},
                           {"name": "nvcc", "status": "warn"}]),
            ev.event(ev.DECISION, T + 30, action=None, summary=None, confirmed=False),
            ev.event(ev.PATTERN_APPLIED, T + 40, pattern=3, title=None, why=None))
    texts = exported(ws, ref, capsys)
    for name in ("REPORT.md", "report.html", "PR.md"):
        assert not NONE_WORD.search(texts[name]), f"{name} shows None: {NONE_WORD.search(texts[name])}"
    assert "| machine | not recorded by 001-env — run the env gate \\(cockpit gate env\\) |" in texts["REPORT.md"]
    assert ("<tr><th>machine</th><td>not recorded by 001-env — run the env gate (cockpit gate env)</td></tr>"
            in texts["report.html"])
    assert "**Machine**" not in texts["PR.md"]  # nothing to say about it
    machine = json.loads(texts["report.json"])["machine"]
    assert machine["source"] == "001-env" and machine["driver"] is None  # JSON keeps null for unknown


def test_a_half_described_machine_shows_only_what_was_recorded(
        ws: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    ref = create_session(ws, Config(), "no GPU name, but a driver", "optimize", T)
    journal(ref, *env_run([{"name": "driver", "status": "pass", "value": "580.65.06"},
                           {"name": "torch", "status": "pass", "value": "2.9.0+cu130 (CUDA 13.0)"},
                           {"name": "cuda_available", "status": "fail", "value": "False"}]))
    texts = exported(ws, ref, capsys)
    assert "| machine | driver 580.65.06; CUDA 13.0; torch 2.9.0+cu130 \\(from 001-env\\) |" in texts["REPORT.md"]
    assert "<td>driver 580.65.06; CUDA 13.0; torch 2.9.0+cu130 (from 001-env)</td>" in texts["report.html"]
    assert "- **Machine** — driver 580.65.06, torch 2.9.0+cu130" in texts["PR.md"].splitlines()
    for name in ("REPORT.md", "report.html", "PR.md"):
        assert not NONE_WORD.search(texts[name])


# 2. Validity evidence says only the numbers it has ------------------------------------------------


def evidence_lines(evidence: dict) -> list[str]:
    return lines_of(WindowEvidence.from_json(evidence))


def test_validity_evidence_says_only_the_numbers_the_bench_measured() -> None:
    # a bench judged leniently has no clock threshold: the line ends with what was measured
    lenient = {"window_s": 12.04, "clocks": [{"gpu": 0, "busy_samples": 40, "max_sm_clock_mhz": 1980,
                                              "min_busy_sm_clock_mhz": 1380, "max_busy_sm_clock_mhz": 1980}]}
    assert evidence_lines(lenient) == ["12.0 s watched", "GPU 0: busy SM clock 1380–1980 MHz of 1980"]
    strict = {"clocks": [{"gpu": 1, "min_busy_sm_clock_mhz": 1380, "max_busy_sm_clock_mhz": 1980,
                          "max_sm_clock_mhz": 1980, "threshold_mhz": 1782, "samples_below": 3}]}
    assert evidence_lines(strict) == ["GPU 1: busy SM clock 1380–1980 MHz of 1980; 3 busy samples below 1782 MHz"]
    # an idle GPU measured no clock at all: its line, with no number in it, is dropped
    idle = {"samples": None, "clocks": [{"gpu": 0, "busy_samples": 0, "max_sm_clock_mhz": None,
                                         "min_busy_sm_clock_mhz": None, "max_busy_sm_clock_mhz": None}]}
    assert evidence_lines(idle) == []
    # a build result without its timing says nothing about it rather than "n/a s, n/a ninja steps"
    facts, _, _ = details("build", {"arch": "sm_90"})
    assert [(f.label, f.value) for f in facts] == [("arch", "sm_90")]


def test_the_example_sessions_evidence_has_no_n_a(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The slip as a user saw it: `n/a busy samples below n/a MHz` on every bench of a session."""
    ws = tmp_path / "examples"
    shutil.copytree(ROOT / "examples", ws)
    session = "20261123-0849-2108-reach-sdpa-s-flash-backend-with-the"
    assert main(["--workspace", str(ws), "export", session, "--format", "md"]) == 0
    capsys.readouterr()
    evidence = [line for line in (ws / "sessions" / session / "REPORT.md").read_text().splitlines()
                if line.startswith("- **evidence:**")]
    assert "- **evidence:** GPU 0: busy SM clock 1380–1980 MHz of 1980" in evidence
    assert not [line for line in evidence if "n/a" in line]


# 3. An empty per-phase GPU table says the true reason -------------------------------------------


def write_track(ref: SessionRef, t0: float, t1: float) -> None:
    rows = [TrackRow(t, 0, util=50.0, power_w=300.0, temp_c=60.0, sm_clock_mhz=1900.0)
            for t in range(int(t0), int(t1), 5)]
    (ref.path / TRACK_NAME).write_text("".join(json.dumps(row_json(r)) + "\n" for r in rows))


def phase_change(t: float) -> tuple[Event, Event]:
    return ev.phase_ended(t, "Environment", "done", t - T, 600), ev.phase_started(t, "Baseline")


def test_a_cockpit_that_was_open_but_saw_no_gpu_is_not_said_to_have_been_closed(
        ws: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    ref = create_session(ws, Config(), "a laptop without NVML", "optimize", T)
    journal(ref, ev.app_opened(T + 1, 4242), *phase_change(T + 120), ev.app_closed(T + 300, 4242, "quit"))
    said = "No per-phase GPU summary: the open cockpit saw no GPU over NVML."
    assert build_report(ws, ref, T + 400).gpu_phases_note == said
    texts = exported(ws, ref, capsys)
    assert said in texts["REPORT.md"] and f"<p>{said}</p>" in texts["report.html"]
    for name in ("REPORT.md", "report.html"):
        assert "not open" not in texts[name]


def test_phases_ended_from_a_shell_with_no_cockpit_open_are_said_to_be(ws: Workspace) -> None:
    ref = create_session(ws, Config(), "headless over ssh", "optimize", T)
    journal(ref, ev.app_opened(T + 1, 7), ev.app_closed(T + 60, 7, "quit"), *phase_change(T + 120))
    write_track(ref, T, T + 200)  # `cockpit telemetry track` kept the GPUs all along
    note = build_report(ws, ref, T + 400).gpu_phases_note
    assert note == ("No per-phase GPU summary: every phase ended while no cockpit was open (cockpit phase "
                    "or cockpit end, from a shell); an open cockpit writes one as a phase ends.")


def test_when_the_reason_cannot_be_known_the_report_says_only_that_there_is_none(ws: Workspace) -> None:
    # the cockpit was open and saw a GPU, yet no summary: a shell beside it ended the phase, or an
    # older cockpit did; the journal cannot tell which
    ref = create_session(ws, Config(), "open and watching", "optimize", T)
    journal(ref, ev.app_opened(T + 1, 9), *phase_change(T + 120), ev.app_closed(T + 300, 9, "quit"))
    write_track(ref, T + 1, T + 300)
    assert build_report(ws, ref, T + 400).gpu_phases_note == "No per-phase GPU summary in the journal."


def test_before_any_phase_has_ended_the_report_says_so(ws: Workspace) -> None:
    running = create_session(ws, Config(), "just started", "optimize", T)
    assert build_report(ws, running, T + 60).gpu_phases_note == "No per-phase GPU summary yet: no phase has ended."
    idle = create_session(ws, Config(), "timer never started", "optimize", T + 1, start_timer=False, tag="beef")
    assert (build_report(ws, idle, T + 60).gpu_phases_note
            == "No per-phase GPU summary: the phase timer was never started.")


def test_the_reason_is_for_readers_of_the_pages_not_a_field_of_report_json(ws: Workspace) -> None:
    ref = create_session(ws, Config(), "json stays version 3", "optimize", T)
    report = build_report(ws, ref, T + 60)
    text = dumps(report)
    assert "gpu_phases_note" not in json.loads(text) and report.gpu_phases_note is not None
    assert loads(text) == report and loads(text).gpu_phases_note is None


# 4. Phase names on the chart never overlap --------------------------------------------------------

LABEL = re.compile(r'<g id="phase-label-(\d+)"><title>([^<]*)</title>\s*<text style="([^"]*)" '
                   r'x="([-\d.]+)" y="([-\d.]+)"[^>]*>([^<]*)</text>')


def label_box(style: str, x: float, y: float, text: str) -> tuple[float, float, float, float]:
    """(left, top, right, bottom) in SVG points, estimated as 0.6 × the font size per character
    and from an ascent of one font size above the baseline to a descent of 0.3 below it."""
    size = float(re.search(r"font-size: ([\d.]+)px", style).group(1))  # type: ignore[union-attr]
    return x, y - size, x + len(text) * 0.6 * size, y + 0.3 * size


def intersect(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def test_short_phases_side_by_side_never_print_their_names_over_each_other(ws: Workspace) -> None:
    ref = create_session(ws, Config(), "a morning of quick phases", "optimize", T)
    visits = ["Environment", "Baseline", "Profile", "Fix", "Evaluate", "Profile", "Fix", "Evaluate",
              "Fix", "Evaluate", "Document"]
    events: list[Event] = []
    for i, (done, following) in enumerate(pairwise(visits), start=1):
        events += [ev.phase_ended(T + 20 * i, done, "done", 20, 600), ev.phase_started(T + 20 * i, following)]
    journal(ref, *events)
    write_track(ref, T, T + 1200)  # 20 minutes: each 20 s phase is ~11 points wide on the chart
    svg = render_chart(build_report(ws, ref, T + 1200))
    labels = [(int(i), title, label_box(style, float(x), float(y), text), text)
              for i, title, style, x, y, text in LABEL.findall(svg)]
    assert labels, "no phase label was drawn"
    for n, (_, _, box, _) in enumerate(labels):
        for _, _, other, _ in labels[n + 1:]:
            assert not intersect(box, other), f"labels overlap: {labels}"
    assert len({box[1] for _, _, box, _ in labels}) == 2  # staggered over two rows
    for _, title, _, text in labels:
        assert text == title or (text.endswith("…") and title.startswith(text[:-1]))
    # every visit keeps its name as a tooltip, drawn or not
    titles = re.findall(r'<g id="phase-(\d+)"><title>([^<]*)</title>', svg)
    assert [name for _, name in titles] == visits


def test_label_placement_keeps_crowded_names_apart_and_inside_the_drawing() -> None:
    phases = [(f"phase number {i}", 3.0 * i) for i in range(60)] + [("last", 650.0)]
    labels = place_labels(phases, 668.0)
    drawn = [label for label in labels if label.text]
    assert len(labels) == len(phases) and {label.row for label in drawn} == {0, 1}
    for row in (0, 1):
        spans = sorted((label.x_pt, label.x_pt + width_pt(label.text)) for label in drawn if label.row == row)
        assert all(a[1] <= b[0] for a, b in pairwise(spans))
    assert all(label.x_pt + width_pt(label.text) <= 668.0 for label in drawn)
    roomy = place_labels([("Environment", 0.0), ("Baseline", 300.0)], 668.0)
    assert [(label.text, label.row) for label in roomy] == [("Environment", 0), ("Baseline", 0)]


# 5. The docs say what the cockpit does ---------------------------------------------------------------


def test_the_docs_name_the_export_verb_the_schema_version_and_the_session_folders_as_they_are() -> None:
    docs = [ROOT / "README.md", ROOT / "sessions" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    for path in docs:
        assert not re.search(r"`cockpit report\b", path.read_text()), f"{path.name}: the verb is `cockpit export`"
    readme = (ROOT / "README.md").read_text()
    assert all(int(v) == SCHEMA_VERSION for v in re.findall(r'"schema_version":\s*(\d+)', readme))
    schema_doc = (ROOT / "docs" / "report-schema.md").read_text()
    assert schema_doc.startswith(f"# report.json, schema version {SCHEMA_VERSION}\n")
    sessions = (ROOT / "sessions" / "README.md").read_text()
    assert sessions.startswith("# sessions/\n\nOne folder per cockpit session, `YYYYMMDD-HHMM-xxxx-slug/`")
    example = re.search(r"`(\d{8}-\d{4}-[0-9a-f]{4}-[a-z0-9-]+)/`", sessions)
    assert example is not None
    started = datetime(2026, 11, 23, 9, 15, tzinfo=timezone.utc).timestamp()
    assert example.group(1) == new_session_id(started, slugify("vectorize K loads"), "a3f1")
