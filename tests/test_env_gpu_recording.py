"""The Env gate on a real H200 (recorded by tests/fixtures/gpu/capture_env.sh): the verdict,
and what the engineer sees of it in the cockpit."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from cockpit.config import Config
from cockpit.gates.env.gate import env_verdict, read_env_result
from cockpit.session import events as ev
from cockpit.session.journal import JournalWriter
from cockpit.session.workspace import SessionRef, Workspace, create_session
from cockpit.ui.pictures.screenshot import screenshot_app

GPU = Path(__file__).parent / "fixtures" / "gpu"
T0 = 1_795_000_000.0


def recorded_env_session(ws: Workspace) -> tuple[SessionRef, float]:
    """A session whose first gate run is the H200 recording (its log copied into the session)."""
    ref = create_session(ws, Config(), "bring up the H200 box", "optimize", T0)
    log = ref.path / "logs" / "001-env.log"
    log.parent.mkdir()
    shutil.copy(GPU / "env-run-h200.log", log)
    result = json.loads((GPU / "env-result-h200.json").read_text())
    checks = read_env_result(GPU / "env-result-h200.json")
    status, summary = env_verdict(checks)
    writer = JournalWriter(ref.journal)
    writer.append(ev.gate_started(T0 + 20, "001-env", "env", ("python3", "env_probe.py"), str(log), 4242))
    writer.append(ev.gate_finished(T0 + 25.2, "001-env", "env", status, summary, 5.16, 0, str(log),
                                   result))
    writer.close()
    return ref, T0 + 60


def test_the_h200_box_passes_with_three_warnings() -> None:
    checks = {c.name: c for c in read_env_result(GPU / "env-result-h200.json")}
    assert env_verdict(checks.values()) == ("warn", "3 warnings, 13 passed")
    assert checks["cuda_available"].value == "True: NVIDIA H200, sm_90"
    assert checks["nvcc"].status == "pass" and "release 13.0" in checks["nvcc"].value
    assert checks["ncu_counters"].value == "RmProfilingAdminOnly: 0"
    assert {n for n, c in checks.items() if c.status == "warn"} == {
        "torch_lib_on_loader_path", "terminal_multiplexer", "extension"}


async def test_the_gate_detail_lists_warnings_first_with_their_fixes(ws) -> None:
    ref, now = recorded_env_session(ws)
    app = screenshot_app(ws, Config(), ref, now)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        row = app.gates.rows()[0]
        assert (row.state, row.summary, row.duration_s) == ("warn", "3 warnings, 13 passed", 5.16)
        result = app.gate_detail.query_one("#gate-result").render()
        lines = app.gate_detail.output_log.lines
        assert any("NVIDIA H200, sm_90" in line for line in lines)
        assert result is not None


def test_snapshot_of_the_recorded_env_gate(snap_compare, ws) -> None:
    ref, now = recorded_env_session(ws)
    assert snap_compare(screenshot_app(ws, Config(), ref, now), terminal_size=(160, 48))
