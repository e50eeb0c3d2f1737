"""SVG snapshots of the main screens, on the scripted demo session with a frozen clock.

Update after an intended change: pytest tests/test_snapshots.py --snapshot-update
"""

from __future__ import annotations

from cockpit.config import Config
from cockpit.session.workspace import Workspace
from cockpit.ui.screenshot import build_demo_session, screenshot_app

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
