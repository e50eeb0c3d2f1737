"""The gates run the Python that has the engineer's CUDA torch, not necessarily the cockpit's own:
on a PEP 668 box the cockpit lives in a venv of its own while the image's torch is elsewhere."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cockpit.config import ConfigError, load_config
from cockpit.config.gates import Gates
from cockpit.errors import CockpitError
from cockpit.gates.gate import GateContext
from cockpit.gates.interpreter import candidates, forget, gates_python
from cockpit.gates.run import python_env
from cockpit.user_cache import user_cache


def interpreter(folder: Path, name: str = "python3") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    exe = folder / name
    exe.write_text("#!/bin/sh\nexit 0\n")
    exe.chmod(0o755)
    return exe


class Asker:
    """What each interpreter answers to "import torch", and how often it was asked."""

    def __init__(self, answers: dict[Path, str | None]) -> None:
        self.answers = {str(p.resolve()): a for p, a in answers.items()}
        self.asked: list[str] = []

    def __call__(self, python: str) -> str | None:
        self.asked.append(python)
        return self.answers.get(str(Path(python).resolve()))


@pytest.fixture(autouse=True)
def fresh() -> None:
    forget()


def test_the_python_with_a_cuda_torch_wins_over_the_cockpits_own_cpu_one(tmp_path: Path) -> None:
    own = interpreter(tmp_path / "cockpit-venv" / "bin", "python")
    image = interpreter(tmp_path / "opt" / "torch" / "bin")
    asker = Asker({own: "2.13.0+cpu (CPU only)", image: "2.11.0+cu130 (CUDA 13.0)"})
    env = {"PATH": str(image.parent)}
    found = gates_python(Gates(), tmp_path, env, str(own), asker)
    assert (found.path, found.how, found.torch) == (str(image), "python3 on PATH", "2.11.0+cu130 (CUDA 13.0)")


def test_an_active_venv_is_asked_first_and_nothing_with_torch_falls_back_to_the_cockpits_own(
        tmp_path: Path) -> None:
    own = interpreter(tmp_path / "own" / "bin", "python")
    venv = tmp_path / "work-venv"
    interpreter(venv / "bin", "python")
    found = gates_python(Gates(), tmp_path, {"VIRTUAL_ENV": str(venv), "PATH": ""}, str(own),
                         Asker({venv / "bin" / "python": "2.11.0+cu128 (CUDA 12.8)"}))
    assert found.how == "the active venv"
    forget()
    none = gates_python(Gates(), tmp_path / "other", {"PATH": ""}, str(own), Asker({}))
    assert (none.path, none.torch) == (str(own), None)
    assert none.how == "the cockpit's own: no Python here imports torch"


def test_each_interpreter_is_asked_once_until_it_changes(tmp_path: Path) -> None:
    own = interpreter(tmp_path / "own" / "bin", "python")
    asker = Asker({own: "2.11.0+cu130 (CUDA 13.0)"})
    gates_python(Gates(), tmp_path, {"PATH": ""}, str(own), asker)
    forget()  # a new cockpit process: the answer is read from the user's cache
    gates_python(Gates(), tmp_path, {"PATH": ""}, str(own), asker)
    assert len(asker.asked) == 1 and (user_cache("pythons", tmp_path) / "pythons.json").exists()
    assert not (tmp_path / "build").exists()  # never in the workspace: looking writes nothing there
    forget()
    os.utime(own, ns=(1, 1))  # the venv was rebuilt
    gates_python(Gates(), tmp_path, {"PATH": ""}, str(own), asker)
    assert len(asker.asked) == 2


def test_gates_python_in_cockpit_toml_is_used_and_a_missing_one_is_one_line(tmp_path: Path) -> None:
    conda = interpreter(tmp_path / "conda" / "bin", "python")
    (tmp_path / "cockpit.toml").write_text(f'[gates]\npython = "{conda}"\n')
    gates = load_config(tmp_path).gates
    found = gates_python(gates, tmp_path, {"PATH": ""}, "/usr/bin/python3", Asker({conda: None}))
    assert found.path == str(conda) and found.how.startswith("[gates] python (")
    assert found.how.endswith("cockpit.toml:2)") and found.torch is None  # the env gate then says so
    forget()
    (tmp_path / "cockpit.toml").write_text('[gates]\npython = "/nowhere/python"\n')
    with pytest.raises(CockpitError, match=r"cockpit.toml:2: gates.python = '/nowhere/python' does not run here"):
        gates_python(load_config(tmp_path).gates, tmp_path, {"PATH": ""}, "/usr/bin/python3", Asker({}))
    (tmp_path / "cockpit.toml").write_text("[gates]\npython = 3\n")
    with pytest.raises(ConfigError, match=r"cockpit.toml:2: .*is not an interpreter"):
        load_config(tmp_path)


def test_every_interpreter_is_tried_once_however_it_is_reached(tmp_path: Path) -> None:
    real = interpreter(tmp_path / "bin", "python3.12")
    (tmp_path / "bin" / "python3").symlink_to(real)
    found = candidates({"PATH": str(tmp_path / "bin")}, str(real))
    assert [how for _, how in found] == ["the cockpit's own"]


def test_the_env_gate_is_told_which_python_runs_the_gates_and_why(tmp_path: Path) -> None:
    ctx = GateContext(tmp_path, tmp_path, "001-env", python="/opt/torch/bin/python3", python_how="python3 on PATH")
    assert python_env(ctx)["COCKPIT_GATES_PYTHON_HOW"] == "python3 on PATH"
    assert python_env(GateContext(tmp_path, tmp_path, "001-env")) == {}


def test_the_env_gate_names_the_gates_python_and_the_cockpits_own(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from cockpit.probes.env.toolchain import check_python

    monkeypatch.setenv("COCKPIT_GATES_PYTHON_HOW", "python3 on PATH")
    monkeypatch.setenv("COCKPIT_OWN_PYTHON", "/home/me/.cockpit-venv/bin/python")
    check = check_python(None)  # type: ignore[arg-type]  # the check reads no probe state
    assert check.status == "pass" and check.value.startswith(f"{sys.version_info.major}.")
    assert check.value.endswith(f"({sys.executable}), the gates' (python3 on PATH); the cockpit runs in "
                                "/home/me/.cockpit-venv/bin/python")
