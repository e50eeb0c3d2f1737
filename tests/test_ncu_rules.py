"""The profile's one fix comes from ncu's own rule estimates when its details page has them: the
best global estimate that applies, never a tensor-core rule for a kernel without matrix math.

The recorded details pages come from the GPU visit (tests/fixtures/gpu/capture_profile.sh
--details); until they are recorded, the tests that read them say so and skip. A raw page (no rule
columns) is real and here: it is refused in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from cockpit.analysis.ncu_rules import NoRules, parse_rules, ranked
from cockpit.cli.analyze import analyze_file
from cockpit.errors import CockpitError

NCU = Path(__file__).parent / "fixtures" / "gpu" / "ncu"
RULES = Path(__file__).parent / "fixtures" / "gpu" / "ncu-rules"
LAYERNORM = RULES / "layernorm.details.csv"


def test_a_page_without_rule_columns_is_refused_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(NoRules, match="no rule results"):
        parse_rules((NCU / "copy.csv").read_text())
    named = tmp_path / "copy.details.csv"
    named.write_text((NCU / "copy.csv").read_text())
    with pytest.raises(CockpitError, match="copy.details.csv: ncu's details page has no rule results"):
        analyze_file(NCU / "copy.csv", as_json=True, details=named)
    with pytest.raises(CockpitError, match="no such file; export it with `ncu --import"):
        analyze_file(NCU / "copy.csv", as_json=True, details=tmp_path / "missing.details.csv")


def test_garbage_is_no_rules_not_a_traceback() -> None:
    with pytest.raises(NoRules):
        parse_rules("\x00\x1b[31m not a csv at all \xff")


def test_the_layer_norms_fix_is_ncus_own_estimate_with_its_cause_and_never_tensor_cores() -> None:
    """The H200's page of the Triton layer norm (M=4096 N=8192 fp16): three rules fired, one with an
    estimate, a local one; the fix names what limits it."""
    rules = parse_rules(LAYERNORM.read_text())
    assert sorted(r.name for r in rules) == ["CPIStall", "SOLBottleneck", "TheoreticalOccupancy"]
    [best, *_] = ranked(rules, matrix_math=False)
    assert (best.name, best.speedup_type, best.speedup) == ("TheoreticalOccupancy", "local", 43.75)
    assert best.line() == ("TheoreticalOccupancy: The 9.00 theoretical warps per scheduler this kernel can issue "
                           "according to its occupancy are below the hardware maximum of 16. This kernel's "
                           "theoretical occupancy (56.2%) is limited by the number of required registers. "
                           "(43.8 % est., of the part it measured)")
    assert all("tensor" not in r.line().lower() for r in ranked(rules, matrix_math=False))
