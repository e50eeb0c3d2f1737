"""The editor pane: what the engineer types reaches SESSION.md within 2 s, atomically; a file
changed on disk is noticed and the engineer chooses; nothing that is not UTF-8 is destroyed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from cockpit.clock import FakeClock
from cockpit.config import Config, GateConfig
from cockpit.session.workspace import SessionRef, Workspace
from cockpit.ui.app import CockpitApp
from cockpit.ui.screens.dialogs import DiskChangedDialog
from cockpit.ui.screens.patterns import NewPatternDialog, PatternBrowser

SIZE = (160, 48)
REPO = Path(__file__).resolve().parent.parent
FAILURES = Path(__file__).parent / "fixtures" / "failures"


class Monotonic:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def make_app(ws: Workspace, ref: SessionRef, **config) -> CockpitApp:  # type: ignore[no-untyped-def]
    return CockpitApp(ws, Config(status_every_s=10**6, **config), ref, clock=FakeClock(), typing_gap_s=0,
                      tick_s=3600, gpu_every_s=0)


async def test_typing_is_autosaved_within_two_seconds(ws, session) -> None:
    clock = Monotonic()
    app = make_app(ws, session)
    async with app.run_test(size=SIZE) as pilot:
        app.editor.now = clock
        app.editor.area.focus()
        app.editor.area.move_cursor((0, 0))
        await pilot.press(*"tried BN=128 ", "enter")
        assert app.editor.dirty and app.editor.border_subtitle == "unsaved"
        app.editor._autosave()  # 0 s after the last key: not yet
        assert "tried BN=128" not in session.log_md.read_text()
        clock.t += 1.5
        app.editor._autosave()
        assert session.log_md.read_text().startswith(f"tried BN=128 \n# Session {session.id}")
        assert app.editor.border_subtitle.startswith("saved")
        # typing without a pause still saves within the bound
        await pilot.press(*"more")
        clock.t += 0.6
        await pilot.press("!")
        clock.t += 1.0
        app.editor._autosave()
        assert session.log_md.read_text().startswith("tried BN=128 \nmore!# Session")


async def test_the_save_timer_is_armed_by_typing_and_not_while_idle(ws, session) -> None:
    clock = Monotonic()
    app = make_app(ws, session)
    async with app.run_test(size=SIZE) as pilot:
        app.editor.now = clock
        assert app.editor._save_timer is None  # opened, nothing typed: the editor never wakes
        app.editor.area.focus()
        await pilot.press(*"BN=64")
        assert app.editor._save_timer is not None
        clock.t += 0.5
        app.editor._save_timer.stop()
        app.editor._on_save_timer()  # fired early (typing on): not saved, armed again
        assert app.editor.dirty and app.editor._save_timer is not None
        clock.t += 1.5
        app.editor._save_timer.stop()
        app.editor._on_save_timer()
        assert session.log_md.read_text().endswith("## Log\nBN=64")
        assert not app.editor.dirty and app.editor._save_timer is None


async def test_quit_and_a_phase_change_save_at_once(ws, session) -> None:
    app = make_app(ws, session)
    async with app.run_test(size=SIZE) as pilot:
        app.editor.area.focus()
        await pilot.press(*"phase notes")
        app.set_focus(app.gate_panel)
        await pilot.press("n", "y")
        assert session.log_md.read_text().endswith("phase notes")
        app.editor.area.focus()
        await pilot.press(*"x ")
        await app.quit_now()
    assert session.log_md.read_text().endswith("phase notesx ")


async def test_a_change_on_disk_is_noticed_and_the_engineer_chooses(ws, session) -> None:
    app = make_app(ws, session)
    async with app.run_test(size=SIZE) as pilot:
        app.editor.area.focus()
        await pilot.press(*"mine")
        session.log_md.write_text("# rewritten by git checkout\n")
        app.tick()
        await pilot.pause()
        assert isinstance(app.screen, DiskChangedDialog)
        await pilot.press(*" no way, yes")  # still typing: letters are not answers, they are text
        await pilot.pause()
        assert isinstance(app.screen, DiskChangedDialog)
        assert session.log_md.read_text() == "# rewritten by git checkout\n"
        await pilot.press("ctrl+d")  # take the disk version; keep mine aside
        await pilot.pause()
        assert app.editor.area.text == "# rewritten by git checkout\n"
        assert (session.path / "SESSION.md.mine").read_text().endswith("## Log\nmine no way, yes")
        # nothing unsaved here: another cockpit's save is followed without a question
        session.log_md.write_text("# saved by the other cockpit\n")
        app.tick()
        await pilot.pause()
        assert not isinstance(app.screen, DiskChangedDialog)
        assert app.editor.area.text == "# saved by the other cockpit\n"
        app.editor.area.focus()
        await pilot.press("end", *"!")
        session.log_md.write_text("# again, from vim\n")
        app.tick()
        await pilot.pause()
        assert isinstance(app.screen, DiskChangedDialog)
        await pilot.press("escape")  # keep the editor's text; the disk's is kept beside it
        await pilot.pause()
        assert session.log_md.read_text().startswith("# saved by the other cockpit")
        assert (session.path / "SESSION.md.theirs").read_text() == "# again, from vim\n"


async def test_a_file_that_is_not_utf8_is_shown_read_only_and_kept(ws, session) -> None:
    original = b"# Session\n\xff\xfe latin-1 caf\xe9\n"
    session.log_md.write_bytes(original)
    app = make_app(ws, session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.editor.area.read_only and "not UTF-8" in app.editor.border_subtitle
        assert "caf\ufffd" in app.editor.area.text
        app.editor.area.focus()
        await pilot.press(*"typing")
        app.editor.flush()
    assert session.log_md.read_bytes() == original


async def test_a_five_megabyte_log_opens_plain_and_takes_keys(ws, session) -> None:
    session.log_md.write_text("- 12:00 a line of notes about tiling and registers\n" * 100_000)
    app = make_app(ws, session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert not app.editor.area._highlights  # no highlighting above 1 MB characters
        app.editor.area.focus()
        await pilot.pause()
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert app.editor.area.text.count("\n") > 100_000
        assert app.editor.dirty
        assert not app.editor.area._highlights  # nor after an edit


async def test_a_log_just_under_a_megabyte_is_highlighted_and_stays_so_while_typing(ws, session) -> None:
    session.log_md.write_text("- 12:00 a line of notes about tiling and registers\n" * 19_000)
    app = make_app(ws, session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        area = app.editor.area
        assert len(area.text) < 1_000_000
        assert area._highlights[0] == area._highlights[18_999] == [(0, 2, "list.marker")]
        area.focus()
        await pilot.press("ctrl+t", *"BN=64")
        assert area._highlights[area.document.line_count - 1] == [(0, 2, "list.marker")]


def style_of(area, row: int, text: str):  # type: ignore[no-untyped-def]
    """The style `text` is drawn in on the editor's `row` (the document's line, unscrolled)."""
    for segment in area.render_line(row):
        if text in segment.text:
            return segment.style
    raise AssertionError(f"{text!r} is not drawn on row {row}")


async def test_a_heading_a_list_and_a_fenced_block_are_drawn_in_the_themes_styles(ws, session) -> None:
    session.log_md.write_text("# Session\n- 12:00 tried BN=64\n```\n# ptxas: 128 registers\n```\n")
    app = make_app(ws, session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        area = app.editor.area
        syntax = area._theme.syntax_styles
        heading = style_of(area, 0, "Session")
        assert heading.color == syntax["heading"].color and heading.bold
        assert style_of(area, 1, "-").color == syntax["list.marker"].color
        assert style_of(area, 2, "```").color == syntax["punctuation.delimiter"].color
        assert style_of(area, 3, "# ptxas").color != syntax["heading.marker"].color  # code, not a heading
        assert [name for _, _, name in area._highlights[3]] == ["text.literal", "punctuation.special", "none"]


async def test_typing_a_fence_turns_the_lines_below_into_code(ws, session) -> None:
    session.log_md.write_text("## Log\n- 12:00 tried BN=64\n# ptxas output\n")
    app = make_app(ws, session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        area = app.editor.area
        assert {name for _, _, name in area._highlights[2]} == {"heading.marker", "heading"}
        area.focus()
        area.move_cursor((1, 0))
        await pilot.press(*"```", "enter")
        assert area.document.lines[1:4] == ["```", "- 12:00 tried BN=64", "# ptxas output"]
        for row in (2, 3):  # inside the fence now: neither a list item nor a heading
            assert {name for _, _, name in area._highlights[row]} == {"text.literal", "punctuation.special", "none"}
        await pilot.press("backspace", "backspace", "backspace", "backspace")
        assert {name for _, _, name in area._highlights[2]} == {"heading.marker", "heading"}


async def test_ctrl_keys_insert_a_note_the_status_and_the_last_gate(ws, session) -> None:
    app = make_app(ws, session, gates={"env": GateConfig(command=(sys.executable, "-c", "print(1)"))})
    async with app.run_test(size=SIZE) as pilot:
        app.post_status(auto=False, doing="reading ptxas")
        app.set_focus(app.gate_panel)
        await pilot.press("r")
        import asyncio

        if app.gates.run is not None:
            await asyncio.to_thread(app.gates.run.wait, 30)
        await pilot.pause()
        app.editor.area.focus()
        app.editor.area.move_cursor((0, 0))
        await pilot.press("ctrl+t", "ctrl+l", "ctrl+g")
        text = app.editor.area.text
        assert "ENVIRONMENT 0:00: " in text
        assert "> 0:00 elapsed · ENVIRONMENT 0:00/10:00 · now: reading ptxas" in text
        assert "| env | pass | exit 0: 1 |" in text


async def test_a_pattern_written_in_the_form_lands_in_patterns(ws, session) -> None:
    app = make_app(ws, session)
    async with app.run_test(size=SIZE) as pilot:
        app.action_new_pattern()
        await pilot.pause()
        assert isinstance(app.screen, NewPatternDialog)
        for value in ("Pin the arch", "Builds took 4 min for every arch", "fresh box",
                      "set TORCH_CUDA_ARCH_LIST", "20", "all visible arches"):
            await pilot.press(*value)
            await pilot.press("enter")
        await pilot.pause()
        [path] = (ws.root / "patterns").glob("*.md")
        assert path.name == "15-pin-the-arch.md"  # the number after the shipped library's 14
        assert [p.title for p in app.patterns][-1] == "Pin the arch" and len(app.patterns) == 15
        text = path.read_text()
        assert "time_saved_min: 20" in text and "all visible arches" in text and session.id in text


async def test_a_failure_brings_its_pattern_and_a_key_marks_it_applied(tmp_path) -> None:
    ws = Workspace(tmp_path)
    from cockpit.session.workspace import create_session

    ref = create_session(ws, Config(), "import the extension", "optimize", FakeClock().now())
    log = FAILURES / "import-undefined-symbol.log"
    code = f"import sys; sys.stdout.write(open({str(log)!r}).read()); sys.exit(1)"
    app = make_app(ws, ref, gates={"env": GateConfig(command=(sys.executable, "-c", code))})
    async with app.run_test(size=SIZE) as pilot:
        app.set_focus(app.gate_panel)
        await pilot.press("r")
        import asyncio

        if app.gates.run is not None:
            await asyncio.to_thread(app.gates.run.wait, 30)
        await pilot.pause()
        pattern, why = app.gates.matched_pattern()
        assert pattern.id == 9 and "undefined symbol" in why
        await pilot.press("A")
        assert app.live.state.applied_patterns == (9,)
        assert "patterns 1/" in app.header.text.plain
        await pilot.press("o")
        await pilot.pause()
        assert isinstance(app.screen, PatternBrowser)
    events = [json.loads(line) for line in ref.journal.read_text().splitlines()]
    applied = [e for e in events if e["type"] == "pattern_applied"]
    assert [(e["pattern"], "undefined symbol" in e["why"]) for e in applied] == [(9, True)]


def test_a_kill_minus_nine_loses_at_most_the_unsaved_seconds(tmp_path) -> None:
    """Autosave is atomic: a process killed at any point leaves the old or the new file."""
    path = tmp_path / "SESSION.md"
    path.write_text("old\n")
    code = ("import os, sys; from pathlib import Path; from cockpit.session import logfile\n"
            "logfile.save(Path(sys.argv[1]), 'new\\n' * 200000); os.kill(os.getpid(), 9)")
    subprocess.run([sys.executable, "-c", code, str(path)], timeout=60)
    assert path.read_text() in ("old\n", "new\n" * 200000)
    assert not list(tmp_path.glob(".SESSION.md.*.tmp"))
