"""`cockpit gate NAME`: headless runs recorded in the session, with the documented exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.no_gpu import no_gpu_env
from tests.trusted import trust


def cockpit(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cockpit", "--workspace", str(cwd), *args],
                          capture_output=True, text=True, timeout=120, env=no_gpu_env())


def journal(ws: Path) -> list[dict]:
    [path] = ws.glob("sessions/*/journal.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_env_gate_on_a_machine_without_a_gpu_fails_with_the_fix(tmp_path: Path) -> None:
    cockpit("new", "bring-up", cwd=tmp_path)
    result = cockpit("gate", "env", "--json", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)  # stdout is one JSON object and nothing else
    assert report["gate"] == "env" and report["status"] == "fail"
    checks = {c["name"]: c for c in report["result"]["checks"]}
    assert checks["cuda_available"]["status"] == "fail"
    assert "nvidia-smi" in checks["cuda_available"]["fix"]
    assert "cuda_available" in report["summary"]
    assert "PASS  python" in result.stderr  # the live log went to stderr
    started, finished = [e for e in journal(tmp_path) if e["type"].startswith("gate_")]
    assert (started["run_id"], finished["run_id"]) == ("001-env", "001-env")
    assert finished["result"]["checks"] == report["result"]["checks"]
    assert Path(report["log"]).read_text().count("\n") >= len(checks)


def test_a_custom_gate_command_from_the_config_is_judged_by_its_exit_code(tmp_path: Path) -> None:
    (tmp_path / "cockpit.toml").write_text(
        '[gates.env]\ncommand = "echo checking && exit 0"\nshell = true\n')
    trust(tmp_path)
    cockpit("new", "custom", cwd=tmp_path)
    result = cockpit("gate", "env", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("env: PASS — exit 0: checking")


def test_a_gate_that_cannot_start_is_exit_2(tmp_path: Path) -> None:
    (tmp_path / "cockpit.toml").write_text('[gates.env]\ncommand = ["no-such-tool-xyz"]\n')
    trust(tmp_path)
    cockpit("new", "broken", cwd=tmp_path)
    result = cockpit("gate", "env", "--json", cwd=tmp_path)
    assert result.returncode == 2
    assert json.loads(result.stdout)["status"] == "error"


def test_without_an_open_session_the_gate_says_how_to_start_one(tmp_path: Path) -> None:
    result = cockpit("gate", "env", cwd=tmp_path)
    assert result.returncode == 2
    assert "cockpit new" in result.stderr and result.stderr.count("\n") == 1
