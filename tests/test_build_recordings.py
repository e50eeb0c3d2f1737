"""The Build gate's reading of real builds recorded on an H200 (tests/fixtures/gpu/build, made by
capture_build.sh): a clean build, a no-op, a kernel-only rebuild, and three broken builds."""

from __future__ import annotations

import json
from pathlib import Path

from cockpit.gates.build.gate import NinjaTracker, judge_build
from cockpit.gates.build.log import parse_ninja_step, parse_ptxas, read_ninja_log
from cockpit.patterns.library import SHIPPED

REC = Path(__file__).parent / "fixtures" / "gpu" / "build"


def log(name: str) -> list[str]:
    return (REC / f"{name}.log").read_text().splitlines()


def probe(name: str) -> dict:
    return json.loads((REC / f"{name}.json").read_text())


def test_a_clean_build_lists_every_kernel_with_its_resources() -> None:
    lines = log("clean")
    steps = [s for s in map(parse_ninja_step, lines) if s]
    assert [(s.n, s.total, s.output) for s in steps] == [
        (1, 3, "attention.cuda.o"), (2, 3, "binding.o"), (3, 3, "cockpit_attn.so")]
    kernels = parse_ptxas(lines)
    assert len(kernels) == 8  # fp16/bf16 x D 64/128 x causal or not
    assert {k.arch for k in kernels} == {"sm_90a"}
    assert all(k.spill_stores == k.spill_loads == 0 and k.stack == 0 for k in kernels)
    assert max(k.registers for k in kernels) == 255
    verdict = judge_build(lines, 0, probe("noop-result"))
    assert verdict.status == "pass"
    assert "(3 steps); 8 kernels: ≤255 regs, no spills" in verdict.summary
    labels = [k["label"] for k in verdict.result.to_json()["kernels"]]  # demangled, no launch table recorded
    assert labels[:2] == ["attn_fwd_kernel<bf16, 128, 128, 128, 8, 1, false>",
                          "attn_fwd_kernel<bf16, 128, 128, 128, 8, 1, true>"]


def test_a_no_op_is_up_to_date_and_reads_resources_from_cuobjdump() -> None:
    verdict = judge_build(log("noop"), 0, probe("noop-result"))
    assert verdict.status == "pass"
    assert verdict.summary.startswith("up to date; 8 kernels: ≤255 regs")
    # Recorded before the probe asked the extension for its launch table: said, not guessed.
    assert verdict.summary.endswith("shared memory per block and occupancy unknown: the build probe "
                                    "did not report the extension's launch_info()")
    assert verdict.result.to_json()["up_to_date"] is True and len(verdict.result.to_json()["kernels"]) == 8


def test_the_eta_comes_from_the_last_build_with_as_many_steps() -> None:
    history = read_ninja_log(REC / "ninja_log")
    assert [len(run.steps) for run in history] == [3, 2, 2]
    assert round(history[0].wall_s, 2) == 18.65
    tracker = NinjaTracker(history[:2])  # before the binding edit: one earlier 2-step build
    rebuild = [line for line in log("rebuild") if line.startswith("[")]
    first = tracker.feed([rebuild[0]], elapsed_s=0.2)
    assert first is not None and first.step.startswith("[1/2] attention.cuda.o")
    assert first.fraction == 0.0 and first.eta_s is not None and abs(first.eta_s - 3.668) < 1e-6
    later = tracker.feed([rebuild[1]], elapsed_s=3.5)
    assert later is not None and later.fraction == 0.5 and abs(later.eta_s - (3.668 - 3.3)) < 1e-6
    assert NinjaTracker(history[:1]).feed([rebuild[0]], 0.2).eta_s is None  # nothing comparable


def test_a_compile_error_is_named_file_line_message() -> None:
    verdict = judge_build(log("compile-error"), 1, probe("compile-error")["result"] | {"import": None})
    assert verdict.status == "fail"
    assert verdict.summary == ('FAILED: attention.cuda.o — /tmp/cockpit-rec/compile-error/csrc/attention.cu:503: '
                               'identifier "undefined_name" is undefined')


def test_a_link_error_names_the_symbol_defined_twice() -> None:
    verdict = judge_build(log("link-error"), 1, {"arch": "9.0a"})
    assert verdict.status == "fail"
    assert verdict.summary.startswith("FAILED: cockpit_attn.so — binding.cpp: multiple definition of "
                                      "cockpit_twice()")


def test_an_undefined_symbol_at_import_is_named_as_such() -> None:
    verdict = judge_build(log("undefined-symbol"), 1, {"arch": "9.0a"})
    assert verdict.status == "fail"
    assert verdict.summary.startswith("undefined symbol cockpit_missing()")
    assert verdict.result.to_json()["errors"][0]["kind"] == "undefined symbol"


def test_the_h200_failure_logs_bring_up_their_patterns() -> None:
    """Trigger matching on build failures recorded on the GPU machine (not made up here)."""
    from cockpit.patterns.library import load_library
    from cockpit.patterns.triggers import match_output

    patterns, problems = load_library(SHIPPED)
    assert not problems
    fired = {name: {p.id for p, _ in match_output(patterns, "build", log(name))}
             for name in ("undefined-symbol", "link-error", "compile-error", "clean", "noop")}
    assert 9 in fired["undefined-symbol"]  # validate the environment / ABI
    assert fired["clean"] == set() and fired["noop"] == set()


def test_a_cached_build_is_judged_as_the_fresh_one_was() -> None:
    """The same library read two ways: ptxas's report of the clean build, cuobjdump's of the no-op
    that followed it. cuobjdump's SHARED:1024 is the KB sm_80+ reserves per block, not static shared
    memory of the kernel (ptxas said none): counted as such, a cached build would have claimed
    48 KB + 1 KB of shared memory per block and failed the L4 judgement the fresh build passed."""
    from cockpit.gates.build.log import parse_cuobjdump

    fresh = {k.name: (k.registers, k.smem, k.stack) for k in parse_ptxas(log("clean"))}
    cached = {k.name: (k.registers, k.smem, k.stack) for k in
              parse_cuobjdump(probe("noop-result")["cuobjdump"], "sm_90a")}
    assert "SHARED:1024" in probe("noop-result")["cuobjdump"]
    assert cached == fresh and len(fresh) == 8
    assert {smem for _, smem, _ in fresh.values()} == {0}


def test_the_build_gate_starts_in_a_workspace_that_replaces_no_gate(tmp_path: Path) -> None:
    """No [gates.build] in cockpit.toml (the usual case): the gate's progress tracker is made, not a
    KeyError (what every build on the H200 hit at 841a723); a replaced command has no ninja history."""
    from cockpit.config import Config
    from cockpit.config.gates import GateConfig, Gates
    from cockpit.gates.build.gate import BuildGate
    from cockpit.gates.gate import GateContext

    plain = GateContext(tmp_path, tmp_path / "s", "001-build", config=Config())
    assert isinstance(BuildGate().tracker(plain), NinjaTracker)
    replaced = Config(gates=Gates({"build": GateConfig(command=("make",))}))
    assert BuildGate().tracker(GateContext(tmp_path, tmp_path / "s", "001-build", config=replaced))._history == []
