"""SVG snapshots of the main screens, on the scripted demo session with a frozen clock.

Update after an intended change: pytest tests/test_snapshots.py --snapshot-update
"""

from __future__ import annotations

import pytest

from cockpit.config import Config
from cockpit.session.workspace import Workspace
from cockpit.ui.pictures.screenshot import build_demo_session, screenshot_app
from cockpit.ui.pictures.screenshot_busy import BUSY_SIZES, busy_app, start_build_show_bench, stop_build

SIZE = (140, 36)


def demo(ws: Workspace):  # type: ignore[no-untyped-def]
    ref, now = build_demo_session(ws, Config())
    return screenshot_app(ws, Config(), ref, now)


def test_main_screen(snap_compare, ws) -> None:
    assert snap_compare(demo(ws), terminal_size=SIZE)


def test_new_session_dialog(snap_compare, ws) -> None:
    assert snap_compare(demo(ws), terminal_size=SIZE, press=["ctrl+n", "y"])


def test_post_status_dialog(snap_compare, ws) -> None:
    assert snap_compare(demo(ws), terminal_size=SIZE, press=["s", *"reading ptxas output"])


def test_go_to_phase_dialog(snap_compare, ws) -> None:
    assert snap_compare(demo(ws), terminal_size=SIZE, press=["g"])


def test_main_screen_in_an_80x24_pane(snap_compare, ws) -> None:
    assert snap_compare(demo(ws), terminal_size=(80, 24))


def test_editing_in_an_80x24_pane_gives_the_editor_the_width(snap_compare, ws) -> None:
    assert snap_compare(demo(ws), terminal_size=(80, 24), press=["tab", *"BN=64 spills 0"])


def test_main_screen_at_160x48(snap_compare, ws) -> None:
    assert snap_compare(demo(ws), terminal_size=(160, 48))


@pytest.mark.parametrize("size", BUSY_SIZES, ids=lambda size: f"{size[0]}x{size[1]}")
def test_main_screen_with_a_bench_result_the_env_result_and_a_build_running(snap_compare, tmp_path, size) -> None:  # type: ignore[no-untyped-def]
    """The recorded H200 session after its bench, a rebuild replaying the recorded build log: the
    bench's headline and table in the pane, env's result and the running build in the list, at
    80x24, 120x40 and 160x48 (the same screens as screenshots/main-*.svg)."""
    app = busy_app(tmp_path)
    try:
        assert snap_compare(app, terminal_size=size, run_before=start_build_show_bench)
    finally:
        stop_build(app)


async def test_keys_typed_into_a_capture_stay_unsaved_however_slowly_they_come(ws, monkeypatch) -> None:
    """The capture's clock stands still for the editor's autosave too: on a loaded CI box the keys
    of the 80x24 editing capture once took longer than the autosave's 1.5 s, and the border read
    "saved 05:16:59" instead of "unsaved"."""
    from cockpit.ui.editor import pane as editor

    monkeypatch.setattr(editor, "SAVE_AT_MOST_S", 1e-9)  # any time at all between keys is "too long"
    monkeypatch.setattr(editor, "SAVE_AFTER_IDLE_S", 1e-9)
    app = demo(ws)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("tab", *"BN=64")
        app.editor._autosave()  # what its timer does when it fires
        assert app.editor.border_subtitle == "unsaved"
