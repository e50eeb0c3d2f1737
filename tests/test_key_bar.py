"""The bottom line of keys: what the screen offers now, drawn in one widget; a click runs the
key under the pointer and hovering a key shows what it does. A line too short for every key
drops keys whole, the least used first, and always keeps `?`."""

from __future__ import annotations

from cockpit.config import Config
from cockpit.ui.app import CockpitApp
from cockpit.ui.screens.commands import COMMANDS
from cockpit.ui.screens.dialogs import PhasePickerDialog
from cockpit.ui.widgets.key_bar import PRIORITY, KeyBar, keys_that_fit, rank

SIZE = (200, 36)  # wide enough for every key
MAIN_KEYS = ["tab Editor", "^f Zoom panel", *(f"{c.key.replace('question_mark', '?').replace('ctrl+', '^')} "
                                              f"{c.title}" for c in COMMANDS if c.footer)]
IDLE_KEYS = [k for k in MAIN_KEYS if k != "x Cancel gate"]
"""An open session with no gate running: x has nothing to cancel, so it is not offered."""


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
        assert line.startswith(" " + "  ".join(IDLE_KEYS) + " ")  # in the order they are bound
        assert line.endswith("▏^p palette ") and len(line) == SIZE[0]
        assert "Rerun last" not in line  # keys kept off the footer stay off it


async def test_focus_in_the_editor_puts_its_own_keys_first_and_esc_and_no_letter(ws, session, clock) -> None:
    """In the editor a letter types itself: only the keys that act there are offered, esc among them."""
    app = app_for(ws, session, clock)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("tab")
        await pilot.pause()
        line = app.screen.query_one(KeyBar).render().plain
        assert line.startswith(" ^t Note  ^l Status line  ^g Gate result  esc Leave editor  ^f Zoom panel  ^n New ")
        assert "tab Editor" not in line and "r Run gate" not in line and "q Quit" not in line


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


def shown_keys(line: str) -> list[str]:
    """The `key Description` items of a key bar line, the palette's left out."""
    return [item.strip() for item in line.split("▏")[0].split("  ") if item.strip()]


async def test_in_an_80_column_pane_keys_drop_whole_the_least_used_first_and_help_stays(ws, session, clock) -> None:
    app = app_for(ws, session, clock)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        line = app.screen.query_one(KeyBar).render().plain
        assert len(line) == 80 and line.endswith("▏^p palette ")
        shown = shown_keys(line)
        assert all(item in MAIN_KEYS for item in shown), shown  # no label cut mid-word
        assert shown == ["g Go to phase…", "s Post status", "r Run gate", "q Quit", "? Help"]
        assert "Next phase" not in line and "Zoom panel" not in line


async def test_at_every_width_the_keys_shown_are_the_best_ranked_ones(ws, session, clock) -> None:
    by_title = {f"{c.key.replace('question_mark', '?').replace('ctrl+', '^')} {c.title}": c.action
                for c in COMMANDS}
    by_title |= {"tab Editor": "focus_editor", "^f Zoom panel": "zoom"}
    app = app_for(ws, session, clock)
    async with app.run_test(size=(80, 24)) as pilot:
        for width in (60, 80, 100, 120, 140, 160, 200):
            await pilot.resize_terminal(width, 24)
            await pilot.pause()
            line = app.screen.query_one(KeyBar).render().plain
            shown = shown_keys(line)
            assert "? Help" in shown and all(item in IDLE_KEYS for item in shown), (width, line)
            acting = [a for a in PRIORITY if a != "cancel_gate"]  # nothing runs: x is not offered
            ranks = sorted(acting.index(by_title[item]) for item in shown)
            assert ranks == list(range(len(shown))), (width, line)  # a prefix of PRIORITY


def test_help_ranks_first_then_a_panels_own_keys_then_the_main_screens_by_use() -> None:
    assert rank("app.help", 9) < rank("insert_note", 0) < rank("app.run_gate", 1) < rank("app.zoom", 2)
    assert rank("insert_note", 0) < rank("insert_status", 1)  # unranked keys keep their order
    widths, ranks = [10, 10, 10, 10], [(2, 3), (0, 0), (2, 1), (1, 0)]
    assert keys_that_fit(widths, ranks, 35) == {1, 3, 2}
    assert keys_that_fit(widths, ranks, 9) == set()
    assert keys_that_fit([5, 50, 5], [(0, 0), (1, 0), (2, 0)], 60) == {0, 1, 2}
    assert keys_that_fit([5, 50, 5], [(0, 0), (1, 0), (2, 0)], 54) == {0}  # never skips ahead
