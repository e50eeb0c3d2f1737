"""The correctness and bench gates' verdicts on runs recorded on an H200 with this repository's
kernel (tests/fixtures/gpu/gates, made by capture_gates.sh), and how the cockpit shows them."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from cockpit.analysis.keep import BenchRecord, KeepResult, decide_keep
from cockpit.before_workloads import bench_probe
from cockpit.config import Config, Thresholds
from cockpit.gates.bench.gate import judge_bench
from cockpit.gates.bench.measured import read_measured
from cockpit.gates.bench.past import as_record
from cockpit.gates.bench.result import read_bench_result
from cockpit.gates.bench.validity import BenchValidity
from cockpit.gates.bench.validity_rules import judge_probe_window
from cockpit.gates.correctness.gate import judge_correctness
from cockpit.gates.correctness.result import read_checked
from cockpit.session import events as ev
from cockpit.session.journal import JournalWriter
from cockpit.session.workspace import Workspace, create_session
from cockpit.ui.pictures.screenshot import screenshot_app

REC = Path(__file__).parent / "fixtures" / "gpu" / "gates"
T0 = 1_795_000_000.0


def recorded(gate: str) -> dict:
    return json.loads((REC / f"gate-{gate}.json").read_text())


def test_every_config_is_correct_on_the_h200() -> None:
    report = recorded("correctness")
    verdict = judge_correctness(read_checked({"rows": report["result"]["rows"]}), 56)
    assert verdict.status == "pass"
    assert verdict.summary == ("all 56/56 checks correct; worst rel L2 2.3e-03 at "
                               "B2 H16 S8192 D128 bf16 full")
    assert verdict.summary == report["summary"].replace("configs correct", "checks correct")


def test_the_bench_verdict_is_high_and_honest_about_the_power_cap() -> None:
    result = recorded("bench")["result"]
    verdict = judge_bench(read_measured(bench_probe({"rows": result["rows"], "device": result["device"]})),
                          BenchValidity.from_json(result["validity"]), KeepResult.from_json(result["keep"]),
                          Config().thresholds, result["record"])
    assert verdict.status == "warn"  # HIGH: slower than SDPA but within reach
    assert verdict.summary.startswith("0.65x vs SDPA (behind the baseline: one fix at a time) over 56 configs, "
                                      "0.98x vs FLASH "
                                      "(worst 0.79x at B4 H16 S4096 D128 fp16 full); SUSPECT: ")
    assert "power cap active for 3.5 s" in verdict.summary
    assert "apply ONE fix" in verdict.result.to_json()["next_step"]
    small = next(r for r in result["rows"] if r["config"] == "B4 H16 S32 D64 fp16 full")
    assert small["impl"]["ours"]["median_ms"] < 0.01  # 6.6 µs: the launch-bound end of the range


def test_a_suspect_run_never_decides_keep_or_revert() -> None:
    bench = read_bench_result(recorded("bench")["result"])
    assert bench is not None
    record = as_record("s/004-bench", 1.0, bench)
    assert not record.valid and len(record.ours_ms) == 56
    decision = decide_keep(record, [record], "tile the softmax")
    assert decision.action == "baseline" and "re-measure on a quiet GPU" in decision.summary


def test_snapshot_of_the_recorded_bench(snap_compare, tmp_path) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(recorded_bench_app(tmp_path), terminal_size=(160, 48), run_before=select_bench)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
def test_snapshot_of_the_recorded_bench_at_the_smaller_sizes(snap_compare, tmp_path, size) -> None:  # type: ignore[no-untyped-def]
    """The headline and the result at 80x24 and 120x40 too, not only a status line and a log path."""
    assert snap_compare(recorded_bench_app(tmp_path), terminal_size=size, run_before=select_bench)


async def select_bench(pilot) -> None:  # type: ignore[no-untyped-def]
    await pilot.press("down", "down", "down")


def recorded_bench_app(tmp_path):  # type: ignore[no-untyped-def]
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
    return screenshot_app(ws, Config(), ref, T0 + 120)


# The block-timed bench (each implementation at its own settled clock), recorded on an H200 ------

BLOCKS = Path(__file__).parent / "fixtures" / "gpu" / "gates-blocks"


def probe_bench() -> dict:
    return bench_probe(json.loads(gzip.decompress((BLOCKS / "probe-bench.json.gz").read_bytes())))


def test_every_implementation_got_its_timed_calls_on_every_config() -> None:
    data = probe_bench()
    assert len(data["rows"]) == 56
    for row in data["rows"]:
        assert set(row["impl"]) == {"ours", "sdpa", "flash", "cudnn", "efficient"}
        assert all(impl["samples"] >= 30 for impl in row["impl"].values())
    # cuDNN is SDPA's default at these sizes: the same kernel, timed in blocks of its own at its
    # own power-capped clock, agrees with itself within the fidelity bound (3 %)
    big = [r for r in data["rows"] if r["config"].startswith("B4 H16 S4096 D128")]
    assert len(big) == 4
    for r in big:
        assert abs(r["impl"]["sdpa"]["median_ms"] / r["impl"]["cudnn"]["median_ms"] - 1) < 0.03


def test_the_power_capped_h200_bench_is_comparable_with_the_cap_and_brief_thermal_events_shown() -> None:
    data = probe_bench()
    v = judge_probe_window(data)
    assert v["valid"] and v["checked"] and v["verdict"] == "comparable" and v["reasons"] == []
    assert v["power_cap"] == {"seconds": 28.3, "fraction": 0.32}
    assert v["notes"] == [
        "GPU 0: HW slowdown active for 0.3 s of the 88.6 s window (0.3%; 3 of 880 samples) (brief: under 2%)",
        "GPU 0: HW thermal slowdown active for 0.3 s of the 88.6 s window (0.3%; 3 of 880 samples) "
        "(brief: under 2%)",
        "GPU 0: SW thermal slowdown active for 1.1 s of the 88.6 s window (1.2%; 11 of 880 samples) "
        "(brief: under 2%)",
        "GPU 0: power cap active for 28.3 s of the 88.6 s window (32.0%; 283 of 880 samples) "
        "(the card's normal loaded state: shown, not suspect)",
        "clocks per implementation not recorded (a probe from before timed block spans)",
    ]
    verdict = judge_bench(read_measured(data), BenchValidity.from_json(v), None, Config().thresholds, "bench.json")
    assert verdict.status == "warn"  # HIGH: slower than SDPA, and no longer for the cap's sake
    # The geomean reads as near parity; the worst config says where it is not.
    assert verdict.summary == ("0.67x vs SDPA (behind the baseline: one fix at a time) over 56 configs, "
                               "0.95x vs FLASH "
                               "(worst 0.80x at B4 H16 S1024 D128 bf16 full); "
                               "comparable (power cap 32% of the window)")


def test_strict_mode_keeps_the_old_verdict_and_says_how_to_accept_the_cap() -> None:
    data = probe_bench()
    strict = judge_probe_window(data, Thresholds(validity="strict"))
    assert not strict["valid"] and strict["verdict"] == "suspect"
    assert 'validity = "comparable"' in strict["hint"]
    assert ("GPU 0: power cap active for 28.3 s of the 88.6 s window (32.0%; 283 of 880 samples)"
            in strict["reasons"])
    # the recorded gate ran under the old rule and said the same
    gate = json.loads((BLOCKS / "gate-bench.json").read_text())
    assert gate["summary"].startswith("0.67x vs SDPA (HIGH) over 56 configs, 0.95x vs FLASH; SUSPECT: ")
    tolerant = judge_probe_window(data, Thresholds(validity="strict", tolerated_clock_events=("power cap",)))
    assert "hint" not in tolerant and not tolerant["valid"]  # the thermal events stay, in strict mode
    assert "GPU 0: SW thermal slowdown active for 1.1 s of the 88.6 s window (1.2%; 11 of 880 samples)" \
        in tolerant["reasons"]


def test_keep_or_revert_gives_a_real_answer_on_the_power_capped_h200(tmp_path: Path) -> None:
    data = probe_bench()
    v = judge_probe_window(data)
    ours = {r["config"]: r["impl"]["ours"]["median_ms"] for r in data["rows"]}
    earlier = BenchRecord("a/001-bench", data["started"], v["valid"], ours)
    now = BenchRecord("b/001-bench", data["started"] + 3600, v["valid"], ours)
    first = decide_keep(earlier, [], "tile the softmax")
    assert first.action == "baseline" and first.summary.startswith("first valid measurement")
    # the same kernel measured again under the same cap: not faster, so REVERT (not "re-measure")
    again = decide_keep(now, [earlier], "tile the softmax")
    assert again.action == "revert" and again.summary.startswith("REVERT: +0% vs the best earlier run")
    assert again.shared_configs == 56


def test_a_foreign_process_on_the_measured_gpu_still_makes_the_run_suspect_and_undecided() -> None:
    data = probe_bench()
    # The recorded samples, with a process of another session (pid 445, as in the loaded H200
    # recording) on the GPU from the middle of the run on.
    half = len(data["gpu_samples"]) // 2
    for s in data["gpu_samples"][half:]:
        s["pids"] = [*s["pids"], [445, 1002]]
    v = judge_probe_window(data)
    assert not v["valid"] and v["verdict"] == "suspect"
    assert v["reasons"] == ["GPU 0: pid 445 (unknown) is not ours and used 1002 MiB in 440 of 880 samples"]
    record = BenchRecord("s/001-bench", 1.0, v["valid"], {"c": 1.0})
    assert decide_keep(record, [], "x").summary.startswith("this run is suspect")
