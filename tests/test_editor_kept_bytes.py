"""The editor never rewrites bytes the engineer did not type: a SESSION.md holding a command's
colour output (`cmd 2>&1 >> SESSION.md`) opens read-only and stays as written; a byte order mark
alone is kept as it is; and "keep mine" keeps the disk's version byte for byte in `.theirs`
(one too big to keep whole is not written over)."""

from __future__ import annotations

import pytest

from cockpit.clock import FakeClock
from cockpit.config import Config
from cockpit.session import logfile
from cockpit.session.workspace import SessionRef, Workspace
from cockpit.ui.app import CockpitApp
from cockpit.ui.screens.dialogs import DiskChangedDialog
from tests.waiting import until

SIZE = (160, 48)
COLOUR_OUTPUT = "err \x1b[31mred\x1b[0m\n\x0cpage two\nprogress 10%\rprogress 100%\n"
"""What a build appended: an SGR colour, a form feed, a progress line's lone CR."""


def make_app(ws: Workspace, ref: SessionRef) -> tuple[CockpitApp, list[str]]:
    """An app whose notices are kept, its autosave clock standing still (saves happen when asked)."""
    app = CockpitApp(ws, Config(status_every_s=10**6), ref, clock=FakeClock(), typing_gap_s=0,
                     tick_s=3600, gpu_every_s=0)
    told: list[str] = []
    real = app.notify

    def notify(message: str, **kw: object) -> None:
        told.append(message)
        real(message, **kw)  # type: ignore[arg-type]

    app.notify = notify  # type: ignore[method-assign]
    app.editor.now = lambda: 1000.0
    return app, told


async def keep_mine_when(pilot, app: CockpitApp, session: SessionRef, theirs: bytes) -> None:  # type: ignore[no-untyped-def]
    """"mine" typed at the end of the log, `theirs` written to disk by another hand, and at the
    question that follows, Escape: keep mine."""
    app.editor.area.focus()
    await pilot.press("end", *"mine")
    session.log_md.write_bytes(theirs)
    app.tick()
    await until(pilot, lambda: isinstance(app.screen, DiskChangedDialog), "the question")
    await pilot.press("escape")


async def test_a_session_md_holding_colour_output_opens_read_only_and_keeps_its_bytes(
        ws: Workspace, session: SessionRef) -> None:
    written = session.log_md.read_bytes() + COLOUR_OUTPUT.encode()
    session.log_md.write_bytes(written)
    app, _ = make_app(ws, session)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: "err red" in app.editor.area.text, "SESSION.md shown")
        assert "\x1b" not in app.editor.area.text  # shown through the door
        assert app.editor.area.read_only
        assert app.editor.border_subtitle.startswith("read-only: it holds control bytes (`cat -v`")
        assert "remove them elsewhere" in app.editor.border_subtitle
        app.editor.area.focus()
        await pilot.press(*"typed")
        app.editor.flush()
        await app.quit_now()
    assert session.log_md.read_bytes() == written


async def test_a_byte_order_mark_alone_is_kept_and_the_file_stays_editable(
        ws: Workspace, session: SessionRef) -> None:
    """A Windows editor's BOM is not shown, not a reason to lock the file, and written back."""
    written = "\ufeff".encode() + session.log_md.read_bytes()
    session.log_md.write_bytes(written)
    app, _ = make_app(ws, session)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.editor.area.text.startswith("# Session"), "SESSION.md shown")
        assert not app.editor.area.read_only and app.editor.border_subtitle == "saved"
        app.editor.area.focus()
        await pilot.press("end", *"typed")
        assert app.editor.flush()
    assert session.log_md.read_bytes() == written + b"typed"


async def test_keep_mine_keeps_a_big_disk_version_that_is_not_utf8_byte_for_byte(
        ws: Workspace, session: SessionRef) -> None:
    """The disk's version grew past what the editor edits (8 MB) and is not UTF-8: `.theirs` holds
    all of it, not the 256 KB the editor would show of it, nor U+FFFD for its bytes."""
    app, told = make_app(ws, session)
    theirs = b"# Session\n\xff\xfe latin-1 caf\xe9\n" + b"build output line\n" * 520_000  # ~9 MB
    async with app.run_test(size=SIZE) as pilot:
        await keep_mine_when(pilot, app, session, theirs)
        await until(pilot, lambda: not isinstance(app.screen, DiskChangedDialog), "the answer")
        await until(pilot, lambda: session.log_md.read_text().endswith("## Log\nmine"), "mine saved")
    assert len(theirs) > logfile.MAX_EDIT_BYTES
    assert (session.path / "SESSION.md.theirs").read_bytes() == theirs
    assert any(t.endswith("SESSION.md.theirs") for t in told), told


async def test_keep_mine_is_refused_when_the_disk_version_cannot_be_kept_whole(
        ws: Workspace, session: SessionRef, monkeypatch: pytest.MonkeyPatch) -> None:
    """Over the size kept aside whole, the disk's version is not written over: one line says so,
    the question comes back, and taking the disk's version keeps what was typed in `.mine`."""
    monkeypatch.setattr(logfile, "KEPT_UP_TO", 1 << 20)
    app, told = make_app(ws, session)
    theirs = b"build output line\n" * 100_000  # 1.7 MB
    async with app.run_test(size=SIZE) as pilot:
        await keep_mine_when(pilot, app, session, theirs)
        await until(pilot, lambda: any("not written over" in t for t in told), "the refusal")
        assert session.log_md.read_bytes() == theirs
        assert not (session.path / "SESSION.md.theirs").exists()
        app.tick()
        await until(pilot, lambda: isinstance(app.screen, DiskChangedDialog), "the question again")
        await pilot.press("ctrl+d")  # take the disk's
        await until(pilot, lambda: not isinstance(app.screen, DiskChangedDialog), "the answer")
    assert session.log_md.read_bytes() == theirs
    assert (session.path / "SESSION.md.mine").read_text().endswith("## Log\nmine")
