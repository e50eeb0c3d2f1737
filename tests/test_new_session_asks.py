"""ctrl+n with a session still open asks first, as `cockpit new` refuses without --force: `n`
(or escape) keeps the open session as the only one, `y` goes on to the new-session form and the
new session starts beside the open one. Letters typed into the question answer nothing. The form's
suggested objective shows its start, all of it selected: typing replaces it, End or → edits it."""

from __future__ import annotations

from textual.widgets import Input, Label
from textual.widgets.input import Selection

from cockpit.clock import FakeClock
from cockpit.config import Config
from cockpit.session import timer
from cockpit.session.live import LiveSession
from cockpit.session.workspace import SessionRef, Workspace, create_session, has_ended, list_sessions
from cockpit.ui.screens.dialogs import ConfirmDialog, NewSessionDialog
from tests.screen_rows import screen_rows
from tests.test_app import SIZE, header, make_app


def question(app) -> str:  # type: ignore[no-untyped-def]
    """The question on screen: the confirm dialog's first line."""
    assert isinstance(app.screen, ConfirmDialog)
    return str(app.screen.query(Label).first().content)


async def test_ctrl_n_with_an_open_session_asks_and_n_keeps_it(ws: Workspace, session: SessionRef,
                                                                clock: FakeClock) -> None:
    app = make_app(ws, session, clock)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+n")
        assert question(app) == (f"Session {session.id} is still open: start another beside it? "
                                 "(To end it first: n, then E.)")
        await pilot.press("n")
        assert app.screen is app.main_screen
        await pilot.press("ctrl+n", "escape")  # escape is a no as well
        assert app.screen is app.main_screen
        assert app.live is not None and app.live.ref == session
    assert [r.id for r in list_sessions(ws)] == [session.id]


async def test_ctrl_n_then_y_starts_a_new_session_beside_the_open_one(ws: Workspace, session: SessionRef,
                                                                      clock: FakeClock) -> None:
    app = make_app(ws, session, clock)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+n", "y")
        assert isinstance(app.screen, NewSessionDialog)
        clock.advance(60)
        await pilot.press(*"fuse the bias add", "enter")
        await pilot.pause()
        assert "fuse the bias add" in header(app)
    first, second = list_sessions(ws)
    assert first.id == session.id and second.id.endswith("-fuse-the-bias-add")
    assert not has_ended(first)  # started beside it: the first is still open


async def test_letters_typed_into_the_question_answer_nothing(ws: Workspace, session: SessionRef,
                                                              clock: FakeClock) -> None:
    app = make_app(ws, session, clock)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+n", *"Tile", "q", "k", "E", "x", "enter", "space")
        assert isinstance(app.screen, ConfirmDialog)  # still asking: no quit, no skip, no end
        await pilot.press("n")
        assert app.screen is app.main_screen
        assert app.live is not None and app.live.state.is_open and app.is_running
    assert [r.id for r in list_sessions(ws)] == [session.id]


async def test_with_no_session_open_ctrl_n_goes_straight_to_the_form(ws: Workspace, session: SessionRef,
                                                                    clock: FakeClock) -> None:
    live = LiveSession(session)
    live.append(timer.end_session(live.state, clock.now()))
    live.close()
    app = make_app(ws, session, clock)  # the ended session, open for reading
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+n")
        assert isinstance(app.screen, NewSessionDialog)


async def test_an_ended_session_on_screen_still_asks_about_one_open_elsewhere(
        ws: Workspace, session: SessionRef, clock: FakeClock) -> None:
    live = LiveSession(session)
    live.append(timer.end_session(live.state, clock.now()))
    live.close()
    clock.advance(60)
    elsewhere = create_session(ws, Config(), "baseline run", "baseline", clock.now())  # `cockpit new`
    app = make_app(ws, session, clock)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+n")
        assert question(app).startswith(f"Session {elsewhere.id} is still open")
        await pilot.press("n")
        assert app.screen is app.main_screen
    assert [r.id for r in list_sessions(ws)] == [session.id, elsewhere.id]


async def suggested(app, pilot) -> Input:  # type: ignore[no-untyped-def]
    """ctrl+n on an ended session: the form, its objective field focused."""
    await pilot.press("ctrl+n")
    assert isinstance(app.screen, NewSessionDialog)
    field = app.screen.query_one("#objective", Input)
    for _ in range(600):
        if field.has_focus:
            break
        await pilot.pause(0.05)
    return field


def ended(session: SessionRef, clock: FakeClock) -> None:
    live = LiveSession(session)
    live.append(timer.end_session(live.state, clock.now()))
    live.close()


async def test_the_suggested_objective_shows_its_start_and_typing_replaces_it(
        ws: Workspace, session: SessionRef, clock: FakeClock) -> None:
    ended(session, clock)
    app = make_app(ws, session, clock)
    async with app.run_test(size=(80, 24)) as pilot:
        field = await suggested(app, pilot)
        value = field.value
        assert value.startswith("Measure ") and value.endswith(" and find its bottleneck")
        assert field.selection == Selection(len(value), 0)  # all of it, the cursor at home
        assert field.scroll_x == 0
        assert any("Measure " in row for row in screen_rows(app))  # its start on screen, not its end
        await pilot.press(*"Tile the softmax")
        assert field.value == "Tile the softmax"


async def test_end_keeps_the_suggested_objective_to_add_to_it(
        ws: Workspace, session: SessionRef, clock: FakeClock) -> None:
    ended(session, clock)
    app = make_app(ws, session, clock)
    async with app.run_test(size=SIZE) as pilot:
        field = await suggested(app, pilot)
        value = field.value
        await pilot.press("end", *" on the H100")
        assert field.value == value + " on the H100"
        await pilot.press("home", "right", "right")  # still editable anywhere
        assert field.cursor_position == 2
