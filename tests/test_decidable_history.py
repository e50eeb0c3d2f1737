"""A bench suspect of named configs alone is a measurement: history sums the session up with its
headline over the other configs and says how many it left out, regressions compare only the configs
it vouches for, and the PR says the outcome instead of "no valid benchmark". A bench suspect
window-wide is still none. The runs are the recorded H100 bench judged as the gate judges it, with
blocks that never got clean added to copies of it, journaled as the gate journals them (a result
this big goes to a file; the journal keeps its headline)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cockpit.cli import main
from cockpit.config import Config
from cockpit.gates.bench.gate import judge_bench
from cockpit.gates.bench.measured import read_measured
from cockpit.gates.bench.validity_rules import probe_validity
from cockpit.report.history_reader import workspace_summaries
from cockpit.session import events as ev
from cockpit.session import timer
from cockpit.session.journal import JournalWriter, read_journal
from cockpit.session.results import gate_finished_event
from cockpit.session.state import fold
from cockpit.session.workspace import SessionRef, Workspace, create_session
from tests.test_throttled_box_verdict import h100, never_clean, ours_at

DAY = 1_795_305_600.0


def bench_result(data: dict) -> tuple[str, dict]:
    verdict = judge_bench(read_measured(data), probe_validity(read_measured(data)), None, Config().thresholds, "b.json")
    return verdict.status, verdict.result.to_json()


def session(ws: Workspace, start: float, data: dict) -> SessionRef:
    ref = create_session(ws, Config(), "tile the rows", "optimize", start)
    status, result = bench_result(data)
    writer = JournalWriter(ref.journal)
    log = f"sessions/{ref.id}/logs/001-bench.log"
    writer.append(ev.gate_started(start + 60, "001-bench", "bench", ("x",), log, 1))
    writer.append(gate_finished_event(ref.path, ws.root, start + 160, "001-bench", "bench", status, "recorded",
                                      100.0, 0, log, result))
    for event in timer.end_session(fold(read_journal(ref.journal).events), start + 3600):
        writer.append(event)
    writer.close()
    return ref


def test_a_run_suspect_of_six_configs_is_the_sessions_measurement_over_the_other_fifty(ws: Workspace) -> None:
    data = h100()
    left = never_clean(data, [50, 51, 52, 53, 54, 55])
    session(ws, DAY, data)
    [summary], _ = workspace_summaries(ws, now=DAY + 86400)
    assert summary.best_speedup is not None and summary.best_run == "001-bench"
    assert summary.outcome.endswith("(6 configs left out: blocks never clean)")
    assert len(summary.best_ms) == 50 and not set(left) & {c for c, _ in summary.best_ms}
    assert not set(left) & {c for c, _, _ in summary.best_ci}


def test_the_pr_states_the_outcome_of_a_run_suspect_of_named_configs(
        ws: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    data = h100()
    never_clean(data, [50, 51, 52, 53, 54, 55])
    ref = session(ws, DAY, data)
    assert main(["--workspace", str(ws.root), "export", ref.id, "--format", "pr"]) == 0
    text = Path(capsys.readouterr().out.strip()).read_text()
    outcome = next(line for line in text.splitlines() if line.startswith("- **Result**"))
    assert "no valid benchmark" not in outcome
    assert outcome.endswith("run 001-bench; 6 configs left out: blocks never clean; no interval: the bench recorded none")
    assert ("- **Validity** — SUSPECT \\(6 configs left out: blocks never clean; the rest decide\\): blocks never "
            "clean at B2 H16 S8192 D64 bf16 full \\(ours: SW thermal slowdown in 16 of 16 re-measures\\), ") in text
    assert text.count("\n- **Validity**") == 1 and "re-measures\\) and 3 more configs\n" in text


def test_a_run_suspect_window_wide_is_still_no_valid_benchmark(
        ws: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    data = ours_at(h100(), 1700)
    never_clean(data, [50])
    ref = session(ws, DAY, data)
    [summary], _ = workspace_summaries(ws, now=DAY + 86400)
    assert summary.best_speedup is None and summary.outcome == "no valid bench (1 suspect)"
    assert main(["--workspace", str(ws.root), "export", ref.id, "--format", "pr"]) == 0
    text = Path(capsys.readouterr().out.strip()).read_text()
    assert "- **Result** — `attention`: no valid benchmark: 1 run\\(s\\), all suspect or failed" in text
    # the verdict of the run that was not valid says why
    assert "\n- **Validity** — SUSPECT: " in text
