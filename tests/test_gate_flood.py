"""A gate that prints without end (a runaway print in a test, a verbose build) leaves the cockpit
light: the child writes its log itself, the pane shows its latest lines a few times a second,
and when it ends every line is in the log and the last one is on screen."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

from cockpit.clock import FakeClock
from cockpit.config import Config, GateConfig
from cockpit.session.workspace import SessionRef, Workspace
from cockpit.ui.app import CockpitApp
from tests.trusted import trust

from .waiting import until

LINES = 300_000
FLOOD = (f"import sys\nw = sys.stdout.write\nfor i in range({LINES}): "
         "w(f'[{i}] nvcc -O3 -arch=sm_90 -c attn_fwd.cu\\n')\nw('the end\\n')")


def record_log(app: CockpitApp) -> str:
    record = app.live.state.last_run("env") if app.live else None
    assert record is not None
    return str(Path(record.log).relative_to(app.workspace.root)) if Path(record.log).is_absolute() else record.log


async def test_a_flood_ends_with_every_line_in_the_log_and_the_last_one_on_screen(
        ws: Workspace, session: SessionRef) -> None:
    config = Config(gates={"env": GateConfig(command=(sys.executable, "-c", FLOOD))}, status_every_s=10**6)
    app = CockpitApp(ws, config, session, clock=FakeClock(), tick_s=3600, typing_gap_s=0)
    async with app.run_test(size=(150, 44)) as pilot:
        pane = app.gate_detail.output_log
        written: list[str] = []  # all the pane was given: a busy box's last look may be no flood,
        write = pane.write_lines  # its few thousand lines pushing the flood's note out of the pane
        pane.write_lines = lambda lines, *a, **kw: (written.extend(lines), write(lines, *a, **kw))[1]  # type: ignore[method-assign]
        await pilot.press("r")
        run = app.gates.run  # None when the flood was over before the key press returned
        if run is not None:
            assert await asyncio.to_thread(run.wait, 60)
        # following the end: the last line is in view
        await until(pilot, lambda: pane.lines[-1:] == ["the end"] and pane.scroll_y == pane.max_scroll_y,
                    "the flood's last line, in view")
        assert any(line.endswith("not shown here: the log has them all") for line in written)
        assert len(pane.lines) < LINES / 10  # only the latest lines of each look were drawn
        # Counted exactly up to a budget per look, estimated past it: "300,001 lines" or "~300,4xx lines".
        counted, log = str(app.gate_detail.border_subtitle).split(" · ")
        assert counted.endswith(" lines") and log == f"log {record_log(app)}"
        assert abs(int(counted.strip("~").split()[0].replace(",", "")) - (LINES + 1)) < LINES / 20
        record = app.live.state.last_run("env") if app.live else None
        assert record is not None and record.status == "pass"
    lines = (ws.root / record.log).read_text().splitlines()
    assert lines[2:-1] == [f"[{i}] nvcc -O3 -arch=sm_90 -c attn_fwd.cu" for i in range(LINES)] + ["the end"]
    assert lines[-1].startswith("# exit 0")


def test_a_headless_gate_prints_the_latest_lines_of_a_flood_and_says_what_it_left_out(tmp_path: Path) -> None:
    (tmp_path / "cockpit.toml").write_text(
        f'[gates.env]\ncommand = ["{sys.executable}", "-c", {json.dumps(FLOOD)}]\n')
    trust(tmp_path)
    cli = [sys.executable, "-m", "cockpit", "--workspace", str(tmp_path)]
    subprocess.run([*cli, "new", "flood"], check=True, capture_output=True, timeout=60)
    out = subprocess.run([*cli, "gate", "env", "--json"], capture_output=True, text=True, timeout=120)
    assert json.loads(out.stdout)["status"] == "pass"
    printed = out.stderr.splitlines()
    assert printed[-1] == "the end"
    assert any(line.startswith("cockpit: … ") and "not shown here (the log has them)" in line
               for line in printed)
    assert len(printed) < LINES / 10
    log = Path(json.loads(out.stdout)["log"]).read_bytes()
    assert log.count(b"\n[") == LINES
