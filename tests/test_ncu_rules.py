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


@pytest.mark.skipif(not LAYERNORM.exists(), reason="record with tests/fixtures/gpu/capture_profile.sh on a GPU box")
def test_the_layer_norms_fix_is_ncus_best_global_estimate_and_never_tensor_cores() -> None:
    rules = parse_rules(LAYERNORM.read_text())
    best = ranked(rules, matrix_math=False)
    assert best and best[0].speedup_type.lower() == "global"
    assert all("tensor" not in r.line().lower() for r in best)
    assert best[0].speedup == max(r.speedup or 0 for r in best if r.speedup_type.lower() == "global")
