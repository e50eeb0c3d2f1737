"""The correctness and bench gates' verdicts on runs recorded on an H200 with this repository's
kernel (tests/fixtures/gpu/gates, made by capture_gates.sh), and how the cockpit shows them."""

from __future__ import annotations

import json
from pathlib import Path

from cockpit.analysis.keep import decide_keep, read_bench_record
from cockpit.config import Config
from cockpit.gates.attention import judge_bench, judge_correctness
from cockpit.session import events as ev
from cockpit.session.journal import JournalWriter
from cockpit.ui.screenshot import screenshot_app
from cockpit.workspace import Workspace, create_session

REC = Path(__file__).parent / "fixtures" / "gpu" / "gates"
T0 = 1_795_000_000.0


def recorded(gate: str) -> dict:
    return json.loads((REC / f"gate-{gate}.json").read_text())


def test_every_config_is_correct_on_the_h200() -> None:
    report = recorded("correctness")
    verdict = judge_correctness({"rows": report["result"]["rows"]}, 56)
    assert verdict.status == "pass"
    assert verdict.summary == ("all 56/56 configs correct; worst rel L2 2.3e-03 at "
                               "B2 H16 S8192 D128 bf16 full")
    assert verdict.summary == report["summary"]


def test_the_bench_verdict_is_high_and_honest_about_the_power_cap() -> None:
    result = recorded("bench")["result"]
    verdict = judge_bench({"rows": result["rows"], "device": result["device"]}, result["validity"],
                          result["keep"], Config().thresholds, result["record"])
    assert verdict.status == "warn"  # HIGH: slower than SDPA but within reach
    assert verdict.summary.startswith("0.65x vs SDPA (HIGH) over 56 configs, 0.98x vs FLASH; SUSPECT: ")
    assert "power cap active for 3.5 s" in verdict.summary
    assert "apply ONE fix" in verdict.result["next_step"]
    small = next(r for r in result["rows"] if r["config"] == "B4 H16 S32 D64 fp16 full")
    assert small["impl"]["ours"]["median_ms"] < 0.01  # 6.6 µs: the launch-bound end of the range


def test_a_suspect_run_never_decides_keep_or_revert() -> None:
    [path] = REC.glob("bench-*.json")
    record = read_bench_record(path)
    assert record is not None and not record.valid and len(record.ours_ms) == 56
    decision = decide_keep(record, [record], "tile the softmax")
    assert decision.action == "baseline" and "re-measure on a quiet GPU" in decision.summary


def test_snapshot_of_the_recorded_bench(snap_compare, tmp_path) -> None:  # type: ignore[no-untyped-def]
    ws = Workspace(tmp_path)
    ref = create_session(ws, Config(), "match FLASH on the H200", "optimize", T0)
    report = recorded("bench")
    log = ref.path / "logs" / "001-bench.log"
    log.parent.mkdir()
    log.write_text((REC / "gate-bench.stderr").read_text())
    writer = JournalWriter(ref.journal)
    writer.append(ev.gate_started(T0 + 60, "001-bench", "bench", ("python3", "attention_probe.py"),
                                  str(ref.path / "logs" / "001-bench.log"), 4242))
    writer.append(ev.gate_finished(T0 + 100, "001-bench", "bench", report["status"],
                                   report["summary"], report["duration_s"], 0,
                                   str(ref.path / "logs" / "001-bench.log"), report["result"]))
    writer.close()
    app = screenshot_app(ws, Config(), ref, T0 + 120)

    async def select_bench(pilot) -> None:  # type: ignore[no-untyped-def]
        await pilot.press("down", "down", "down")

    assert snap_compare(app, terminal_size=(160, 48), run_before=select_bench)
