"""Two editors on one SESSION.md lose nothing: words typed while the "changed on disk" question
is open go on into the editor, and whichever side's text is replaced is kept beside SESSION.md
and named to its owner in a notice that stays up."""

from __future__ import annotations

import pytest

from cockpit.clock import FakeClock
from cockpit.config import Config
from cockpit.session.workspace import SessionRef, Workspace
from cockpit.ui.app import CockpitApp
from cockpit.ui.screens.dialogs import DiskChangedDialog
from cockpit.ui.screens.main_screen import KEPT_NOTICE_S

SIZE = (160, 48)
WORDS = " ".join(f"w{n}" for n in range(1, 16))  # fifteen words, as many as the issue lost


def make_app(ws: Workspace, ref: SessionRef) -> tuple[CockpitApp, list[tuple[str, float | None]]]:
    """An app whose notices are kept: (message, timeout)."""
    app = CockpitApp(ws, Config(status_every_s=10**6), ref, clock=FakeClock(), typing_gap_s=0,
                     tick_s=3600, gpu_every_s=0)
    told: list[tuple[str, float | None]] = []
    real = app.notify

    def notify(message: str, **kw: object) -> None:
        told.append((message, kw.get("timeout")))  # type: ignore[arg-type]
        real(message, **kw)  # type: ignore[arg-type]

    app.notify = notify  # type: ignore[method-assign]
    app.editor.now = lambda: 1000.0  # the autosave clock stands still: saves happen when asked
    return app, told


def everything_kept(session: SessionRef) -> str:
    return "\n".join(p.read_text() for p in sorted(session.path.glob("SESSION.md*")))


@pytest.mark.parametrize("answer", ["ctrl+d", "escape"])
async def test_words_typed_while_the_question_is_open_are_all_kept(
        ws: Workspace, session: SessionRef, answer: str) -> None:
    app, told = make_app(ws, session)
    async with app.run_test(size=SIZE) as pilot:
        app.editor.area.focus()
        await pilot.press(*"before it asked ")
        session.log_md.write_text(session.log_md.read_text() + "a line from the other editor\n")
        app.tick()
        await pilot.pause()
        assert isinstance(app.screen, DiskChangedDialog)
        await pilot.press(*WORDS, "x", "backspace", "enter")  # a slip, corrected, then a new line
        assert isinstance(app.screen, DiskChangedDialog)  # still asking: typing answers nothing
        assert app.editor.area.text.endswith(f"before it asked {WORDS}\n")
        await pilot.press(answer)
        await pilot.pause()
    kept = everything_kept(session)
    assert f"before it asked {WORDS}\n" in kept and "a line from the other editor" in kept
    where = session.path / ("SESSION.md.mine" if answer == "ctrl+d" else "SESSION.md.theirs")
    assert (str(where), KEPT_NOTICE_S) in [(m.rsplit(" ", 1)[-1], t) for m, t in told], told


async def test_the_editor_whose_line_another_replaced_is_told_where_it_is(
        ws: Workspace, session: SessionRef) -> None:
    a, told_a = make_app(ws, session)
    b, told_b = make_app(ws, session)
    async with a.run_test(size=SIZE) as pilot_a, b.run_test(size=SIZE) as pilot_b:
        b.editor.area.focus()
        await pilot_b.press(*"B's unsaved words")
        a.editor.area.focus()
        await pilot_a.press(*"A's line, saved")
        assert a.editor.flush()
        b.tick()  # B sees A's save while it has unsaved text: asked
        await pilot_b.pause()
        assert isinstance(b.screen, DiskChangedDialog)
        await pilot_b.press("escape")  # B keeps its own: A's text goes to .theirs
        await pilot_b.pause()
        a.tick()  # A had nothing unsaved: it follows the file, and is told where its line went
        await pilot_a.pause()
        assert "A's line, saved" not in a.editor.area.text
        assert "yours: SESSION.md.theirs" in a.editor.border_subtitle
    theirs = session.path / "SESSION.md.theirs"
    assert "A's line, saved" in theirs.read_text()
    assert (f"SESSION.md was replaced on disk; the text you had is in {theirs}", KEPT_NOTICE_S) in told_a
    assert any(str(theirs) in m for m, _ in told_b)


async def test_a_second_conflict_keeps_the_first_ones_file(ws: Workspace, session: SessionRef) -> None:
    app, _ = make_app(ws, session)
    async with app.run_test(size=SIZE) as pilot:
        for n in (1, 2):
            app.editor.area.focus()
            await pilot.press(*f"mine {n} ")
            session.log_md.write_text(f"# rewritten by the other side, time {n}\n")
            app.tick()
            await pilot.pause()
            await pilot.press("escape")
            await pilot.pause()
    assert (session.path / "SESSION.md.theirs").read_text() == "# rewritten by the other side, time 1\n"
    assert (session.path / "SESSION.md.theirs.2").read_text() == "# rewritten by the other side, time 2\n"
