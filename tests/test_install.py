"""The README's install works where our users are: on a distribution's system Python that PEP 668
marks as externally managed (Debian 12, Ubuntu 24.04: `pip install` there fails with
"externally-managed-environment"), the cockpit goes into a `.venv` made from it; in a venv, a
conda env or a Python of one's own, into that Python itself. The marking is pip's own test (the
stdlib folder's EXTERNALLY-MANAGED file, outside a venv), made here by tests/fixtures/pep668."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PICK = REPO / "scripts" / "cockpit-python.sh"
PEP668 = REPO / "tests" / "fixtures" / "pep668"


def system_python(tmp_path: Path, marked: bool) -> dict[str, str]:
    """An environment whose `python3` is this interpreter, as a distribution ships it."""
    shim = tmp_path / "shim"
    shim.mkdir(exist_ok=True)
    (shim / "python3").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    (shim / "python3").chmod(0o755)
    env = {**os.environ, "PATH": f"{shim}{os.pathsep}{os.environ.get('PATH', '')}", "PIP_NO_INDEX": "1"}
    if marked:
        stdlib = tmp_path / "stdlib"
        stdlib.mkdir(exist_ok=True)
        (stdlib / "EXTERNALLY-MANAGED").write_text("[externally-managed]\nError=managed by the distribution\n")
        env.update(PYTHONPATH=str(PEP668), COCKPIT_PEP668_STDLIB=str(stdlib))
    return env


def in_venv() -> bool:
    return sys.prefix != sys.base_prefix


@pytest.mark.skipif(in_venv(), reason="this interpreter is a venv: a venv is never externally managed")
def test_pip_refuses_a_marked_system_python_as_on_debian_and_ubuntu(tmp_path: Path) -> None:
    env = system_python(tmp_path, marked=True)
    out = subprocess.run(["python3", "-m", "pip", "install", "--no-deps", "nothing-at-all"], env=env,
                         capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert out.returncode != 0 and "externally-managed-environment" in out.stderr


@pytest.mark.skipif(in_venv(), reason="this interpreter is a venv: a venv is never externally managed")
def test_on_a_marked_system_python_the_cockpit_goes_into_a_venv_pip_may_install_into(tmp_path: Path) -> None:
    env = system_python(tmp_path, marked=True)
    picked = subprocess.run(["sh", str(PICK)], env=env, capture_output=True, text=True, timeout=300,
                            cwd=tmp_path)
    assert picked.returncode == 0, picked.stderr
    py = picked.stdout.strip()
    assert py == str(tmp_path / ".venv" / "bin" / "python")
    # the system site-packages stay visible (a torch installed there is seen)
    assert "include-system-site-packages = true" in (tmp_path / ".venv" / "pyvenv.cfg").read_text()
    out = subprocess.run([py, "-m", "pip", "install", "--no-deps", "nothing-at-all"], env=env,
                         capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert "externally-managed-environment" not in out.stderr  # refused only for want of the index
    again = subprocess.run(["sh", str(PICK)], env=env, capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert again.stdout.strip() == py and again.stderr == ""  # made once


def test_a_python_pip_may_install_into_is_used_as_it_is(tmp_path: Path) -> None:
    env = system_python(tmp_path, marked=False)
    picked = subprocess.run(["sh", str(PICK)], env=env, capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert picked.returncode == 0 and picked.stdout.strip() == str(tmp_path / "shim" / "python3")
    assert not (tmp_path / ".venv").exists()


def test_both_readme_commands_install_into_the_python_the_script_picks() -> None:
    readme = (REPO / "README.md").read_text()
    commands = re.findall(r"```bash\n(.+?)\n```", readme)[:2]
    for command in commands:
        assert 'py=$(sh scripts/cockpit-python.sh)' in command
        assert "python3 -m pip" not in command  # never pip into a Python that may refuse it
        assert '"$py" -m pip install -q -e ' in command
