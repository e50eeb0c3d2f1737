"""The last of a stranger's workspace files read without the door: a FIFO in place of a workload's
tuned file (`cockpit workload show`, `cockpit tune`), of an ncu CSV or its details page beside it
(`cockpit analyze sessions/S/logs/profile.csv`), or of a build log is one line naming it, never a
hang; an ncu CSV over its cap is refused unread; a build log is judged from its tail up to a stated
cap, and the verdict says what was cut and where the whole is (`[gates] log_max_mb` lets a log grow
to 100,000 MB, which was read whole). Each FIFO test runs under the watchdog of
tests/test_hostile_fifos.py: a reader stuck in `open` gets an empty file, so a regression fails."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from cockpit.cli import main
from cockpit.config import Config
from cockpit.errors import CockpitError
from cockpit.gates.build import gate as build
from cockpit.gates.gate import GateContext
from cockpit.workload.tuned import TunedFileError, read_winners
from tests.test_hostile_fifos import RETURNS_WITHIN_S, Watchdog

NCU = Path(__file__).parent / "fixtures" / "gpu" / "ncu"
FAILED_BUILD = Path(__file__).parent / "fixtures" / "builds" / "ninja-nvcc-syntax-error.log"
FIFO_SAID = "a FIFO, not a file: remove it or put the file back"


def fifo(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    return path


def test_a_fifo_in_place_of_a_tuned_file_is_one_line_never_a_hang(tmp_path: Path) -> None:
    tuned = fifo(tmp_path / "workloads" / "tiles.tuned.json")
    started = time.monotonic()
    with Watchdog([tuned], RETURNS_WITHIN_S) as watchdog, pytest.raises(TunedFileError) as err:
        read_winners(tuned)
    assert not watchdog.unblocked and time.monotonic() - started < RETURNS_WITHIN_S
    assert str(err.value) == f"{tuned}: cannot be read ({FIFO_SAID})"


def analyze(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """`cockpit analyze PATH` under the watchdog: its exit code and what it said on stderr."""
    capsys.readouterr()
    fifos = [p for p in path.parent.iterdir() if p.is_fifo()]
    with Watchdog(fifos, RETURNS_WITHIN_S) as watchdog:
        code = main(["analyze", str(path)])
    assert not watchdog.unblocked, f"cockpit analyze was stuck on {watchdog.unblocked}"
    return code, capsys.readouterr().err


def test_cockpit_analyze_beside_a_fifo_details_page_names_it_and_returns(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    csv = tmp_path / "logs" / "profile.csv"
    csv.parent.mkdir()
    csv.write_bytes((NCU / "copy.csv").read_bytes())
    details = fifo(tmp_path / "logs" / "profile.details.csv")  # the sibling it reads unasked
    assert analyze(csv, capsys) == (2, f"cockpit: {details} is {FIFO_SAID}\n")


def test_cockpit_analyze_names_a_fifo_given_as_the_report_never_no_such_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    csv = fifo(tmp_path / "profile.csv")
    assert analyze(csv, capsys) == (2, f"cockpit: {csv} is {FIFO_SAID}\n")


def test_an_ncu_details_page_over_the_cap_is_refused_unread(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    csv = tmp_path / "profile.csv"
    csv.write_bytes((NCU / "copy.csv").read_bytes())
    details = tmp_path / "profile.details.csv"
    with details.open("wb") as f:
        f.truncate(300 << 20)  # sparse: costs no disk
    assert analyze(csv, capsys) == (2, f"cockpit: {details} is 300 MB, over the 256 MB an ncu CSV may be: "
                                       "not read (the file is left as it is)\n")


def build_context(tmp_path: Path) -> GateContext:
    ctx = GateContext(tmp_path, tmp_path / "sessions" / "s1", "001-build", config=Config())
    ctx.log_path.parent.mkdir(parents=True)
    return ctx


def test_a_build_log_past_its_cap_is_judged_from_its_tail_and_says_what_was_cut(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A log of 4 MB of warnings, then the failed step, judged under a 1 MB cap: the verdict names
    the failure at its end, and says it read only the last 1 MB and where the whole log is."""
    monkeypatch.setattr(build, "MAX_BUILD_LOG_BYTES", 1 << 20)
    ctx = build_context(tmp_path)
    noise = b"k.cu(9): warning #177-D: variable \"unused\" was declared but never referenced\n"
    ctx.log_path.write_bytes(noise * ((4 << 20) // len(noise) + 1) + FAILED_BUILD.read_bytes())
    verdict = build.judge_replaced_build(ctx, 1)
    assert verdict.status == "fail"
    assert verdict.summary == ('FAILED: k.cuda.o — k.cu:4: expected a ";" (judged from the last 1 MB of its '
                               "4 MB log: the whole is sessions/s1/logs/001-build.log)")


def test_a_short_build_log_is_judged_whole_with_nothing_said_of_a_cut(tmp_path: Path) -> None:
    ctx = build_context(tmp_path)
    ctx.log_path.write_bytes(FAILED_BUILD.read_bytes())
    assert build.judge_replaced_build(ctx, 1).summary == 'FAILED: k.cuda.o — k.cu:4: expected a ";"'


def test_a_fifo_in_place_of_the_build_log_is_one_line_never_a_hang(tmp_path: Path) -> None:
    ctx = build_context(tmp_path)
    log = fifo(ctx.log_path)
    with Watchdog([log], RETURNS_WITHIN_S) as watchdog, pytest.raises(CockpitError) as err:
        build.judge_replaced_build(ctx, 1)
    assert not watchdog.unblocked
    assert str(err.value) == f"{log}: cannot read the build log ({FIFO_SAID})"
