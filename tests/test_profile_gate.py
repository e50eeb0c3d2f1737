"""The Profile gate's verdict on ncu reports recorded on an H200, how the cockpit shows it, and
the failures it must explain (no kernel matched, no ncu)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from cockpit.config import Config, load_config
from cockpit.gates.gate import COULD_NOT_RUN, GateContext
from cockpit.gates.profile.gate import CLOCK_NOTE, ProfileGate, judge_profile
from cockpit.gates.profile.result import ProfileResult
from cockpit.session import events as ev
from cockpit.session.journal import JournalWriter
from cockpit.session.workspace import Workspace, create_session
from cockpit.ui.pictures.screenshot import screenshot_app

NCU = Path(__file__).parent / "fixtures" / "gpu" / "ncu"
T0 = 1_795_000_000.0


def test_our_kernel_is_memory_leaning_with_one_fix() -> None:
    verdict = judge_profile((NCU / "ours-d64.csv").read_text(), ProfileResult(clock_note=CLOCK_NOTE["base"]), None)
    assert verdict.status == "pass"
    assert verdict.summary.startswith("memory-bound: memory 62.1 % vs compute 45.2 % of peak")
    assert "— next: larger tiles" in verdict.summary
    [kernel] = verdict.result.to_json()["kernels"]
    assert "attn_fwd_kernel" in kernel["name"]
    assert any("limited by registers" in n for n in kernel["verdict"]["notes"])


def test_the_gate_runs_ncu_on_our_kernel_with_the_configured_sections(tmp_path: Path) -> None:
    (tmp_path / "cockpit.toml").write_text('[workload]\nmodule = "workloads/attention.py"\n')
    ctx = GateContext(tmp_path, tmp_path / "sessions" / "001-x", "003-profile", python=sys.executable,
                      config=load_config(tmp_path))
    argv = ProfileGate().argv(ctx)
    # the kernel and shape are the workload's: the probe asks it (an empty regex here)
    assert "--kernel-regex" in argv and argv[argv.index("--kernel-regex") + 1] == ""
    assert argv[argv.index("--clock-control") + 1] == "base"
    assert [argv[i + 1] for i, a in enumerate(argv) if a == "--section"][:2] == ["SpeedOfLight", "Occupancy"]
    tail = argv[argv.index("--") + 1:]
    assert tail[1].endswith("workload_probe.py") and tail[2:4] == ("profile", "--workspace")
    assert tail[tail.index("--workload") + 1] == "workloads/attention.py"


def test_a_profile_keeps_how_far_the_session_log_went_so_the_bench_after_it_says_what_was_written_since(
        tmp_path: Path) -> None:
    """The profile's result counts SESSION.md's Log lines as it finishes: the bench that pays its
    fix off reads the lines after them (gates/bench/payoff.py)."""
    ref = create_session(Workspace(tmp_path), Config(), "why is D=64 at 0.9x of FLASH", "optimize", T0)
    ref.log_md.write_text(ref.log_md.read_text() + "\n- 10:02 Baseline: 0.9x FLASH\n\n- 10:05 profile next\n")
    ctx = GateContext(tmp_path, ref.path, "003-profile")
    ctx.result_path.parent.mkdir(parents=True, exist_ok=True)
    ctx.result_path.write_text(json.dumps({"csv": str(NCU / "ours-d64.csv"), "clock_control": "base"}))
    verdict = ProfileGate().verdict(ctx, 0, [])
    assert verdict.status == "pass"
    assert verdict.result.to_json()["log_lines_seen"] == 2  # type: ignore[union-attr]


def test_no_kernel_matched_lists_the_kernels_that_ran(tmp_path: Path) -> None:
    ctx = GateContext(tmp_path, tmp_path, "001-profile")
    ctx.result_path.parent.mkdir(parents=True)
    ctx.result_path.write_text(json.dumps({"error": "no match", "clock_control": "base",
                                           "kernels_seen": ["vectorized_elementwise_kernel"]}))
    verdict = ProfileGate().verdict(ctx, 1, [])
    assert verdict.status == "fail"
    assert verdict.summary.endswith("kernels that ran: vectorized_elementwise_kernel")


def test_ncu_refused_the_counters_is_a_profile_that_could_not_run_not_a_failed_kernel(tmp_path: Path) -> None:
    ctx = GateContext(tmp_path, tmp_path, "001-profile")
    ctx.result_path.parent.mkdir(parents=True)
    ctx.result_path.write_text(json.dumps({"error": "permission", "clock_control": "base"}))
    said = "cockpit-profile: error: ERR_NVGPUCTRPERM: ncu may not read the GPU's performance counters"
    verdict = ProfileGate().verdict(ctx, 1, [said])
    assert verdict.status == COULD_NOT_RUN and verdict.summary == said.removeprefix("cockpit-profile: ")


def test_snapshot_of_the_recorded_profile(snap_compare, tmp_path) -> None:  # type: ignore[no-untyped-def]
    ws = Workspace(tmp_path)
    ref = create_session(ws, Config(), "why is D=64 at 0.9x of FLASH", "optimize", T0)
    verdict = judge_profile((NCU / "ours-d64.csv").read_text(),
                            ProfileResult(clock_note=CLOCK_NOTE["base"], report="results/005-profile.ncu-rep"), None)
    log = ref.path / "logs" / "001-profile.log"
    log.parent.mkdir()
    log.write_text((NCU / "ours-d64.stdout").read_text())
    writer = JournalWriter(ref.journal)
    writer.append(ev.gate_started(T0 + 60, "001-profile", "profile", ("ncu",), str(log), 4242))
    writer.append(ev.gate_finished(T0 + 90, "001-profile", "profile", verdict.status, verdict.summary,
                                   25.0, 0, str(log), verdict.result.to_json()))
    writer.close()
    app = screenshot_app(ws, Config(), ref, T0 + 120)

    async def select_profile(pilot) -> None:  # type: ignore[no-untyped-def]
        await pilot.press("down", "down", "down", "down")

    assert snap_compare(app, terminal_size=(160, 48), run_before=select_profile)
