"""The bottom line of keys: what the screen offers now, drawn in one widget; a click runs the
key under the pointer and hovering a key shows what it does."""

from __future__ import annotations

from cockpit.config import Config
from cockpit.ui.app import CockpitApp
from cockpit.ui.dialogs import PhasePickerDialog
from cockpit.ui.key_bar import KeyBar

SIZE = (140, 36)


def app_for(ws, session, clock) -> CockpitApp:  # type: ignore[no-untyped-def]
    return CockpitApp(ws, Config(status_every_s=10**6), session, clock=clock, tick_s=3600, typing_gap_s=0)


def start_of(bar: KeyBar, label: str) -> int:
    return bar.render().plain.index(label)


async def test_the_line_shows_the_main_screen_keys_and_the_palette_at_the_right_edge(ws, session, clock) -> None:
    app = app_for(ws, session, clock)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        bar = app.screen.query_one(KeyBar)
        line = bar.render().plain
        assert line.startswith(" tab Editor  ^f Zoom panel  n Next phase  k Skip phase ")
        assert line.endswith("▏^p palette ") and len(line) == SIZE[0]
        assert "Rerun last" not in line  # keys kept off the footer stay off it


async def test_focus_in_the_editor_puts_its_own_keys_first(ws, session, clock) -> None:
    app = app_for(ws, session, clock)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("tab")
        await pilot.pause()
        line = app.screen.query_one(KeyBar).render().plain
        assert line.startswith(" ^t Note  ^l Status line  ^g Gate result  tab Editor ")


async def test_a_click_on_a_key_runs_it_and_hovering_shows_what_it_does(ws, session, clock) -> None:
    app = app_for(ws, session, clock)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        bar = app.screen.query_one(KeyBar)
        await pilot.hover(KeyBar, offset=(start_of(bar, " ^f Zoom panel") + 1, 0))
        assert bar.tooltip == "The focused panel fills the window; again: back"
        await pilot.click(KeyBar, offset=(start_of(bar, " g Go to phase") + 1, 0))
        await pilot.pause()
        assert isinstance(app.screen, PhasePickerDialog)
