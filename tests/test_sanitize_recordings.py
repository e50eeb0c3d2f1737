"""The sanitizer gate on real compute-sanitizer reports, recorded on a GPU box by
tests/fixtures/gpu/capture_sanitize.sh: a planted write of 16 floats past the end of the output
fails, naming its kernel, the access and its source line; its honest twin passes; with torch's
caching allocator on, memcheck does not see the write at all (why the gate turns it off).
Skipped until that script has run: no report here is made up."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cockpit.gates.sanitize.findings import parse_sanitizer_log
from cockpit.gates.sanitize.gate import describe, judge_sanitize, read_run

RECORDED = Path(__file__).parent / "fixtures" / "gpu" / "sanitize"
pytestmark = pytest.mark.skipif(not (RECORDED / "past_end.log").exists(),
                                reason="record with tests/fixtures/gpu/capture_sanitize.sh on a GPU box")


def recorded(name: str) -> tuple[str, dict[str, object], dict[str, object]]:
    """(the sanitizer's report, the calls the target made, the gate's --json output) of one run."""
    return ((RECORDED / f"{name}.log").read_text(encoding="utf-8", errors="replace"),
            json.loads((RECORDED / f"{name}.calls.json").read_text()), json.loads((RECORDED / f"{name}.json").read_text()))


@pytest.mark.parametrize("name,source", [("past_end", "sanitize_past_end.py"), ("past_end_cuda", ".cu")])
def test_a_write_past_the_end_fails_naming_the_kernel_the_access_and_the_line(name: str, source: str) -> None:
    report, calls, gate = recorded(name)
    log = parse_sanitizer_log(report)
    assert log.summary_seen and (log.errors or 0) > 0
    writes = [f for f in log.findings if f.kernel is not None]
    assert writes and all(f.kind.startswith("Invalid __global__ write of size 4") for f in writes)
    api = [f for f in log.findings if f.kernel is None]  # what failed after the fault: consequences
    assert [f.kind.split()[2] for f in api] == ["cudaErrorLaunchFailure"] * 2
    said = describe(log.findings)
    assert said.endswith(f", {len(writes) - 1} more like it; then 2 CUDA API calls failed "
                         "(cudaErrorLaunchFailure: the fault's sticky error)")
    first = log.findings[0]
    assert first.kernel_short is not None and "twice_kernel" in first.kernel_short
    assert first.location is not None and source in first.location  # Triton's line info, nvcc's -lineinfo
    assert first.thread is not None and first.block is not None
    assert gate["status"] == "fail"
    assert str(gate["summary"]).startswith(f"memcheck: {log.errors} error")
    assert "twice_kernel" in str(gate["summary"]) and "Invalid __global__ write" in str(gate["summary"])
    assert calls["allocator_off"] is True


@pytest.mark.parametrize("name", ["honest", "honest_cuda"])
def test_the_honest_twin_passes_and_says_the_cost(name: str) -> None:
    report, calls, gate = recorded(name)
    log = parse_sanitizer_log(report)
    assert log.summary_seen and log.errors == 0 and log.findings == ()
    assert gate["status"] == "pass"
    assert str(gate["summary"]).startswith("memcheck: 0 errors on 3 shapes x 1 candidate (caching allocator off) in ")
    probe = {"tool": "memcheck", "exit": 0, "duration_s": gate["duration_s"]}
    assert judge_sanitize(log, read_run(probe, calls, "", 3, None)).status == "pass"


def test_with_the_caching_allocator_on_the_write_goes_unseen() -> None:
    log = parse_sanitizer_log((RECORDED / "past_end_cached.log").read_text(encoding="utf-8", errors="replace"))
    calls = json.loads((RECORDED / "past_end_cached.calls.json").read_text())
    assert calls["allocator_off"] is False
    assert log.summary_seen and log.errors == 0  # inside a pooled segment: what the gate's setting is for
