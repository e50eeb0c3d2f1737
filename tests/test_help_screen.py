"""`?` lists every key, read from the bindings themselves: a key added to the app, the main
screen or any screen or panel is in the help the moment it works."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest
from textual.dom import DOMNode

import cockpit.ui
from cockpit.config import Config
from cockpit.ui.app import CockpitApp
from cockpit.ui.screens.commands import key_label
from cockpit.ui.screens.help_screen import HelpScreen, all_bindings, help_sources
from cockpit.ui.screens.main_screen import MainScreen, printable_actions

SIZE = (80, 24)


def app_for(ws, session, clock) -> CockpitApp:  # type: ignore[no-untyped-def]
    return CockpitApp(ws, Config(status_every_s=10**6), session, clock=clock, tick_s=3600, typing_gap_s=0)


async def open_help(app: CockpitApp, pilot) -> HelpScreen:  # type: ignore[no-untyped-def]
    await pilot.pause()
    await pilot.press("question_mark")
    await pilot.pause()
    assert isinstance(app.screen, HelpScreen)
    return app.screen


async def test_every_key_of_the_app_and_the_main_screen_is_in_the_help(ws, session, clock) -> None:
    app = app_for(ws, session, clock)
    async with app.run_test(size=SIZE) as pilot:
        help_screen = await open_help(app, pilot)
        lines = [line for _, section in help_screen.sections for line in section]
        bindings = [*all_bindings(app), *all_bindings(MainScreen)]
        assert len(bindings) > 20
        for binding in bindings:
            key = key_label(binding.key)
            assert any(key in line.keys.split() and (not binding.description or binding.description
                                                    in (line.title, line.does)) for line in lines), binding
            assert key in help_screen.plain


async def test_history_and_shift_tab_are_in_the_help_with_what_they_do(ws, session, clock) -> None:
    app = app_for(ws, session, clock)
    async with app.run_test(size=SIZE) as pilot:
        text = (await open_help(app, pilot)).plain.splitlines()
        history = next(line for line in text if line.startswith("  H "))
        assert "History" in history and "Every session side by side" in history
        back = next(line for line in text if line.startswith("  shift+tab "))
        assert "gate's output" in back
        assert any(line.startswith("  ? ") and "Help" in line for line in text)


async def test_the_help_says_what_each_mark_of_the_gate_list_means(ws, session, clock) -> None:
    app = app_for(ws, session, clock)
    async with app.run_test(size=SIZE) as pilot:
        text = (await open_help(app, pilot)).plain.splitlines()
        marks = text[text.index("Marks in the gate list") + 1:]
        assert any(line.startswith("  ⊘  could not run  no verdict on the kernel: no GPU") for line in marks)
        assert any(line.startswith("  ✗  fail  a check failed: the kernel") for line in marks)


@pytest.mark.parametrize("key", ["escape", "q", "question_mark"])
async def test_escape_q_or_question_mark_closes_the_help(ws, session, clock, key: str) -> None:
    app = app_for(ws, session, clock)
    async with app.run_test(size=SIZE) as pilot:
        await open_help(app, pilot)
        await pilot.press(key)
        await pilot.pause()
        assert app.screen is app.main_screen
        assert app.live is not None and app.live.state.is_open  # q closed the help, not the cockpit


def test_every_cockpit_class_with_keys_of_its_own_is_in_the_help() -> None:
    listed = {cls for _, classes in help_sources() for cls in classes}
    with_keys = set()
    for module in pkgutil.walk_packages(cockpit.ui.__path__, "cockpit.ui."):
        for _, cls in inspect.getmembers(importlib.import_module(module.name), inspect.isclass):
            if issubclass(cls, DOMNode) and cls.__module__ == module.name and "BINDINGS" in vars(cls):
                with_keys.add(cls)
    assert with_keys - listed == set()


async def test_a_question_typed_before_tab_opens_no_help_and_lands_nowhere(ws, session, clock) -> None:
    app = CockpitApp(ws, Config(status_every_s=10**6), session, clock=clock, tick_s=3600, gpu_every_s=0,
                     typing_gap_s=5.0)  # keys apart by less, even on a loaded box
    assert printable_actions()["question_mark"] == "help"  # held like the letters
    before = session.log_md.read_text()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press(*"why?")
        await pilot.pause()
        app.editor.flush()
        assert not isinstance(app.screen, HelpScreen)
    assert session.log_md.read_text() == before


def test_the_readmes_keys_section_names_every_key_of_the_app_and_the_main_screen() -> None:
    from pathlib import Path

    readme = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")
    keys = readme[readme.index("## Keys"):readme.index("**Typing is safe.**")]
    labels = {key_label(b.key) for b in [*all_bindings(MainScreen), *all_bindings(CockpitApp)]}
    labels.add(key_label(CockpitApp.COMMAND_PALETTE_BINDING))  # bound when the app starts
    assert {label for label in labels if f"`{label}`" not in keys} == set()


def test_snapshot_of_the_help_in_an_80x24_pane(snap_compare, ws) -> None:  # type: ignore[no-untyped-def]
    from cockpit.ui.pictures.screenshot import build_demo_session, screenshot_app

    ref, now = build_demo_session(ws, Config())
    assert snap_compare(screenshot_app(ws, Config(), ref, now), terminal_size=SIZE, press=["question_mark"])
