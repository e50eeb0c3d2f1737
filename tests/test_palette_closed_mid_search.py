"""The command palette closed while its search still runs does not end the app: the key fuzzer
found ctrl+p then a key that took the palette down at 80x24, and the search's last refresh asked
for a list that was gone (Textual's NoMatches, the crash screen)."""

from __future__ import annotations

import pytest
from textual.app import App
from textual.command import CommandList, CommandPalette
from textual.css.query import NoMatches

from cockpit.ui.shims.palette import SteadyPalette
from tests.waiting import until


class Host(App[None]):
    pass


async def _taken_down(palette_type: type[CommandPalette]) -> None:
    """A palette whose list has been taken down, told by its search that it has hits."""
    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        palette = palette_type(id="--command-palette")
        await app.push_screen(palette)
        await until(pilot, lambda: bool(palette.query(CommandList)), "the palette's list mounted")
        await palette.query_one(CommandList).remove()
        palette._list_visible = not palette._list_visible  # the search's last refresh
        await pilot.pause()
        assert app.is_running


async def test_textuals_own_palette_raises_there() -> None:
    """The fault itself, so the test below cannot pass by not reaching it."""
    with pytest.raises(NoMatches):
        await _taken_down(CommandPalette)


async def test_the_cockpits_palette_taken_down_mid_search_leaves_the_app_running() -> None:
    await _taken_down(SteadyPalette)
