"""Widgets that come and go (a toast per status and per gate verdict) are not kept for the rest
of the day by Textual's method cache (textual#6665): the TUI's sweep empties it."""

from __future__ import annotations

from textual._styles_cache import StylesCache
from textual.app import App
from textual.widgets import Static

from cockpit.config import Config
from cockpit.ui.app import CockpitApp
from cockpit.ui.textual_leaks import SWEEP_EVERY_S, forget_removed_widgets


async def test_the_sweep_empties_the_cache_that_holds_each_rendered_widget() -> None:
    app: App[None] = App()
    async with app.run_test(size=(40, 10)) as pilot:
        await app.screen.mount(Static("bench: PASS — 1.07x geomean", classes="toast"))
        await pilot.pause()
        assert StylesCache.get_inner_outer.cache_info().currsize > 0  # keyed by each widget's cache
        forget_removed_widgets()
        assert StylesCache.get_inner_outer.cache_info().currsize == 0


async def test_the_cockpit_sweeps_once_a_minute_on_its_clock(ws, session, clock) -> None:
    app = CockpitApp(ws, Config(status_every_s=10**6), session, clock=clock, tick_s=3600, typing_gap_s=0)
    async with app.run_test(size=(140, 36)) as pilot:
        await pilot.pause()
        app.tick()
        assert StylesCache.get_inner_outer.cache_info().currsize > 0
        clock.advance(SWEEP_EVERY_S)
        app.tick()
        assert StylesCache.get_inner_outer.cache_info().currsize == 0
