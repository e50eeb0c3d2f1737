"""A build command cockpit.toml puts in place of the cockpit's (setup.py, CMake, make, plain nvcc)
has its log read as the cockpit's own build's: the failed step and its first error are the
summary, ptxas's lines fill the resource table, `[N/M]` shows for any ninja-driven build, and a
log no build wrote is one line that says where to read it. Every log here is a real build's
(tests/fixtures/builds, made by capture.sh there), played back by a replaced command."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cockpit.clock import SystemClock
from cockpit.config import load_config
from cockpit.gates.catalog import GATES
from cockpit.gates.gate import GateContext, Verdict
from cockpit.gates.log_follow import GateOutput
from cockpit.gates.result import GateResult
from cockpit.gates.run import GateRun, RecordedHere, gate_command, next_run_id
from cockpit.session.live import LiveSession
from cockpit.session.workspace import Workspace, create_session
from cockpit.ui.widgets.gate_results import render_result
from tests.trusted import trust

BUILDS = Path(__file__).parent / "fixtures" / "builds"
EXITS = dict(line.split() for line in (BUILDS / "exits.txt").read_text().splitlines())


def replaced_build(ws: Path, command: str) -> tuple[Verdict, list[str]]:
    """Run the build gate with `command` in its place, as `cockpit gate build` does: its verdict
    and the step the status line showed after each look at the output."""
    (ws / "cockpit.toml").write_text(f"[gates.build]\ncommand = {json.dumps(command)}\nshell = true\n")
    config = load_config(ws)
    ref = create_session(Workspace(ws), config, "read a replaced build", "optimize", SystemClock().now())
    live = LiveSession(ref)
    ctx = GateContext(ws, ref.path, next_run_id(live.state, "build", ref.path), config=config)
    steps: list[str] = []

    class Listener:
        def gate_output(self, run: GateRun, output: GateOutput) -> None:
            steps.append(run.activity().text)

        def gate_stalled(self, run: GateRun, silent_s: float) -> None: ...

        def gate_finished(self, run: GateRun, verdict: Verdict) -> None: ...

    gate = GATES["build"]
    run = GateRun(gate, gate_command(gate, ctx, config.gate("build")), ctx, live, SystemClock(),
                  RecordedHere(Listener()), custom_command=True)
    run.start()
    assert run.wait(60)
    live.close()
    assert run.verdict is not None
    return run.verdict, steps


def played(name: str) -> str:
    """A replaced build command that prints a recorded build's output and exits as it did."""
    return f"cat {BUILDS / name}.log; exit {EXITS[name]}"


def shown(result: GateResult | None) -> list[str]:
    from rich.console import Console

    console = Console(width=160, record=True, color_system=None)
    console.print(render_result("build", result))
    return [line.rstrip() for line in console.export_text().splitlines()]


@pytest.mark.parametrize("name", ["ninja-shell-syntax-error", "ninja-1.13-shell-syntax-error"])
def test_a_ninja_rule_that_is_a_broken_shell_line_names_the_target_and_the_shells_error(
        tmp_path: Path, name: str) -> None:
    """Before: `exit 1: ninja: build stopped: subcommand failed.` and an empty result."""
    verdict, steps = replaced_build(tmp_path, played(name))
    assert verdict.status == "fail"
    assert verdict.summary == 'FAILED: k.cuda.o — /bin/sh: 1: Syntax error: ")" unexpected'
    code = 2 if "1.13" in name else None  # ninja 1.12 and later say the step's exit code
    assert verdict.result.to_json()["failed_steps"] == [
        {"target": "k.cuda.o", "said": '/bin/sh: 1: Syntax error: ")" unexpected', "exit_code": code}]
    assert verdict.result.to_json()["steps"] == 2 and steps[-1].startswith("build gate [1/2] k.cuda.o)")


@pytest.mark.parametrize(("name", "target", "error"), [
    ("ninja-nvcc-syntax-error", "k.cuda.o", 'k.cu:4: expected a ";"'),
    ("make-nvcc-undefined", "k.o", 'k.cu:6: identifier "foo" is undefined'),
    ("cmake-ninja-undefined", "k.cu.o", 'k.cu:6: identifier "foo" is undefined'),
    ("cmake-make-undefined", "k.cu.o", 'k.cu:6: identifier "foo" is undefined'),
    ("setup-py-ninja-typo", "k.o", "k.cpp:3: expected ‘;’ before ‘}’ token"),
])
def test_a_failed_compile_names_the_step_that_failed_and_the_compilers_first_error(
        tmp_path: Path, name: str, target: str, error: str) -> None:
    verdict, _ = replaced_build(tmp_path, played(name))
    assert verdict.status == "fail"
    assert verdict.summary.startswith(f"FAILED: {target} — ") and verdict.summary.endswith(error)
    assert [step["target"] for step in verdict.result.to_json()["failed_steps"]] == [target]  # not make's parents
    assert verdict.result.to_json()["errors"][0]["kind"] == "compile"
    # make's own line and setup.py's traceback end those logs: neither is the summary
    assert "Error 2" not in verdict.summary and "RuntimeError" not in verdict.summary


def test_plain_nvcc_names_the_file_line_and_error(tmp_path: Path) -> None:
    verdict, _ = replaced_build(tmp_path, played("nvcc-undefined"))
    assert (verdict.status, verdict.summary) == ("fail", 'k.cu:6: identifier "foo" is undefined')


@pytest.mark.parametrize("name", ["nvcc-spills-ok", "cmake-ninja-spills-ok"])
def test_ptxas_lines_fill_the_resource_table_whatever_drives_the_build(tmp_path: Path, name: str) -> None:
    verdict, _ = replaced_build(tmp_path, played(name))
    assert verdict.status == "warn"  # a kernel that spills warns, as in the cockpit's own build
    assert verdict.summary.startswith("gather_sum (sm_90) spills 1696 bytes to local memory; built")
    assert "2 kernels: ≤24 regs, 1696 bytes spilled" in verdict.summary
    kernels = {k["label"]: k for k in verdict.result.to_json()["kernels"]}
    assert {(k["registers"], k["stack"], k["spill_stores"], k["spill_loads"], k["smem"])
            for k in kernels.values()} == {(24, 864, 848, 848, 0), (14, 0, 0, 0, 1024)}
    assert kernels["reverse_block"]["smem"] == 1024
    table = shown(verdict.result)
    assert any(line.split()[:5] == ["gather_sum", "24", "1696/864", "0", "KB"] for line in table)
    assert any(line.split()[:5] == ["reverse_block", "14", "0/0", "1", "KB"] for line in table)


def test_a_cmake_ninja_build_shows_its_progress_steps(tmp_path: Path) -> None:
    verdict, steps = replaced_build(tmp_path, played("cmake-ninja-spills-ok"))
    assert steps[-1] == "build gate [2/2] libk.so"
    assert verdict.result.to_json()["steps"] == 2 and "built (2 steps)" in verdict.summary


def test_a_setup_py_build_shows_ninjas_step(tmp_path: Path) -> None:
    _, steps = replaced_build(tmp_path, played("setup-py-ninja-typo"))
    assert any(step.startswith("build gate [1/1] k.o") for step in steps)


def test_a_log_of_garbage_bytes_is_one_line_that_says_where_to_read_it(tmp_path: Path) -> None:
    verdict, _ = replaced_build(tmp_path, played("garbage"))
    assert verdict.status == "fail"
    assert verdict.summary.startswith("exit 1: the build's log names no failed step or compiler error: "
                                      "read it at sessions/")
    assert verdict.summary.endswith("/logs/001-build.log") and "\ufffd" not in verdict.summary


def test_a_build_script_that_is_not_there_says_what_the_shell_said_and_where_the_log_is(
        tmp_path: Path) -> None:
    verdict, _ = replaced_build(tmp_path, "./build.sh")
    assert verdict.status == "fail"
    assert verdict.summary.startswith("exit 127: /bin/sh: 1: ./build.sh: not found; the build's log names "
                                      "no failed step or compiler error: read it at sessions/")


def test_a_build_that_prints_no_ptxas_lines_says_which_flag_gives_them(tmp_path: Path) -> None:
    verdict, _ = replaced_build(tmp_path, "echo compiled")
    assert (verdict.status, verdict.summary) == (
        "pass", "built; no ptxas lines in its log: add -Xptxas -v to nvcc's flags for each kernel's "
                "registers, spills and shared memory")


def test_cockpit_gate_build_prints_the_failed_step_and_exits_1(tmp_path: Path) -> None:
    """The issue's held-out log, through the CLI: one JSON object, exit 1."""
    (tmp_path / "cockpit.toml").write_text(
        f"[gates.build]\ncommand = {json.dumps(played('ninja-1.13-shell-syntax-error'))}\nshell = true\n")
    trust(tmp_path)
    subprocess.run([sys.executable, "-m", "cockpit", "--workspace", str(tmp_path), "new", "replaced"],
                   check=True, capture_output=True, timeout=60)
    out = subprocess.run([sys.executable, "-m", "cockpit", "--workspace", str(tmp_path), "gate", "build",
                          "--json"], capture_output=True, text=True, timeout=120)
    report = json.loads(out.stdout)
    assert out.returncode == 1 and report["status"] == "fail"
    assert report["summary"] == 'FAILED: k.cuda.o — /bin/sh: 1: Syntax error: ")" unexpected'
