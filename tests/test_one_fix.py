"""One profile, one fix: `cockpit analyze` and the profile gate name the same fix on the same ncu
pages (one function chooses it: ncu's own estimate leads, the decision tree's fix without one),
and a details page given alone gives that fix from it, or is refused in one line naming --details.

The pages are real: a Liger-style Triton softmax profiled on an H100 (raw and details page of one
report) and a Triton layer norm's details page from an H200 (tests/fixtures/gpu/ncu-rules)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from cockpit.cli import main
from cockpit.gates.profile.gate import CLOCK_NOTE, judge_profile
from cockpit.gates.profile.result import ProfileResult

RULES = Path(__file__).parent / "fixtures" / "gpu" / "ncu-rules"
RAW, DETAILS = RULES / "liger_softmax.raw.csv", RULES / "liger_softmax.details.csv"
LAYERNORM = RULES / "layernorm.details.csv"


def analyze(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """`cockpit analyze ARGS` as the user types it: its exit code, stdout and stderr."""
    code = main(["analyze", *args])
    out, err = capsys.readouterr()
    return code, out, err


def fix_lines(out: str) -> list[str]:
    return [line.removeprefix("  fix         ") for line in out.splitlines() if line.startswith("  fix  ")]


def gates_fix() -> str:
    """The profile gate's one fix on the softmax's pages, as its verdict says it."""
    verdict = judge_profile(RAW.read_text(), ProfileResult(clock_note=CLOCK_NOTE["base"]), None,
                            DETAILS.read_text())
    [kernel] = verdict.result.to_json()["kernels"]
    fix = kernel["verdict"]["recommendation"]
    assert verdict.summary.endswith(f"— next: {fix}")
    return str(fix)


def test_cockpit_analyze_prints_the_fix_the_profile_gate_gives_on_the_same_pages(
        capsys: pytest.CaptureFixture[str]) -> None:
    """The softmax's decision tree says "move fewer bytes"; ncu estimated 38 % for its L1TEX
    stalls. The gate named ncu's estimate and analyze named the tree's: now both name ncu's, and
    analyze still shows what the tree said."""
    code, out, err = analyze(capsys, str(RAW), "--details", str(DETAILS))
    assert (code, err) == (0, "")
    assert fix_lines(out) == [gates_fix()]
    assert gates_fix().startswith("CPIStall: On average, each warp of this workload spends 8.8 cycles")
    assert gates_fix().endswith("(38 % est., of the part it measured)")
    assert "  the decision tree said: move fewer bytes" in out
    code, out, _ = analyze(capsys, str(RAW), "--details", str(DETAILS), "--json")
    [kernel] = json.loads(out)["kernels"]
    assert kernel["verdict"]["recommendation"] == gates_fix()
    assert kernel["verdict"]["tree_fix"].startswith("move fewer bytes")


def test_a_details_page_alone_gives_the_fix_from_ncus_estimates_not_a_page_of_na(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = analyze(capsys, str(DETAILS))
    assert (code, err) == (0, "")
    assert fix_lines(out) == [gates_fix()]
    assert "n/a" not in out
    assert f"needs the raw page: cockpit analyze RAW.csv --details {DETAILS}" in out
    code, out, err = analyze(capsys, str(LAYERNORM))
    assert (code, err) == (0, "")
    assert out.startswith("layernorm_fwd_kernel  (launch 0, from ncu's details page alone)\n")
    [fix] = fix_lines(out)
    assert fix.startswith("CPIStall: ") and fix.endswith("(44.5 % est., of the part it measured)")
    assert "    TheoreticalOccupancy: The 9.00 theoretical warps per scheduler" in out
    [kernel] = json.loads(analyze(capsys, str(LAYERNORM), "--json")[1])["kernels"]
    assert (kernel["name"], kernel["id"], kernel["fix"]) == ("layernorm_fwd_kernel", 0, fix)


def _without_estimates(page: str) -> str:
    """The details page as ncu writes it when no rule estimates a gain (every speedup blank)."""
    rows = list(csv.reader(io.StringIO(page)))
    column = rows[0].index("Estimated Speedup")
    out = io.StringIO()
    csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(
        [*row[:column], "", *row[column + 1:]] if len(row) > column and i else row for i, row in enumerate(rows))
    return out.getvalue()


def test_a_details_page_that_cannot_name_the_fix_alone_is_refused_in_one_line_naming_details(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """No estimate on the page: the fix is the decision tree's, which reads the raw page."""
    bare = tmp_path / "softmax.details.csv"
    bare.write_text(_without_estimates(DETAILS.read_text()))
    code, out, err = analyze(capsys, str(bare))
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and f"cockpit analyze RAW.csv --details {bare}" in err
    assert "no rule on it estimates a gain" in err
    code, out, err = analyze(capsys, str(DETAILS), "--details", str(DETAILS))
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and "ncu's details page where the raw page goes" in err
