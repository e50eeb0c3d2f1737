"""The profile's one fix comes from ncu's own rule estimates when its details page has them: the
best global estimate that applies, never a tensor-core rule for a kernel without matrix math.

The recorded details pages come from the GPU visit (tests/fixtures/gpu/capture_profile.sh
--details); until they are recorded, the tests that read them say so and skip. A raw page (no rule
columns) is real and here: it is refused in one line."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cockpit.analysis.ncu_rules import NoRules, parse_rules, ranked
from cockpit.cli.analyze import analyze_file
from cockpit.errors import CockpitError

NCU = Path(__file__).parent / "fixtures" / "gpu" / "ncu"
RULES = Path(__file__).parent / "fixtures" / "gpu" / "ncu-rules"
LAYERNORM = RULES / "layernorm.details.csv"
LIGER = RULES / "liger_softmax.details.csv"


def test_a_page_without_rule_columns_is_refused_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(NoRules, match="no rule results"):
        parse_rules((NCU / "copy.csv").read_text())
    named = tmp_path / "copy.details.csv"
    named.write_text((NCU / "copy.csv").read_text())
    with pytest.raises(CockpitError, match=re.escape("copy.details.csv: ncu's details page has no rule results")):
        analyze_file(NCU / "copy.csv", as_json=True, details=named)
    with pytest.raises(CockpitError, match="no such file; export it with `ncu --import"):
        analyze_file(NCU / "copy.csv", as_json=True, details=tmp_path / "missing.details.csv")


def test_garbage_is_no_rules_not_a_traceback() -> None:
    with pytest.raises(NoRules):
        parse_rules("\x00\x1b[31m not a csv at all \xff")


def test_the_layer_norms_fix_is_ncus_own_estimate_with_its_cause_and_never_tensor_cores() -> None:
    """The H200's page of the Triton layer norm (M=4096 N=8192 fp16): CPIStall fired twice on the
    launch (a WRN that a metric was missing, then the OPT with its estimate) and TheoreticalOccupancy
    once; the best is the L1TEX stall, 44.5 % local (the held-out H100 page read 33 %)."""
    rules = parse_rules(LAYERNORM.read_text())
    assert sorted((r.name, r.kind) for r in rules) == [
        ("CPIStall", "INF"), ("CPIStall", "OPT"), ("CPIStall", "WRN"), ("SOLBottleneck", "OPT"),
        ("TheoreticalOccupancy", "OPT")]
    best, second = ranked(rules, matrix_math=False)
    assert (best.name, best.speedup_type, best.speedup) == ("CPIStall", "local", 44.53)
    assert (second.name, second.speedup) == ("TheoreticalOccupancy", 43.75)
    assert second.line() == ("TheoreticalOccupancy: The 9.00 theoretical warps per scheduler this kernel can issue "
                             "according to its occupancy are below the hardware maximum of 16. This kernel's "
                             "theoretical occupancy (56.2%) is limited by the number of required registers. "
                             "(43.8 % est., of the part it measured)")
    assert all("tensor" not in r.line().lower() for r in ranked(rules, matrix_math=False))


def test_the_liger_softmaxs_fix_is_the_l1tex_stall_ncu_estimated_and_says_what_to_do() -> None:
    """The H100's page of a Liger-style Triton softmax (M=4096 N=8192 bf16, no Profile declared:
    every kernel of one call): its 38 % estimate sat behind a CPIStall WRN with none, and the first
    of the two was all the page was read for, so the fix came from the decision tree instead."""
    rules = parse_rules(LIGER.read_text())
    [best] = ranked(rules, matrix_math=False)
    assert (best.name, best.kind, best.speedup_type, best.speedup) == ("CPIStall", "OPT", "local", 38.04)
    line = best.line()
    assert line.startswith("CPIStall: On average, each warp of this workload spends 8.8 cycles being stalled "
                           "waiting for a scoreboard dependency on a L1TEX")
    assert "To reduce the number of cycles waiting on L1TEX data accesses verify the memory access patterns" in line
    assert line.endswith("(38 % est., of the part it measured)")


def test_the_profile_gate_takes_the_liger_softmaxs_fix_from_ncus_estimate() -> None:
    from cockpit.gates.profile.gate import CLOCK_NOTE, judge_profile
    from cockpit.gates.profile.result import ProfileResult

    verdict = judge_profile((RULES / "liger_softmax.raw.csv").read_text(),
                            ProfileResult(clock_note=CLOCK_NOTE["base"]), None, LIGER.read_text())
    assert verdict.status == "pass"
    assert verdict.summary.startswith("memory-bound: memory 76.6 % vs compute 58.0 % of peak")
    assert "next: CPIStall: On average, each warp" in verdict.summary and "(38 % est." in verdict.summary
    assert "move fewer bytes" not in verdict.summary  # the decision tree's answer, from before
