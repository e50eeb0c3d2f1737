"""Typing is safe: words typed in the editor land in SESSION.md; words typed anywhere else fire no
single-letter action and land nowhere (the screen says where text goes)."""

from __future__ import annotations

import json

from cockpit.config import Config
from cockpit.ui.app import CockpitApp
from cockpit.ui.editor.typing_guard import HeldKey, KeyGuard, Typing, Unused
from cockpit.ui.screens.dialogs import ConfirmDialog

SENTENCE = "next: keep BN=64, quick x-check of the smem budget"


def journal_types(ref) -> list[str]:  # type: ignore[no-untyped-def]
    return [json.loads(line)["type"] for line in ref.journal.read_text().splitlines()]


def make_app(ws, session, clock, **kwargs) -> CockpitApp:  # type: ignore[no-untyped-def]
    return CockpitApp(ws, Config(status_every_s=10**6), session, clock=clock, tick_s=3600,
                      gpu_every_s=0, **kwargs)


async def test_one_tab_from_the_start_screen_then_a_sentence_lands_in_session_md(ws, session, clock) -> None:
    app = make_app(ws, session, clock, typing_gap_s=5.0)  # keys apart by less, even on a loaded box
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()  # the session is open and SESSION.md loaded
        await pilot.press("tab")
        await pilot.press(*SENTENCE)
        app.editor.flush()  # (an autosave may already have written it)
        assert app.live is not None and app.live.state.current_run is not None
        assert app.live.state.current_run.phase == "Environment"
        assert not isinstance(app.screen, ConfirmDialog)
    assert session.log_md.read_text().endswith(SENTENCE)
    assert "phase_ended" not in journal_types(session)


async def test_typing_before_any_tab_fires_nothing_and_says_where_text_goes(ws, session, clock) -> None:
    app = make_app(ws, session, clock, typing_gap_s=5.0)
    before = session.log_md.read_text()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press(*SENTENCE)  # starts with n (next phase), holds k, x, q, s, p ...
        await pilot.pause()
        app.editor.flush()
        assert app.focused is not app.editor.area
        assert app.gates.run is None and not isinstance(app.screen, ConfirmDialog)
        said = [n.message for n in app._notifications]
        assert said == ["Typing goes into SESSION.md in the editor: tab, then type or paste (esc leaves it)."]
    assert session.log_md.read_text() == before  # nothing typed outside the editor lands in it
    types = journal_types(session)
    assert "phase_ended" not in types and "status" not in types and "gate_started" not in types


async def test_a_phase_change_key_asks_first_and_only_y_moves_the_timer(ws, session, clock) -> None:
    app = make_app(ws, session, clock, typing_gap_s=0)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("n")
        assert isinstance(app.screen, ConfirmDialog)
        await pilot.press("escape")
        assert app.live is not None and app.live.state.current_run.phase == "Environment"
        await pilot.press("K", "y")
        assert app.live.state.current_run.phase == "Baseline"


async def test_escape_leaves_the_editor_and_tab_comes_back_to_it(ws, session, clock) -> None:
    app = make_app(ws, session, clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("tab")
        assert app.focused is app.editor.area
        await pilot.press("tab")  # Tab in the editor stays in the editor
        assert app.focused is app.editor.area
        await pilot.press("escape")
        assert app.focused is app.gate_panel
        await pilot.press("tab")
        assert app.focused is app.editor.area


async def test_at_80_columns_the_focused_editor_gets_the_whole_width(ws, session, clock) -> None:
    app = make_app(ws, session, clock)
    async with app.run_test(size=(80, 24)) as pilot:
        left = app.screen.query_one("#left")
        assert left.display and left.size.width == 40  # two readable halves, side by side
        await pilot.press("tab")
        await pilot.pause()
        assert not left.display
        assert app.editor.size.width >= 60
        await pilot.press("escape")
        await pilot.pause()
        assert left.display


async def test_the_zoom_key_fills_the_window_with_the_focused_panel(ws, session, clock) -> None:
    app = make_app(ws, session, clock)
    async with app.run_test(size=(160, 48)) as pilot:
        app.set_focus(app.gate_panel)
        await pilot.press("ctrl+f")
        assert app.screen.maximized is app.gate_panel
        await pilot.pause()
        # the header and the key bar stay: which session, the clock, and the way back
        assert app.header.region.height > 0 and app.screen.query_one("KeyBar").region.height > 0
        await pilot.press("ctrl+f")
        assert app.screen.maximized is None


def test_a_held_action_key_followed_by_another_key_is_typing() -> None:
    guard = KeyGuard({"n": "next_phase", "k": "skip_phase"})
    held = guard.press("n", "n")
    assert held == HeldKey("next_phase", "n")
    assert guard.press("e", "e") == Typing()
    assert not guard.release(held)  # its gap ended after the typing: it never runs
    assert guard.press("t", "t") == Unused()  # alone again, and no action uses it: ignored


def test_an_action_key_pressed_alone_runs_when_its_gap_ends() -> None:
    guard = KeyGuard({"k": "skip_phase"})
    held = guard.press("k", "k")
    assert guard.release(held)
    assert guard.held is None


def test_the_last_letter_of_a_burst_is_typing_and_a_letter_alone_still_acts() -> None:
    """Keys that arrived together (a paste without bracketed paste, a laggy SSH link): each comes
    within the gap after the one before, so each is typing, the last ("r", run the gate) too."""
    guard = KeyGuard({"r": "run_gate", "s": "post_status"}, gap_s=0.25)
    t = 100.0
    decisions = [guard.press(c, c, t + i * 1e-5) for i, c in enumerate("check the timer")]
    assert decisions[0] == Unused() and all(d == Typing() for d in decisions[1:])
    assert guard.held is None
    held = guard.press("r", "r", t + 5.0)  # seconds later, alone: an action again
    assert held == HeldKey("run_gate", "r") and guard.release(held)


async def test_a_bracketed_paste_outside_the_editor_is_refused_in_one_line_and_fires_nothing(
        ws, session, clock) -> None:
    from textual import events

    app = make_app(ws, session, clock, typing_gap_s=0)  # even with no typing gap at all
    before = session.log_md.read_text()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        app.screen.post_message(events.Paste("next: try stages\x1b]52;c;Y3VybA==\x07 and run"))
        await pilot.pause()
        app.editor.flush()
        assert app.gates.run is None and not isinstance(app.screen, ConfirmDialog)
        assert [n.message for n in app._notifications] == [
            "A paste goes into SESSION.md in the editor: tab, then type or paste (esc leaves it)."]
    assert session.log_md.read_text() == before
    assert "gate_started" not in journal_types(session) and "status" not in journal_types(session)


async def test_a_bracketed_paste_in_the_editor_lands_once_with_its_line_breaks(ws, session, clock) -> None:
    """tmux's paste-buffer -p, CR or LF line breaks: once, whole, the breaks kept as lines."""
    from textual import events

    app = make_app(ws, session, clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("tab")
        for text in ("PASTE-A\nPASTE-B", "\rPASTE-C\r\nPASTE-D\x1b[31m!"):
            app.editor.area.post_message(events.Paste(text))
            await pilot.pause()
        app.editor.flush()
    assert session.log_md.read_text().endswith("PASTE-A\nPASTE-B\nPASTE-C\nPASTE-D!")


async def test_a_100_kb_paste_lands_once_whole_and_the_next_key_is_typed_after_it(ws, session, clock) -> None:
    from textual import events

    big = "".join(f"{i:05d} ncu: L1TEX scoreboard stalls 33 %, partial wave 25 %\n" for i in range(1800))
    assert len(big) > 100_000
    app = make_app(ws, session, clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("tab")
        app.post_message(events.Paste(big))  # as the driver hands a paste: to the focused widget
        await pilot.press("z")
        app.editor.flush()
    text = session.log_md.read_text()
    assert text.endswith(big + "z") and text.count("00042 ncu:") == 1


async def test_escape_then_a_key_at_once_leaves_the_editor_and_the_key_moves_the_gates(
        ws, session, clock) -> None:
    """Escape and a key inside the terminal's escape delay reach Textual as alt+key: it is still an
    Escape (the editor is left at once) and the key (j) goes to the gate list, typed nowhere."""
    app = make_app(ws, session, clock, typing_gap_s=0)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("tab", *"check the timer")
        await pilot.press("alt+j")  # what "\x1bj" becomes in Textual's parser
        for _ in range(200):
            if app.gate_panel.selected == "build":
                break
            await pilot.pause()
        assert app.focused is app.gate_panel and app.gate_panel.selected == "build"
        app.editor.flush()
    assert session.log_md.read_text().endswith("check the timer")


async def test_j_and_k_move_through_the_gates_like_the_arrows_and_skip_no_phase(ws, session, clock) -> None:
    app = make_app(ws, session, clock, typing_gap_s=0)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        app.set_focus(app.gate_panel)
        await pilot.press("j", "j")
        assert app.gate_panel.selected == "correctness"
        await pilot.press("k")
        assert app.gate_panel.selected == "build"
        assert not isinstance(app.screen, ConfirmDialog)  # k moved: it did not ask to skip the phase
        assert app.live is not None and app.live.state.current_run.phase == "Environment"
