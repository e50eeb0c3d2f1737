"""A gate that needs torch, run where torch does not import or sees no GPU, ends with one line
that says so and what to do: that line is the summary; the traceback stays in the log file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.trusted import trust

REPO = Path(__file__).resolve().parent.parent
NO_TORCH = REPO / "tests" / "fixtures" / "no_torch"


def run_gate(ws: Path, gate: str, **env: str) -> tuple[int, dict[str, object], str]:
    base = {**os.environ, **env}
    ws.mkdir(exist_ok=True)
    (ws / "workloads").mkdir(exist_ok=True)
    (ws / "workloads" / "attention.py").write_text((REPO / "workloads" / "attention" / "attention.py").read_text())
    (ws / "cockpit.toml").write_text('[workload]\nmodule = "workloads/attention.py"\n')
    trust(ws)
    subprocess.run([sys.executable, "-m", "cockpit", "--workspace", str(ws), "new", "no torch here"],
                   check=True, capture_output=True, cwd=REPO, timeout=60)
    out = subprocess.run([sys.executable, "-m", "cockpit", "--workspace", str(ws), "gate", gate, "--json"],
                         capture_output=True, text=True, cwd=REPO, env=base, timeout=120)
    report = json.loads(out.stdout)
    return out.returncode, report, Path(str(report["log"])).read_text()


def without_torch() -> str:
    return os.pathsep.join(filter(None, [str(NO_TORCH), os.environ.get("PYTHONPATH")]))


@pytest.mark.parametrize("gate", ["correctness", "bench"])
def test_without_torch_the_gate_says_so_in_one_line(gate: str, tmp_path: Path) -> None:
    code, report, log = run_gate(tmp_path, gate, PYTHONPATH=without_torch())
    assert code == 2 and report["status"] == "error"
    assert report["summary"] == (f"torch does not import in {sys.executable} (No module named 'torch'): "
                                 "install torch's CUDA build in this python, or start the cockpit from "
                                 "the environment that has it")
    assert "Traceback (most recent call last)" in log and "ModuleNotFoundError" in log
    assert report["summary"].count("\n") == 0


def test_without_a_gpu_the_gate_says_why_and_where_to_look(tmp_path: Path) -> None:
    code, report, log = run_gate(tmp_path, "correctness", CUDA_VISIBLE_DEVICES="")
    summary = str(report["summary"])
    assert code == 2 and summary.startswith("no CUDA device: torch ")
    assert "`cockpit gate env`" in summary and "\n" not in summary and "Traceback" not in log


def test_the_profile_gate_passes_on_its_targets_one_line(tmp_path: Path) -> None:
    """ncu runs the target; a target that cannot import torch must not read as `no kernel matched`."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    ncu = bin_dir / "ncu"  # stands in for Nsight Compute: runs the application, profiles nothing
    ncu.write_text('#!/bin/sh\nwhile [ "$1" != "-f" ]; do shift; done\nshift\n"$@"\n'
                   'echo "==WARNING== No kernels were profiled."\n')
    ncu.chmod(0o755)
    ws = tmp_path / "ws"
    code, report, log = run_gate(ws, "profile", PYTHONPATH=without_torch(),
                                 PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    assert code == 2 and report["status"] == "error"
    assert report["summary"] == (f"cockpit-profile: cannot tell what to profile: torch does not import in "
                                 f"{sys.executable} (No module named 'torch'): install torch's CUDA build in "
                                 "this python, or start the cockpit from the environment that has it")
    assert "Traceback (most recent call last)" in log
