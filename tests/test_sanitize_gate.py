"""The sanitizer gate: compute-sanitizer around every candidate's call on the workload's smallest
shapes, torch's caching allocator off, its report read fail-closed. There is no GPU and no
compute-sanitizer here, and no recorded report of our own yet: what is tested is what needs
none: reports that are not a sanitizer's (empty, garbage, a crash before the summary, a run
stopped at its time limit), the missing tool, what the probe runs, the config, where the gate
shows. Real reports: tests/test_sanitize_recordings.py, once capture_sanitize.sh has run."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from cockpit.cli import main
from cockpit.config import ConfigError, load_config
from cockpit.config.sanitize import SanitizeSettings
from cockpit.errors import CockpitError
from cockpit.gates.catalog import GATES, view_of
from cockpit.gates.gate import GateContext
from cockpit.gates.sanitize.findings import SanitizerLog, parse_sanitizer_log
from cockpit.gates.sanitize.gate import SanitizeGate, SanitizeRun, calls_path, judge_sanitize, report_path
from cockpit.gates.sanitize.result import Finding, SanitizeResult
from cockpit.probes import sanitize_probe
from cockpit.probes.sanitize_probe import CALLING, ERROR_EXIT

T0 = 1_795_000_000.0
WORKLOAD = '[workload]\nmodule = "workloads/twice.py"\n'
TRACEBACK = """Traceback (most recent call last):
  File "workloads/twice.py", line 30, in past_end
    twice_kernel[grid](x, out, n, extra, BLOCK=BLOCK)
RuntimeError: CUDA error: an illegal memory access was encountered
"""


def complete_run(**changes: Any) -> SanitizeRun:
    """A run whose every call returned: 1 shape x 1 candidate."""
    run = SanitizeRun(tool="memcheck", workload="workloads/twice.py", shapes_asked=3, shapes=("N=1000",),
                      candidates=("ours",), calls=1, planned=1, allocator_off=True, duration_s=66.0, exit=0,
                      calling="ours on N=1000 (1/1)", log="sessions/x/results/001-sanitize.sanitizer.log")
    return SanitizeRun(**{**run.__dict__, **changes})


@pytest.mark.parametrize("report", [
    b"",
    b"\x00\xff\xfe\x1b[31m garbage \xc3\x28 not a report\n" * 40,
    TRACEBACK.encode(),
    b"========= COMPUTE-SANITIZER\n" + TRACEBACK.encode(),
    b"ERROR SUMMARY: 0 errors\n",  # not the tool's line: it has no prefix
    b"========= ERROR SUMMARY: no errors\n",
], ids=["empty", "garbage bytes", "a traceback then nothing", "cut before its summary", "unprefixed",
        "no count"])
def test_a_report_without_its_error_summary_is_never_a_pass(report: bytes) -> None:
    log = parse_sanitizer_log(report.decode("utf-8", errors="replace"))
    assert not log.summary_seen and log.findings == ()
    verdict = judge_sanitize(log, complete_run())
    assert verdict.status == "error"
    assert "not judged" in verdict.summary and "workload 'workloads/twice.py'" in verdict.summary
    assert "while calling ours on N=1000 (1/1)" in verdict.summary
    assert verdict.result.to_json()["errors"] is None


def test_zero_errors_on_every_call_passes_and_says_what_it_cost() -> None:
    verdict = judge_sanitize(SanitizerLog(errors=0, sanitizer_lines=2), complete_run())
    assert verdict.status == "pass"
    assert verdict.summary == "memcheck: 0 errors on 1 shape x 1 candidate (caching allocator off) in 66 s"


def test_zero_errors_when_a_candidate_raised_is_no_pass_and_names_the_call() -> None:
    run = complete_run(calls=0, exit=1, said="past_end on N=1000 raised: RuntimeError: CUDA error: an illegal "
                                            "memory access was encountered", calling="past_end on N=1000 (1/1)")
    verdict = judge_sanitize(SanitizerLog(errors=0, sanitizer_lines=2), run)
    assert verdict.status == "error"
    assert verdict.summary.startswith("memcheck: 0 errors, but not every call ran on workload "
                                      "'workloads/twice.py' (0 of 1, while calling past_end on N=1000 (1/1)): "
                                      "past_end on N=1000 raised: RuntimeError")


def test_the_caching_allocator_left_on_is_said() -> None:
    verdict = judge_sanitize(SanitizerLog(errors=0, sanitizer_lines=2), complete_run(allocator_off=False))
    assert verdict.status == "warn" and "caching allocator ON" in verdict.summary


def test_findings_fail_naming_the_kernel_the_access_and_the_line(tmp_path: Path) -> None:
    write = Finding("Invalid __global__ write of size 4 bytes", "void copy_kernel<float>(float *, long)",
                    str(tmp_path / "k.cu"), 12, "(31,0,0)", "(0,0,0)", "out of bounds")
    found = SanitizerLog((write, write, write), errors=3, sanitizer_lines=40)
    verdict = judge_sanitize(found, complete_run(workspace=tmp_path))
    assert verdict.status == "fail"
    assert verdict.summary == ("memcheck: 3 errors — Invalid __global__ write of size 4 bytes in copy_kernel<float> "
                               "at k.cu:12 (thread (31,0,0) block (0,0,0)), 2 more like it")
    without_lines = SanitizerLog((Finding("Invalid __global__ write of size 4 bytes", "copy_kernel"),),
                                 errors=None, sanitizer_lines=5)
    cut = judge_sanitize(without_lines, complete_run(exit=-11))
    assert cut.status == "fail"  # a finding is a finding, summary or not
    assert "before compute-sanitizer ended without its summary (exit -11" in cut.summary
    assert "(no source line: build with -lineinfo)" in cut.summary


def test_the_result_round_trips_and_shows_its_findings(tmp_path: Path) -> None:
    write = Finding("Invalid __global__ write of size 4 bytes", "copy_kernel(float *, long)", "k.cu", 12,
                    "(31,0,0)", "(0,0,0)", "out of bounds")
    verdict = judge_sanitize(SanitizerLog((write,), errors=1, sanitizer_lines=12), complete_run())
    read = SanitizeResult.from_json(json.loads(json.dumps(verdict.result.to_json())))
    assert read.findings == (write,) and read.errors == 1 and read.allocator_off is True
    assert SanitizeResult.from_json(read.to_json()) == read
    view = view_of("sanitize", verdict.result)
    assert view is not None
    [table] = view.tables
    assert [c.text for c in table.rows[0]] == ["FAIL", "Invalid __global__ write of size 4 bytes", "copy_kernel",
                                               "k.cu:12", "(31,0,0)", "(0,0,0)", "out of bounds"]
    facts = {f.label: f.value for f in view.facts}
    assert facts["errors"] == "1 error" and facts["caching allocator"].startswith("off")
    assert facts["torch's kernels"].startswith("not checked")
    assert SanitizeResult.from_json("torn") == SanitizeResult(raw={})  # a torn journal reads as nothing found


# --- the probe: what it runs, and what the gate says of the runs that go wrong ---------------------


def fake_sanitizer(folder: Path, then: str) -> Path:
    """A stand-in for compute-sanitizer: notes its arguments, runs the target as the real one
    does, then does `then` (a shell line: crash, write garbage, ...). It prints no report."""
    folder.mkdir(parents=True, exist_ok=True)
    tool = folder / "compute-sanitizer"
    tool.write_text(f"""#!/bin/sh
echo "$@" > "{folder}/argv"
log=""
while [ $# -gt 0 ]; do
  case "$1" in
    --log-file) log=$2; shift 2;;
    --tool|--print-limit|--error-exitcode|--launch-count|--kernel-name-exclude) shift 2;;
    *) break;;
  esac
done
"$@"
{then}
""")
    tool.chmod(tool.stat().st_mode | stat.S_IEXEC)
    return folder


def target(lines: str) -> list[str]:
    """A target that says it is calling a candidate, then does `lines`."""
    return [sys.executable, "-c", f"print({CALLING!r} + 'past_end on N=1000 (1/3)', flush=True)\n{lines}"]


def sanitize(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, then: str, lines: str = "",
             timeout_s: float = 60.0, config: str = WORKLOAD) -> tuple[GateContext, int]:
    (tmp_path / "cockpit.toml").write_text(config)
    ctx = GateContext(tmp_path, tmp_path / "sessions" / "001-x", "001-sanitize", config=load_config(tmp_path))
    monkeypatch.setenv("PATH", str(fake_sanitizer(tmp_path / "bin", then)))
    monkeypatch.delenv("PYTORCH_NO_CUDA_MEMORY_CACHING", raising=False)
    code = sanitize_probe.main(["--workspace", str(tmp_path), "--out", str(ctx.result_path),
                                "--log", str(report_path(ctx)), "--tool", "memcheck", "--timeout-s", f"{timeout_s}",
                                "--", *target(lines)])
    return ctx, code


def test_the_probe_runs_the_target_under_the_tool_with_the_caching_allocator_off(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    ctx, code = sanitize(tmp_path, monkeypatch, "", "import os; print('cache off:', "
                         "os.environ['PYTORCH_NO_CUDA_MEMORY_CACHING'])")
    assert code == 0
    assert "cache off: 1" in capsys.readouterr().out
    argv = (tmp_path / "bin" / "argv").read_text().split()
    assert argv[:2] == ["--tool", "memcheck"] and argv[argv.index("--log-file") + 1] == str(report_path(ctx))
    assert argv[argv.index("--print-limit") + 1] == "20"
    assert argv[argv.index("--error-exitcode") + 1] == str(ERROR_EXIT)
    assert argv[argv.index("--kernel-name-exclude") + 1] == "kns=at6native"  # torch's own kernels
    assert "--launch-count" not in argv


def test_the_command_line_from_the_config() -> None:
    argv = sanitize_probe.sanitizer_argv("/cuda/bin/compute-sanitizer", "racecheck", Path("r.log"), 7, 50, True,
                                         ["python", "t.py"])
    assert argv == ["/cuda/bin/compute-sanitizer", "--tool", "racecheck", "--log-file", "r.log", "--print-limit",
                    "7", "--error-exitcode", str(ERROR_EXIT), "--launch-count", "50", "python", "t.py"]
    assert sanitize_probe.target_env({"PATH": "/bin"}) == {"PATH": "/bin", "PYTORCH_NO_CUDA_MEMORY_CACHING": "1"}


def test_the_gate_calls_the_workload_probe_on_the_configured_shapes(tmp_path: Path) -> None:
    (tmp_path / "cockpit.toml").write_text(WORKLOAD + '[sanitize]\ntool = "initcheck"\nshapes = 2\n'
                                           'timeout_s = 300\nprint_limit = 5\nlaunch_count = 40\n')
    ctx = GateContext(tmp_path, tmp_path / "sessions" / "001-x", "004-sanitize", python="/venv/bin/python",
                      config=load_config(tmp_path))
    argv = SanitizeGate().argv(ctx)
    assert argv[1].endswith("sanitize_probe.py")
    for flag, value in (("--tool", "initcheck"), ("--print-limit", "5"), ("--launch-count", "40"),
                        ("--timeout-s", "300"), ("--log", str(report_path(ctx)))):
        assert argv[argv.index(flag) + 1] == value
    tail = argv[argv.index("--") + 1:]
    assert tail[0] == "/venv/bin/python" and tail[1].endswith("workload_probe.py") and tail[2] == "sanitize"
    assert tail[tail.index("--workload") + 1] == "workloads/twice.py"
    assert tail[tail.index("--shapes") + 1] == "2" and tail[tail.index("--out") + 1] == str(calls_path(ctx))


def test_a_sanitizer_that_crashes_before_its_summary_names_the_workload_and_the_call(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ctx, _ = sanitize(tmp_path, monkeypatch, 'echo "========= COMPUTE-SANITIZER" > "$log"; kill -SEGV $$')
    verdict = SanitizeGate().verdict(ctx, 0, [])
    assert verdict.status == "error"
    assert verdict.summary.startswith("compute-sanitizer ended without its ERROR SUMMARY (exit -11) on workload "
                                      "'workloads/twice.py', while calling past_end on N=1000 (1/3): not judged")
    assert verdict.summary.endswith("run the gate again, or that call by hand under compute-sanitizer --tool "
                                    "memcheck to see how it dies")


def test_a_report_of_garbage_bytes_is_one_line_naming_the_workload_and_the_call(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ctx, _ = sanitize(tmp_path, monkeypatch, r'printf "\000\377\376 garbage\n" > "$log"', "print('done')")
    verdict = SanitizeGate().verdict(ctx, 0, [])
    assert verdict.status == "error"
    assert verdict.summary == (
        "sessions/001-x/results/001-sanitize.sanitizer.log is not a compute-sanitizer report (no ERROR SUMMARY "
        "line; exit 0) on workload 'workloads/twice.py', while calling past_end on N=1000 (1/3): not judged; the "
        "target's last line: done; check that compute-sanitizer runs (`compute-sanitizer --version`) and run "
        "the gate again")


def test_a_run_past_its_time_limit_is_stopped_and_names_the_call(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ctx, code = sanitize(tmp_path, monkeypatch, "", "import time; time.sleep(60)", timeout_s=1.0)
    assert code == 1
    verdict = SanitizeGate().verdict(ctx, code, [])
    assert verdict.status == "error"
    assert verdict.summary == ("memcheck did not finish within 1 s on workload 'workloads/twice.py' (while "
                               "calling past_end on N=1000 (1/3)): a call runs 10-100x slower under it; lower "
                               "[sanitize] shapes (now 3) or raise [sanitize] timeout_s")


def test_no_compute_sanitizer_is_one_line_saying_where_it_comes_from(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setenv("CUDA_HOME", str(tmp_path / "cuda"))
    (tmp_path / "cockpit.toml").write_text(WORKLOAD)
    ctx = GateContext(tmp_path, tmp_path, "001-sanitize", config=load_config(tmp_path))
    code = sanitize_probe.main(["--workspace", str(tmp_path), "--out", str(ctx.result_path), "--log",
                                str(report_path(ctx)), "--", *target("")])
    assert code == 2
    with pytest.raises(CockpitError) as err:
        SanitizeGate().verdict(ctx, code, [])
    assert str(err.value) == (
        f"compute-sanitizer not found on PATH or in {tmp_path / 'cuda' / 'bin'}: it comes with the CUDA toolkit "
        "($CUDA_HOME/bin/compute-sanitizer) or the cuda-sanitizer apt package (e.g. apt-get install "
        "cuda-sanitizer-12-8, matching your CUDA); install it or put its folder on PATH")


def test_the_workload_calls_each_candidate_once_on_its_smallest_shapes(monkeypatch: pytest.MonkeyPatch) -> None:
    torch = pytest.importorskip("torch")
    from cockpit.probes.workload.sanitize import sanitized_calls
    from cockpit.workload import Reference, Workload, axes

    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)  # CPU tensors here: nothing to wait for
    monkeypatch.setenv("PYTORCH_NO_CUDA_MEMORY_CACHING", "1")
    called: list[tuple[str, int]] = []

    def candidate(name: str) -> Any:
        def fn(x: Any) -> Any:
            called.append((name, x.numel()))
            if name == "broken" and x.numel() == 7:
                raise RuntimeError("CUDA error: an illegal memory access was encountered\nmore")
            return x * 2
        return fn

    w = Workload(name="twice", candidates={"ours": candidate("ours"), "broken": candidate("broken")},
                 references=(Reference("x2", lambda x: x * 2),), make_inputs=lambda seed, N: (torch.ones(N),),
                 test_grid=axes(N=[100, 1, 7, 4097]), bench_grid=axes(N=[1 << 20]))
    said: list[str] = []
    result: dict[str, Any] = {}
    ok = sanitized_calls(w, lambda shape: {}, 3, result, said.append)
    assert not ok and called == [("ours", 1), ("broken", 1), ("ours", 7), ("broken", 7)]
    assert result["shapes"] == ["N=1", "N=7", "N=100"] and result["planned"] == 6 and result["allocator_off"]
    assert result["error"] == "broken on N=7 raised: RuntimeError: CUDA error: an illegal memory access was encountered"
    assert f"{CALLING}broken on N=7 (4/6)" in said and said[-1].startswith("[4/6] broken on N=7 raised")


# --- where the gate shows ----------------------------------------------------------------------------


def test_the_sanitize_section_is_read_and_bad_values_are_one_line(tmp_path: Path) -> None:
    assert load_config(tmp_path).sanitize == SanitizeSettings()
    (tmp_path / "cockpit.toml").write_text('[sanitize]\ntool = "racecheck"\ntorch_kernels = true\n')
    assert load_config(tmp_path).sanitize == SanitizeSettings(tool="racecheck", torch_kernels=True)
    for body, said in (('tool = "asan"', "cockpit.toml:2: sanitize.tool: 'asan' is not allowed (expected one of "
                                         "memcheck, racecheck, initcheck, synccheck)"),
                       ("shapes = 0", "cockpit.toml:2: sanitize.shapes: 0 is not allowed (expected a whole "
                                      "number from 1 to 50)"),
                       ("timeout_s = -5", "sanitize.timeout_s: -5 is not allowed (expected seconds > 0"),
                       ("tools = 1", "sanitize.tools: unknown key (allowed here: tool, shapes, timeout_s, "
                                     "print_limit, launch_count, torch_kernels)")):
        (tmp_path / "cockpit.toml").write_text(f"[sanitize]\n{body}\n")
        with pytest.raises(ConfigError) as err:
            load_config(tmp_path)
        assert said in str(err.value) and "\n" not in str(err.value)
    (tmp_path / "cockpit.toml").write_text("[gates.sanitize]\ntimeout_s = 1200\n")
    assert load_config(tmp_path).gate("sanitize").timeout_s == 1200


def test_the_gate_is_in_the_catalog_and_the_report(tmp_path: Path) -> None:
    from cockpit.session import events as ev
    from cockpit.session.journal import JournalWriter
    from cockpit.session.workspace import Workspace, create_session

    assert GATES["sanitize"].title == "Sanitizer" and list(GATES)[-1] == "sanitize"
    ws = Workspace(tmp_path)
    (tmp_path / "cockpit.toml").write_text(WORKLOAD)
    ref = create_session(ws, load_config(tmp_path), "is the copy kernel in bounds", "optimize", T0)
    write = Finding("Invalid __global__ write of size 4 bytes", "copy_kernel(float *, long)", "k.cu", 12,
                    "(31,0,0)", "(0,0,0)", "out of bounds")
    verdict = judge_sanitize(SanitizerLog((write,), errors=1, sanitizer_lines=12), complete_run())
    writer = JournalWriter(ref.journal)
    writer.append(ev.gate_started(T0 + 60, "001-sanitize", "sanitize", ("compute-sanitizer",), "log", 4242))
    writer.append(ev.gate_finished(T0 + 130, "001-sanitize", "sanitize", verdict.status, verdict.summary, 70.0,
                                   1, "log", verdict.result.to_json()))
    writer.close()
    assert main(["--workspace", str(tmp_path), "export", "--format", "md"]) == 0
    md = (ref.path / "REPORT.md").read_text()
    assert "### 001-sanitize · sanitize · FAIL" in md and "Invalid \\_\\_global\\_\\_ write of size 4 bytes" in md
    assert "k.cu:12" in md and "copy\\_kernel" in md


def test_cockpit_gate_accepts_sanitize(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["gate", "--help"])
    assert done.value.code == 0
    assert "sanitize" in capsys.readouterr().out
