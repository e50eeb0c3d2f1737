"""Two cockpits on one session (two SSH logins, the TUI and a headless `cockpit gate`): each gate
run gets its own id and its own log, whatever the other has folded."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from cockpit.gates.run import next_run_id
from cockpit.session.journal import read_journal
from cockpit.session.state import fold
from cockpit.session.workspace import SessionRef
from tests.trusted import trust


def test_the_second_run_started_from_the_same_state_takes_the_next_id(session: SessionRef) -> None:
    state = fold(read_journal(session.journal).events)
    assert next_run_id(state, "env", session.path) == "001-env"
    assert next_run_id(state, "env", session.path) == "002-env"  # 001's log is the other cockpit's
    assert sorted(p.name for p in (session.path / "logs").iterdir()) == ["001-env.log", "002-env.log"]


def test_two_headless_gates_at_once_keep_both_logs(tmp_path: Path) -> None:
    code = "import sys, time; time.sleep(1.0); print('run', sys.argv[1])"
    (tmp_path / "cockpit.toml").write_text(
        f'[gates.env]\ncommand = ["{sys.executable}", "-c", "{code}", "$RUN"]\n'.replace("$RUN", "x"))
    trust(tmp_path)
    cli = [sys.executable, "-m", "cockpit", "--workspace", str(tmp_path)]
    subprocess.run([*cli, "new", "two logins"], check=True, capture_output=True, timeout=60)
    runs = [subprocess.Popen([*cli, "gate", "env", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True) for _ in range(2)]
    reports = [json.loads(r.communicate(timeout=120)[0]) for r in runs]
    assert sorted(r["run_id"] for r in reports) == ["001-env", "002-env"]
    assert len({r["log"] for r in reports}) == 2
    for r in reports:
        assert Path(r["log"]).read_text().count("run x") == 1  # neither log overwritten by the other
    [journal] = tmp_path.glob("sessions/*/journal.jsonl")
    started = [e["run_id"] for e in read_journal(journal).events if e["type"] == "gate_started"]
    assert sorted(started) == ["001-env", "002-env"]
