"""The status history pane: newest last and in view (in an 80x24 pane too, from its time on),
long lines wrapped under their own column, and a long day kept to its newest statuses (the
journal and the report keep them all)."""

from __future__ import annotations

import time

from rich.console import Console

from cockpit.config import Config
from cockpit.session import events as ev
from cockpit.session.live import LiveSession
from cockpit.session.state import StatusEntry
from cockpit.ui.app import CockpitApp
from cockpit.ui.widgets.status_history import SHOWN, StatusHistory, cut_to_rows, each_status, status_lines
from tests.screen_rows import screen_rows

from .waiting import until

T0 = 1_795_000_000.0  # 11:06:40 UTC


def test_a_long_status_wraps_under_its_own_column() -> None:
    entries = (StatusEntry(T0, "1:02:00 elapsed · FIX 12:00/90:00 · now: ncu on attn_fwd_kernel", False),
               StatusEntry(T0 + 150, "1:04:30 elapsed", True))
    lines = [line.plain for line in status_lines(entries, 40, Console(width=40))]
    assert lines == ["11:06:40 you  1:02:00 elapsed · FIX",
                     "              12:00/90:00 · now: ncu on",
                     "              attn_fwd_kernel",
                     "11:09:10 auto 1:04:30 elapsed"]


async def test_a_day_of_statuses_shows_the_newest_and_says_where_the_rest_are(ws, session, clock) -> None:
    live = LiveSession(session)
    live.append([ev.status(T0 + 60 * i, f"status {i}", True) for i in range(SHOWN + 50)])
    live.close()
    app = CockpitApp(ws, Config(status_every_s=10**6), session, clock=clock, tick_s=3600, typing_gap_s=0)
    async with app.run_test(size=(140, 36)) as pilot:
        pane = app.query_one(StatusHistory)
        lines = pane.query_one("#status-lines")
        # the lines get their height in a layout after the first: wait for it, and for the
        # anchored scroll it triggers (a fast box asked before it and read 88 of 91)
        await until(pilot, lambda: lines.size.height == len(lines.plain.splitlines())  # type: ignore[attr-defined]
                    and pane.scroll_y == pane.max_scroll_y, "the status lines laid out, scrolled to their end")
        text = lines.plain  # type: ignore[attr-defined]
        assert pane.border_subtitle == f"{SHOWN + 50} posted"
        assert text.startswith("50 earlier: in the journal and the report (R)\n")
        assert "status 49\n" not in text and text.endswith(f"status {SHOWN + 49}")
        assert pane.scroll_y == pane.max_scroll_y > 0  # the newest in view


def test_a_status_taller_than_its_pane_shows_its_start_and_says_there_is_more() -> None:
    entry = StatusEntry(T0, "34:52 elapsed · PROFILE 5:00/30:00 · now: ncu on attn_fwd_kernel, waiting for "
                            "the report", False)
    lines = each_status((entry,), 36, Console(width=36))[0]
    assert lines[0].plain.startswith("11:06:40 you 34:52 elapsed")  # narrow: wrapped under the time
    assert len(lines) == 4
    cut = [line.plain for line in cut_to_rows(lines, 2, 36)]
    assert cut[0] == lines[0].plain and cut[1].endswith(" …") and len(cut[1]) <= 36
    assert cut_to_rows(lines, 4, 36) == lines and cut_to_rows(lines, 0, 36) == lines


async def test_at_80x24_the_status_just_posted_is_on_screen_from_its_time_to_its_words(
        ws, session, clock, no_gpu) -> None:
    # no GPU here whatever the box has: the GPU panel's height is the same on CI and on a GPU box
    app = CockpitApp(ws, Config(status_every_s=10**6), session, clock=clock, tick_s=3600, typing_gap_s=0)
    posted = time.strftime("%H:%M:%S", time.localtime(clock.now()))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("s", *"ptxas reports zero spills", "enter")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            await pilot.pause(0.05)
            rows = screen_rows(app)
            first = [i for i, row in enumerate(rows) if f"{posted} you " in row]
            if first and "zero spills" in " ".join(rows[first[0]:first[0] + 3]):
                break
        else:
            raise AssertionError("the status is not on screen at 80x24:\n" + "\n".join(screen_rows(app)))
        pane = app.query_one(StatusHistory)
        assert pane.region.bottom <= 23  # above the key bar, in the window
