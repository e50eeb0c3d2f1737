"""`cockpit analyze FILE.csv|FILE.ncu-rep [--json]` on the real H200 recordings: a compact block or
one JSON object per launch, exit 0; unreadable or non-ncu files end in one CockpitError line."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from cockpit.analysis import ncu_report
from cockpit.cli.analyze import analyze_file
from cockpit.errors import CockpitError
from tests.test_ncu_parse import NCU, RECORDED


def run(capsys: pytest.CaptureFixture[str], path: Path, as_json: bool, **kw: float) -> str:
    assert analyze_file(path, as_json, **kw) == 0
    out, err = capsys.readouterr()
    assert err == ""
    return out


def test_json_carries_the_metrics_used_and_the_verdict(capsys: pytest.CaptureFixture[str]) -> None:
    data = json.loads(run(capsys, NCU / "ours-d64.csv", True))
    (k,) = data["kernels"]
    assert (k["name"], k["id"], k["grid"], k["block"], k["duration_ns"]) == (
        "attn_fwd_kernel", 0, [32, 16, 4], [256, 1, 1], 1_322_432)
    assert k["metrics"]["sm__throughput.avg.pct_of_peak_sustained_elapsed"] == 45.22
    assert k["metrics"]["gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"] == 62.10
    assert k["metrics"]["launch__occupancy_limit_registers"] == 2
    assert k["units"]["gpu__time_duration.sum"] == "ns"
    assert k["occupancy_limiters"] == ["registers"]
    assert k["top_stalls"][0] == {"reason": "wait", "cycles_per_issue": 1.75}
    assert k["verdict"]["bottleneck"] == "memory-bound"
    assert k["verdict"]["confidence"] == "medium"
    assert k["verdict"]["recommendation"].startswith("larger tiles")
    assert set(k["verdict"]) == {"bottleneck", "headline", "recommendation", "confidence",
                                 "confidence_reason", "notes"}


@pytest.mark.parametrize("name", RECORDED)
def test_every_recording_gives_one_json_object(capsys: pytest.CaptureFixture[str], name: str) -> None:
    out = run(capsys, NCU / f"{name}.csv", True)
    assert out.count("\n") == 1
    assert len(json.loads(out)["kernels"]) == 1


def test_a_benchmark_time_turns_a_short_kernel_into_launch_overhead(capsys: pytest.CaptureFixture[str]) -> None:
    data = json.loads(run(capsys, NCU / "ours-d64.csv", True, bench_ms=3.0))
    assert data["kernels"][0]["verdict"]["bottleneck"] == "launch-overhead"
    assert data["kernels"][0]["metrics"]["bench_ms"] == 3.0


def test_the_block_shows_shape_sol_occupancy_stalls_and_the_fix(capsys: pytest.CaptureFixture[str]) -> None:
    lines = run(capsys, NCU / "ours-d64.csv", False).splitlines()
    assert lines[0] == "attn_fwd_kernel  (launch 0, device 0, cc 9.0)"
    text = "\n".join(lines)
    assert "  duration    1.322 ms   grid (32, 16, 4) x block (256, 1, 1), 7.76 waves/SM" in text
    assert "  SOL         compute 45.2 %  memory 62.1 %  (DRAM 2.0 %, L1 64.0 %, L2 14.4 %)" in text
    assert "  occupancy   theoretical 25.0 %  achieved 24.3 %  limited by registers" in text
    assert "  stalls      wait 1.75, short_scoreboard 1.38, not_selected 1.06  (cycles per issue)" in text
    assert "  verdict     memory-bound: memory 62.1 % vs compute 45.2 % of peak, L1 leads at 64.0 %" in text
    assert "  fix         larger tiles" in text and "  confidence  medium: " in text
    assert "top warp stalls" not in text  # shown once, on the stalls line


def test_the_stdout_capture_and_several_launches_print_one_block_each(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = run(capsys, NCU / "ours-d64-stdout.csv", False)
    assert "stalls      n/a (add --section WarpStateStats)" in out
    assert "achieved n/a" in out
    both = tmp_path / "both.csv"
    copy_row = (NCU / "copy.csv").read_text().splitlines()[2].replace('"0","', '"1","', 1)
    both.write_text((NCU / "tiny.csv").read_text() + copy_row + "\n")
    blocks = run(capsys, both, False).split("\n\n")
    assert [b.splitlines()[0] for b in blocks] == [
        "vectorized_elementwise_kernel  (launch 0, device 0, cc 9.0)",
        "vectorized_elementwise_kernel  (launch 1, device 0, cc 9.0)"]
    assert "verdict     small-grid: " in blocks[0] and "verdict     memory-bound: " in blocks[1]


@pytest.mark.parametrize(("content", "says"), [
    (b"hello\nworld\n", "no ncu CSV header"),
    (b"\x00\x01\x02NCU-REP-ish binary\x00", "a binary file, not an ncu CSV"),
    ((NCU / "no-match.txt").read_bytes(), "vectorized_elementwise_kernel"),
    ((NCU / "ours-d64.csv").read_bytes().split(b"\n")[0] + b"\n", "no kernel launches"),
])
def test_garbage_is_one_line_saying_what_to_do(tmp_path: Path, content: bytes, says: str) -> None:
    path = tmp_path / "bad.csv"
    path.write_bytes(content)
    with pytest.raises(CockpitError) as err:
        analyze_file(path, False)
    assert says in str(err.value) and str(path) in str(err.value) and "\n" not in str(err.value)


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(CockpitError, match="no such file"):
        analyze_file(tmp_path / "nope.csv", True)


def test_a_report_without_ncu_here_says_how_to_export_it(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    rep = tmp_path / "ours.ncu-rep"
    rep.write_bytes(b"\x00binary")
    monkeypatch.setattr(ncu_report.shutil, "which", lambda _: None)
    with pytest.raises(CockpitError) as err:
        analyze_file(rep, False)
    message = str(err.value)
    assert "needs ncu to import a .ncu-rep" in message
    assert "ncu --import ours.ncu-rep --csv --page raw --print-units base > ours.csv" in message


def _fake_ncu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, script: str) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    ncu = bin_dir / "ncu"
    ncu.write_text("#!/bin/sh\n" + script)
    ncu.chmod(ncu.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")


def test_a_report_is_imported_through_ncu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """A stand-in `ncu` on PATH that checks its arguments and prints the recorded CSV."""
    _fake_ncu(tmp_path, monkeypatch, '[ "$1 $3 $4 $5 $6 $7" = "--import --csv --page raw --print-units base" ] '
                        f'|| exit 3\ncat "{NCU / "copy.csv"}"\n')
    rep = tmp_path / "copy.ncu-rep"
    rep.write_bytes(b"\x00binary")
    data = json.loads(run(capsys, rep, True))
    assert data["kernels"][0]["verdict"]["bottleneck"] == "memory-bound"


def test_an_ncu_that_cannot_import_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_ncu(tmp_path, monkeypatch, 'echo "==ERROR== Failed to open report file" >&2\nexit 1\n')
    rep = tmp_path / "broken.ncu-rep"
    rep.write_bytes(b"\x00")
    with pytest.raises(CockpitError, match="Failed to open report file"):
        analyze_file(rep, False)
