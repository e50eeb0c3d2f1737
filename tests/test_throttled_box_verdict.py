"""Issue 32, the verdict's half: on a box that throttles, the bench's numbers still decide.

The probe drops every timed block the card slowed and times it again (cockpit/analysis/
block_validity.py); its result then carries `block_check`, and each cell how many of its blocks were
re-measured and why, or `clean: false` when they never got clean. The verdict reads those: a
slowdown in the window is a note, with the re-measured blocks counted; what re-measuring cannot fix
stays suspect and is pinned to its configs where it can be, so the headline and keep/revert decide
on the rest and say what they left out. The inputs are the recorded H100 (comparable/, with block
spans) and H200 (gates-blocks/, with SW and HW thermal events) probe results; the new fields are
added to copies of them."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from cockpit.analysis.bench_notes import equal_clock_speedup
from cockpit.analysis.keep import BenchRecord, bench_record, decide_keep
from cockpit.before_workloads import bench_probe
from cockpit.config import Config, Thresholds
from cockpit.gates.bench.gate import BenchGate, judge_bench
from cockpit.gates.bench.measured import read_measured
from cockpit.gates.bench.past import as_record
from cockpit.gates.bench.result import read_bench_result
from cockpit.gates.bench.validity import BenchValidity
from cockpit.gates.bench.validity_rules import probe_validity
from cockpit.gates.gate import GateContext

GPU = Path(__file__).parent / "fixtures" / "gpu"
CHECK = {"clock_fraction": 0.85, "budget": 16, "tolerated": []}


def h100() -> dict:
    """The H100 bench with block spans, as a probe that judged its blocks writes it (the attention
    probe's file, read as the bench gate reads it)."""
    data = json.loads(gzip.decompress((GPU / "comparable" / "probe-bench.json.gz").read_bytes()))
    return bench_probe({**data, "block_check": CHECK})


def h200() -> dict:
    """The H200 bench whose window held SW thermal, HW thermal and HW slowdown events."""
    return bench_probe(json.loads(gzip.decompress((GPU / "gates-blocks" / "probe-bench.json.gz").read_bytes())))


def never_clean(data: dict, at: list[int], impl: str = "ours") -> list[str]:
    for i in at:
        data["rows"][i]["impl"][impl].update(clean=False, remeasured=16,
                                             remeasured_why={"SW thermal slowdown": 16},
                                             unclean_why="SW thermal slowdown in 16 of 16 re-measures")
    return [data["rows"][i]["config"] for i in at]


def judged(data: dict, thresholds: Thresholds | None = None):  # type: ignore[no-untyped-def]
    validity = probe_validity(read_measured(data), thresholds)
    return validity, judge_bench(read_measured(data), validity, None, thresholds or Config().thresholds, "b.json")


def test_a_slowdown_over_its_share_is_a_note_once_the_probe_re_measured_its_blocks() -> None:
    """The H200's 1.1 s of SW thermal slowdown (1.2 % of the window), judged against a 1 % share."""
    tight = Thresholds(slowdown_fraction=0.01)
    old = probe_validity(read_measured(h200()), tight)
    assert not old.valid and any("SW thermal slowdown active for 1.1 s" in r for r in old.reasons)
    data = {**h200(), "block_check": CHECK}
    data["rows"][40]["impl"]["ours"].update(remeasured=9, remeasured_why={"SW thermal slowdown": 9})
    data["rows"][41]["impl"]["sdpa"].update(remeasured=3, remeasured_why={"SM clock dip": 3})
    now, verdict = judged(data, tight)
    assert now.valid and now.reasons == () and now.decidable
    assert (now.remeasured, dict(now.remeasured_why)) == (12, {"SW thermal slowdown": 9, "SM clock dip": 3})
    assert "12 blocks re-measured: SW thermal slowdown 9, SM clock dip 3" in now.notes
    assert ("GPU 0: SW thermal slowdown active for 1.1 s of the 88.6 s window (1.2%; 11 of 880 samples) "
            "(the blocks it touched were timed again: shown, not suspect)") in now.notes
    assert verdict.summary.endswith("; comparable (power cap 32% of the window; 12 blocks re-measured: "
                                    "SW thermal slowdown 9, SM clock dip 3)")
    again = BenchValidity.from_json(json.loads(json.dumps(now.to_json())))
    assert again is not None and again.remeasured == 12 and again.words() == now.words()


def test_blocks_that_never_got_clean_name_their_configs_and_the_rest_decide() -> None:
    data = h100()
    configs = never_clean(data, [40, 41])
    validity, verdict = judged(data)
    assert not validity.valid and validity.decidable and validity.configs_only
    assert validity.suspect_configs == tuple(configs) and validity.suspect_why == ("blocks never clean",)
    assert validity.reasons == (f"blocks never clean at {configs[0]} (ours: SW thermal slowdown in 16 of 16 "
                                f"re-measures), {configs[1]} (ours: SW thermal slowdown in 16 of 16 re-measures)",)
    assert verdict.result.to_json()["configs"] == 54 and len(verdict.result.to_json()["rows"]) == 56  # shown, not counted
    assert "over 54 configs" in verdict.summary and "; 2 left out: blocks never clean" in verdict.summary
    assert "SUSPECT at 2 configs (left out; the rest decide): blocks never clean at " in verdict.summary
    read = read_bench_result(verdict.result.to_json())
    assert read is not None and read.decidable and read.left_out_words() == "2 configs left out: blocks never clean"


def test_a_reference_no_speedup_is_stated_against_that_never_got_clean_is_a_note() -> None:
    data = h100()
    [config] = never_clean(data, [5], impl="efficient")
    validity = probe_validity(read_measured(data))
    assert validity.valid and validity.suspect_configs == ()
    assert (f"EFFICIENT's blocks never clean at {config} (SW thermal slowdown in 16 of 16 re-measures): its "
            "times there are rough") in validity.notes


def test_every_config_never_clean_decides_nothing() -> None:
    data = h100()
    never_clean(data, list(range(len(data["rows"]))))
    validity = probe_validity(read_measured(data))
    assert not validity.decidable and "and 53 more configs" in validity.reasons[0]


def _foreign(data: dict, first: float, last: float) -> None:
    for s in data["gpu_samples"]:
        if first <= s["t"] <= last:
            s["pids"] = [*s["pids"], [445, 1002]]


def test_a_foreign_process_over_some_configs_blocks_leaves_those_configs_out() -> None:
    data = h100()
    rows = data["rows"]
    _foreign(data, rows[10]["blocks"][0]["t0"] + 0.1, rows[11]["blocks"][-1]["t1"] - 0.1)
    validity, verdict = judged(data)
    assert validity.decidable and not validity.valid
    assert validity.suspect_configs == (rows[10]["config"], rows[11]["config"])
    [reason] = validity.reasons
    assert reason.startswith("GPU 0 (GPU-2a036aa4): pid 445 (unknown) is not ours and used 1002 MiB in ")
    assert reason.endswith(f", over the timed blocks of {rows[10]['config']}, {rows[11]['config']}")
    assert "; 2 left out: a process not ours over their blocks" in verdict.summary


def test_a_foreign_process_before_the_first_timed_block_moves_no_number() -> None:
    data = h100()
    _foreign(data, data["started"], data["rows"][0]["blocks"][0]["t0"] - 0.3)
    validity = probe_validity(read_measured(data))
    assert validity.valid
    assert any("pid 445" in n and n.endswith("outside every timed block (shown, not suspect)")
               for n in validity.notes)


def ours_at(data: dict, mhz: int) -> dict:
    """The run with every sample inside ours' timed blocks at `mhz`, uncapped (the others' kept)."""
    spans = [(b["t0"], b["t1"]) for r in data["rows"] for b in r["blocks"] if b["impl"] == "ours"]
    for s in data["gpu_samples"]:
        if any(t0 <= s["t"] <= t1 for t0, t1 in spans):
            s.update(sm_clock=mhz, throttle=0)
    return data


def test_a_window_wide_reason_beside_never_clean_blocks_decides_nothing() -> None:
    data = ours_at(h100(), 1700)  # ours and SDPA not measured under the same conditions
    never_clean(data, [40])
    validity = probe_validity(read_measured(data))
    assert not validity.decidable and validity.suspect_configs == (data["rows"][40]["config"],)
    assert any("the power cap does not explain it" in r for r in validity.reasons)


def test_old_verdicts_read_as_before() -> None:
    old = BenchValidity.from_json({"valid": False, "verdict": "suspect", "reasons": ["SW thermal 13.7 %"]})
    assert old is not None and not old.decidable and old.suspect_configs == () and old.remeasured == 0
    assert old.words() == "SUSPECT: SW thermal 13.7 %"


def test_the_speedup_at_equal_clocks_is_the_ratio_of_cycles() -> None:
    rows = [{"config": "a", "speedup_vs_sdpa": 1.2}, {"config": "b", "speedup_vs_sdpa": 0.9},
            {"config": "c", "speedup_vs_sdpa": 1.0}]
    mhz = {"a": {"ours": 1500.0, "sdpa": 1980.0}, "b": {"ours": 1980.0, "sdpa": 1980.0}}
    value, configs = equal_clock_speedup(rows, "speedup_vs_sdpa", mhz, "ours", "sdpa") or (0.0, 0)
    assert configs == 2  # c has no clocks
    assert value == pytest.approx((1.2 * 1980 / 1500 * 0.9) ** 0.5)
    assert equal_clock_speedup(rows, "speedup_vs_sdpa", {}, "ours", "sdpa") is None


def test_ours_at_a_lower_clock_than_the_baseline_is_suspect_and_says_the_speedup_at_equal_clocks() -> None:
    """The H100 run with ours' samples put at 1700 MHz, uncapped (SDPA stayed at 1980)."""
    validity, verdict = judged(ours_at(h100(), 1700))
    assert not validity.decidable  # window-wide: the two were not measured under the same conditions
    speedup = verdict.result.to_json()["geomean_speedup"]
    equal = verdict.result.to_json()["equal_clock_speedup"]
    # SDPA's own clock dipped at its power cap on some configs: about 1980 / 1700 in all
    assert equal == pytest.approx(speedup * 1980 / 1700, rel=0.02) and equal > speedup * 1.1
    assert f"over 56 configs, {equal:.2f}x at equal clocks" in verdict.summary
    calm = judge_bench(read_measured(h100()), probe_validity(read_measured(h100())), None, Config().thresholds, "b.json")
    assert "at equal clocks" not in calm.summary


def _record(tmp: Path, t: float, scale: float, suspect: tuple[str, ...] = (), decidable: bool = True,
            valid: bool = True) -> BenchRecord:
    rows = [{**r, "impl": {"ours": {**r["impl"]["ours"], "median_ms": r["impl"]["ours"]["median_ms"] * scale}}}
            for r in h100()["rows"]]
    return bench_record(f"s/{t:.0f}-bench", t, rows, "ours", "attention", valid, decidable, suspect,
                        "blocks never clean" if suspect else "")


def test_keep_decides_on_the_configs_a_suspect_run_vouches_for_and_says_what_it_left_out(tmp_path: Path) -> None:
    configs = [r["config"] for r in h100()["rows"]]
    before = _record(tmp_path, 1, 1.0)
    now = _record(tmp_path, 2, 0.8, tuple(configs[:6]), decidable=True, valid=False)
    assert now.suspect_configs == frozenset(configs[:6]) and now.decides and not now.valid
    keep = decide_keep(now, [before], "tile the rows")
    assert keep.action == "keep" and keep.shared_configs == 50
    assert keep.summary == ("KEEP: +25% vs the best earlier run (s/1-bench) over 50 configs; "
                            "6 left out: blocks never clean")
    # a later run compares with the decidable one leaving its suspect configs out
    later = decide_keep(_record(tmp_path, 3, 0.8), [before, now], "x")
    assert later.reference == now.run and later.shared_configs == 50
    assert later.summary.endswith("; 6 left out: blocks never clean in the earlier run, under the 20% bar: "
                                  "restore the last kept version and try a different fix")
    window = _record(tmp_path, 4, 0.5, decidable=False, valid=False)
    assert decide_keep(window, [before], "x").summary.startswith("this run is suspect (see validity): re-measure")


def test_a_result_from_before_reads_as_it_did() -> None:
    bench = read_bench_result({"geomean_speedup": 1.1, "validity": {"valid": False}, "rows": [
        {"config": "c", "launch_bound": True, "impl": {"ours": {"median_ms": 0.01}}}]})
    assert bench is not None
    record = as_record("s/004-bench", 1.0, bench)
    assert not record.decides and record.suspect_configs == frozenset()
    assert record.launch_bound == frozenset({"c"})


def _gate(tmp_path: Path, result: dict, exit_code: int, tail: list[str]):  # type: ignore[no-untyped-def]
    ctx = GateContext(tmp_path, tmp_path / "sessions" / "001-x", "003-bench")
    ctx.result_path.parent.mkdir(parents=True)
    ctx.result_path.write_text(json.dumps(result))
    return BenchGate().verdict(ctx, exit_code, tail)


def test_a_candidate_that_crashes_at_one_shape_fails_in_one_line_and_keeps_the_rows_before(tmp_path: Path) -> None:
    data = h100()
    data["rows"] = data["rows"][:12]
    data["crash"] = {"config": "B4 H16 S2048 D64 fp16 full", "impl": "ours",
                     "error": "CUDA error: an illegal memory access was encountered"}
    verdict = _gate(tmp_path, data, 2, ["Traceback (most recent call last):", "  File ...",
                                        "torch.AcceleratorError: CUDA error: an illegal memory access"])
    assert verdict.status == "fail"
    assert verdict.summary == ("ours crashed at B4 H16 S2048 D64 fp16 full: CUDA error: an illegal memory "
                               "access was encountered")
    assert len(verdict.result.to_json()["rows"]) == 12 and verdict.result.to_json()["keep"]["action"] == "revert"
    bench = read_bench_result(verdict.result.to_json())
    assert bench is not None and not as_record("001-x/003-bench", 1.0, bench).decides  # never a reference


def test_a_reference_that_crashes_decides_nothing(tmp_path: Path) -> None:
    data = {**h100(), "crash": {"config": "B4 H16 S32 D64 fp16 full", "impl": "flash",
                                "error": "FlashAttention only supports Ampere GPUs or newer.\nmore"}}
    data["rows"] = []
    verdict = _gate(tmp_path, data, 1, ["RuntimeError: something else"])
    assert verdict.status == "fail"
    assert verdict.summary == "FLASH crashed at B4 H16 S32 D64 fp16 full: FlashAttention only supports Ampere " \
                              "GPUs or newer."
    assert verdict.result.to_json()["keep"]["action"] == "baseline"


def test_work_that_escaped_the_timer_fails_the_bench_in_its_guards_line_and_reverts(tmp_path: Path) -> None:
    data = h100()
    data["rows"] = data["rows"][:3]
    data["caught"] = {"config": "B4 H16 S2048 D64 fp16", "impl": "ours", "guard": "kernel-records",
                      "line": "leaves work the timer does not see at B4 H16 S2048 D64 fp16: on another stream "
                              "(13) its caller's "
                              "stream does not wait for; its kernels ran 18.3 µs per call, the timer saw 0.3 µs"}
    verdict = _gate(tmp_path, data, 1, [])
    assert verdict.status == "fail"
    assert verdict.summary.startswith("ours: leaves work the timer does not see at B4 H16 S2048 D64 fp16: on "
                                      "another stream (13)")
    assert verdict.result.to_json()["keep"]["action"] == "revert"
    bench = read_bench_result(verdict.result.to_json())
    assert bench is not None and not as_record("001-x/003-bench", 1.0, bench).decides

