"""The screen tells the state: SVG snapshots at 80x24 of the key bar (and what is above it) in each
state a session can be in: only the keys that act now are offered, esc in the editor, the report and
a new session once it has ended, no workload said where the gates are.

Update after an intended change: pytest tests/test_state_snapshots.py --snapshot-update
"""

from __future__ import annotations

from cockpit.config import Config
from cockpit.session import events as ev
from cockpit.session.journal import JournalWriter
from cockpit.session.workspace import Workspace
from cockpit.ui.pictures.screenshot import build_demo_session, screenshot_app

SIZE = (80, 24)


def demo(ws: Workspace, **kwargs: object):  # type: ignore[no-untyped-def]
    ref, now = build_demo_session(ws, Config())
    return screenshot_app(ws, Config(), ref, now, **kwargs)  # type: ignore[arg-type]


def test_no_session_open_offers_a_new_one_history_and_patterns(snap_compare, ws) -> None:
    _ref, now = build_demo_session(ws, Config())  # a session in the workspace, none opened
    app = screenshot_app(ws, Config(), None, now)  # type: ignore[arg-type]
    assert snap_compare(app, terminal_size=SIZE, press=["escape"])


def test_a_session_open_with_no_gate_running_offers_no_cancel(snap_compare, ws) -> None:
    assert snap_compare(demo(ws), terminal_size=SIZE)


def test_in_the_editor_only_its_own_keys_and_esc_are_offered(snap_compare, ws) -> None:
    assert snap_compare(demo(ws), terminal_size=SIZE, press=["tab"])


def test_with_no_workload_the_gates_say_cockpit_init_and_r_is_not_offered_on_them(snap_compare, ws) -> None:
    assert snap_compare(demo(ws, example_workload=False), terminal_size=SIZE, press=["down"])


def test_an_ended_session_offers_its_report_and_a_new_session(snap_compare, ws) -> None:
    ref, now = build_demo_session(ws, Config())
    writer = JournalWriter(ref.journal)
    writer.append(ev.session_ended(now, "done"))
    writer.close()
    assert snap_compare(screenshot_app(ws, Config(), ref, now), terminal_size=SIZE)
