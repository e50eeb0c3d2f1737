"""A long day stays at its warm-up size: widgets that come and go (a toast per status and per gate
verdict) are not kept by Textual's method cache (textual#6665), and the geometry memos that a
scrolling log fills are emptied: the TUI's sweep, once a minute on its clock."""

from __future__ import annotations

from textual._styles_cache import StylesCache
from textual.app import App
from textual.geometry import Region
from textual.widgets import Static

from cockpit.config import Config
from cockpit.ui.app import CockpitApp
from cockpit.ui.shims.textual_caches import SWEEP_EVERY_S, empty_textual_caches


async def test_the_sweep_empties_the_cache_that_holds_each_rendered_widget() -> None:
    app: App[None] = App()
    async with app.run_test(size=(40, 10)) as pilot:
        await app.screen.mount(Static("bench: PASS — 1.07x geomean", classes="toast"))
        await pilot.pause()
        assert StylesCache.get_inner_outer.cache_info().currsize > 0  # keyed by each widget's cache
        empty_textual_caches()
        assert StylesCache.get_inner_outer.cache_info().currsize == 0


def test_the_sweep_empties_the_geometry_memos_a_scrolling_log_fills() -> None:
    for y in range(100):  # a log pane scrolled line by line
        Region(0, y, 80, 20).intersection(Region(0, 10, 80, 20))
    assert Region.intersection.cache_info().currsize >= 100
    empty_textual_caches()
    assert Region.intersection.cache_info().currsize == 0


async def test_the_cockpit_sweeps_once_a_minute_on_its_clock(ws, session, clock) -> None:
    app = CockpitApp(ws, Config(status_every_s=10**6), session, clock=clock, tick_s=3600, typing_gap_s=0)
    async with app.run_test(size=(140, 36)) as pilot:
        await pilot.pause()
        app.tick()
        assert StylesCache.get_inner_outer.cache_info().currsize > 0
        assert Region.intersection.cache_info().currsize > 0
        clock.advance(SWEEP_EVERY_S)
        app.tick()
        assert StylesCache.get_inner_outer.cache_info().currsize == 0
        assert Region.intersection.cache_info().currsize == 0
