"""Honest class words: a speedup whose interval reaches 1.0 is "the same as the baseline", never ahead
of it nor behind it (issue 47). On an H200, GPU MODE's vectoradd submission against its reference
measured 1.00x [0.99, 1.01]: the gate said "behind the baseline" (its middle fell at 0.998), and
the same measurement a hair higher said "ahead of the baseline". The recorded benches are judged
again here, and the journaled words are read back as the TUI and the report read them."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from cockpit.analysis.decide import classify, decide
from cockpit.config import Thresholds
from cockpit.gates.bench.gate import judge_bench
from cockpit.gates.bench.measured import read_measured
from cockpit.gates.bench.result import read_bench_result
from cockpit.gates.bench.validity_rules import probe_validity
from cockpit.gates.bench.view import bench_view
from cockpit.gates.catalog import summary_said

GPU = Path(__file__).parent / "fixtures" / "gpu"
VECTORADD = json.loads((GPU / "ncu-gpumode" / "vectoradd-gate-bench.json").read_text())


def probe(name: str) -> Any:
    return json.loads(gzip.decompress((GPU / name).read_bytes()))


def test_the_class_takes_the_interval_into_account() -> None:
    assert classify(1.00, interval=(0.99, 1.01)) == "PARITY"
    assert classify(0.998, interval=(0.988, 1.014)) == "PARITY"  # its middle under 1.0: still the same
    assert classify(1.23, interval=(1.22, 1.25)) == "MEDIUM"
    assert classify(0.70, interval=(0.69, 0.71)) == "HIGH"
    assert classify(1.00) == "MEDIUM"  # no interval measured: the number alone decides, as before
    parity = decide(1.00, interval=(0.99, 1.01))
    assert "the same as PyTorch within the noise" in parity.next_step and not parity.profile_first


def test_a_bench_of_1_00x_within_0_99_and_1_01_is_the_same_as_the_baseline() -> None:
    measured = read_measured(VECTORADD["result"])
    verdict = judge_bench(measured, None, None, Thresholds())
    assert verdict.summary.startswith("1.00x [0.99, 1.01] vs reference (the same as the baseline) over 5 configs")
    assert "ahead of the baseline" not in verdict.summary and "behind the baseline" not in verdict.summary
    assert verdict.result.level == "PARITY" and verdict.status == "warn"  # not shown to be ahead: no pass


def test_a_bench_clear_of_1_0_is_ahead_or_behind() -> None:
    layernorm = read_measured(probe("device-time-final/layernorm.probe.json.gz"))
    ahead = judge_bench(layernorm, probe_validity(layernorm), None, Thresholds())
    assert ahead.summary.startswith("1.24x [1.23, 1.25] vs torch.layer_norm (ahead of the baseline)")
    attention = read_measured(probe("device-time/attention-2.probe.json.gz"))
    behind = judge_bench(attention, probe_validity(attention), None, Thresholds())
    assert behind.summary.startswith("0.70x [0.69, 0.71] vs SDPA (behind the baseline: one fix at a time)")


def test_a_bench_journaled_before_parity_reads_as_the_same_in_the_tui_and_the_report() -> None:
    """The vectoradd run was journaled as "(HIGH)"; a run journaled as "(ahead of the baseline)" with
    the same interval says more than its measurement can. Both read as the same."""
    result = VECTORADD["result"]
    said = summary_said("bench", VECTORADD["summary"], result)
    assert said.startswith("1.00x [0.99, 1.01] vs reference (the same as the baseline) over 5 configs")
    ahead = VECTORADD["summary"].replace("(HIGH)", "(ahead of the baseline)")
    assert summary_said("bench", ahead, {**result, "level": "MEDIUM"}).startswith(
        "1.00x [0.99, 1.01] vs reference (the same as the baseline)")
    bench = read_bench_result(result)
    assert bench is not None
    head = bench.headline()
    assert head is not None and head.words == "the same as the baseline"
    facts = {f.label: f.value for f in bench_view(bench).facts}
    assert facts["speedup"] == "1.00x vs reference (geometric mean), the same as the baseline"
