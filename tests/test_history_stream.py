"""A workspace of thousands of sessions: `cockpit history` prints each session's row as soon as it
is read (before the next one is opened), Ctrl+C stops it with the trend of what was read, the
History screen draws rows while it reads and stops reading when it is left, and the regression
search keeps one run per config set instead of every session's medians. (The 10,000-session
numbers are bench/history_big.py's.)"""

from __future__ import annotations

import asyncio
import threading

import pytest

from cockpit.cli import main
from cockpit.clock import FakeClock
from cockpit.config import Config
from cockpit.report import history_reader
from cockpit.report.history import SessionSummary
from cockpit.report.trend import RegressionWatch, overall
from cockpit.session.workspace import SessionRef, Workspace, create_session
from cockpit.ui.app import CockpitApp
from cockpit.ui.screens.history_screen import HistoryScreen

from .test_report_history import DAY, session


@pytest.fixture
def five(ws: Workspace) -> list[SessionRef]:
    return [session(ws, f"session {i}", DAY + i * 86400, 30) for i in range(5)]


def test_each_row_is_printed_before_the_next_session_is_read(
        ws: Workspace, five: list[SessionRef], capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    printed_before: list[str] = []  # what stdout held when each session was about to be read
    read = history_reader.read_session

    def reading(ref):  # type: ignore[no-untyped-def]
        printed_before.append(capsys.readouterr().out)
        return read(ref)

    monkeypatch.setattr(history_reader, "read_session", reading)
    assert main(["--workspace", str(ws.root), "history", "--wide"]) == 0
    assert printed_before[0].startswith("OUTCOME")  # the header before the first journal is opened
    for i in range(1, 5):
        assert five[i - 1].id in printed_before[i] and five[i].id not in printed_before[i]


def test_ctrl_c_stops_the_reading_and_prints_the_trend_of_the_sessions_read(
        ws: Workspace, five: list[SessionRef], capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    read = history_reader.read_session
    calls: list[str] = []

    def reading(ref):  # type: ignore[no-untyped-def]
        calls.append(ref.id)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return read(ref)

    monkeypatch.setattr(history_reader, "read_session", reading)
    assert main(["--workspace", str(ws.root), "history", "--wide"]) == 0
    out = capsys.readouterr().out
    assert five[1].id in out and five[2].id not in out
    assert "(stopped after 2 of 5 sessions: the trend is theirs)" in out
    assert "trend: repeated mistakes per session: 0 → 0" in out
    # --json prints one whole object or nothing
    calls.clear()
    assert main(["--workspace", str(ws.root), "history", "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "stopped after 2 of 5 sessions: nothing printed" in captured.err


async def test_leaving_the_history_screen_stops_the_reading(
        ws: Workspace, five: list[SessionRef], monkeypatch: pytest.MonkeyPatch) -> None:
    read = history_reader.read_session
    first_read, release = threading.Event(), threading.Event()
    calls: list[str] = []

    def reading(ref):  # type: ignore[no-untyped-def]
        calls.append(ref.id)
        if len(calls) == 2:  # the second session takes as long as the test says
            first_read.set()
            release.wait(10)
        return read(ref)

    monkeypatch.setattr(history_reader, "read_session", reading)
    ref = create_session(ws, Config(), "the open one", "optimize", DAY + 9 * 86400)
    app = CockpitApp(ws, Config(status_every_s=10**6), ref, clock=FakeClock(DAY + 9 * 86400 + 5),
                     typing_gap_s=0, tick_s=3600, gpu_every_s=0)
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.press("H")
        assert isinstance(app.screen, HistoryScreen)
        assert await asyncio.to_thread(first_read.wait, 10)
        await pilot.press("escape")
        assert not isinstance(app.screen, HistoryScreen)
        release.set()
        await app.workers.wait_for_complete()
    assert len(calls) == 2  # of 6: the reader stopped at the next session


def summary(i: int, ms: float, configs: int = 8) -> SessionSummary:
    best = tuple((f"N={2 ** k}", ms) for k in range(configs))
    return SessionSummary(f"s{i:05d}", "", "softmax", float(i), float(i) + 1, 1.0, None, 1.0, "HIGH", "001-bench",
                          (), "NVIDIA H100", best, (), (), 1, "")


def test_a_regression_is_found_against_the_fastest_run_and_the_watch_keeps_one_run_per_config_set() -> None:
    watch = RegressionWatch()
    found = [r for i in range(1000) if (r := watch.see(summary(i, 1.0 - (i % 3) * 0.01))) is not None]
    assert found == []  # within 2 % of one another: inside the fixed margin for runs without intervals
    slow = watch.see(summary(1000, 1.2))
    assert slow is not None and slow.earlier == "s00002"  # the first of the fastest (0.98 ms) of the 1000 before it
    assert slow.text.startswith("s01000: best valid run 22% slower than s00002's over 8 shared configs")
    assert watch.see(summary(1001, 1.2, configs=4)) is not None  # another config set, compared on the shared 4
    assert [len(runs) for runs in watch._fastest.values()] == [2]


def test_a_trend_line_lists_the_latest_twenty_sessions_of_many() -> None:
    lines = overall([summary(i, 1.0) for i in range(10_000)])
    [mistakes] = [line for line in lines if line.startswith("repeated mistakes")]
    assert mistakes == "repeated mistakes per session: " + " → ".join(["0"] * 20) + " (the last 20 of 10000 sessions)"


def test_a_sessions_bench_results_are_let_go_once_its_row_is_made(ws: Workspace) -> None:
    """A memo of the bench results read kept every one alive: 10,000 sessions held 1.9 GB. Nothing
    keeps them now: while a session's row is made, its own results are all that is held."""
    import gc

    from cockpit.gates.bench.result import BenchResult

    from .test_report_history import FIRST, bench

    for i in range(3):
        session(ws, f"bench {i}", DAY + i * 86400, 60, [("bench", "warn", bench(FIRST, True))] * 3)

    def alive() -> int:
        gc.collect()
        return sum(1 for o in gc.get_objects() if type(o) is BenchResult)  # isinstance wakes lazy modules

    before = alive()  # other tests' results, held by their modules
    reader = history_reader.HistoryReader(ws, DAY + 9 * 86400)
    for summary in reader:
        assert summary.best_speedup is not None  # its results were read to make the row...
        assert alive() <= before + 3  # ...and let go before the next session is opened
    assert len(reader.rows) == 3 and all(row.best_ms == () for row in reader.rows)
