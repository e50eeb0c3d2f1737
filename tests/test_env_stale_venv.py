"""A stale `VIRTUAL_ENV` (its bin/ no longer on PATH) makes the gates run another Python than the
cockpit's: the env gate warns in one line naming both and what to do (issue 36)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from cockpit.probes.env.run import format_line
from cockpit.probes.env.toolchain import check_python, stale_venv

OWN = "/home/me/.cockpit-venv/bin/python"


def test_a_venv_not_on_path_running_the_gates_is_named(tmp_path: Path) -> None:
    venv = tmp_path / "old-venv"
    (venv / "bin").mkdir(parents=True)
    env = {"VIRTUAL_ENV": str(venv), "PATH": "/usr/bin"}
    assert stale_venv(env, str(venv), OWN) == str(venv)
    assert stale_venv({**env, "PATH": f"{venv / 'bin'}:/usr/bin"}, str(venv), OWN) is None  # active
    assert stale_venv(env, "/usr", OWN) is None  # the gates' Python is not that venv's
    assert stale_venv(env, str(venv), None) is None  # run by hand, not by the cockpit
    assert stale_venv(env, str(venv), str(venv / "bin" / "python")) is None  # the cockpit's own venv
    assert stale_venv({"PATH": "/usr/bin"}, str(venv), OWN) is None


def test_the_env_gate_warns_in_one_line_naming_both_pythons(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.setenv("COCKPIT_GATES_PYTHON_HOW", "the active venv")
    monkeypatch.setenv("COCKPIT_OWN_PYTHON", OWN)
    check = check_python(None)  # type: ignore[arg-type]  # the check reads no probe state
    line = format_line(check)
    assert check.status == "warn" and "\n" not in line
    assert sys.executable in line and OWN in line and f"VIRTUAL_ENV={sys.prefix}" in line
    assert "unset VIRTUAL_ENV" in line and "[gates] python" in line


def test_an_active_venv_still_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)
    monkeypatch.setenv("PATH", f"{Path(sys.prefix) / 'bin'}:/usr/bin")
    monkeypatch.setenv("COCKPIT_GATES_PYTHON_HOW", "the active venv")
    monkeypatch.setenv("COCKPIT_OWN_PYTHON", OWN)
    assert check_python(None).status == "pass"  # type: ignore[arg-type]
