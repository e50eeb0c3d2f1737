"""A cloned workspace cannot write to the terminal: an escape sequence in a session's objective,
phase, status, gate summary or SESSION.md, in a pattern file or in a workload's exception reaches
neither the TUI's screen nor any command's output, and the words around it still show. Nor is a
workspace's text ever read as markup."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cockpit.cli import main
from cockpit.clock import FakeClock
from cockpit.config import Config
from cockpit.session import events as ev
from cockpit.session.journal import JournalWriter
from cockpit.session.workspace import SessionRef, Workspace, create_session
from cockpit.ui.app import CockpitApp
from cockpit.ui.screens.history_screen import HistoryScreen
from cockpit.ui.screens.patterns import PatternBrowser
from tests.trusted import trust

from .conftest import T0
from .waiting import until

ESCAPES = {
    "OSC 52 (the clipboard)": "\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07",
    "OSC 8 (a hyperlink)": "\x1b]8;;http://evil.example\x1b\\",
    "OSC 0 (the title)": "\x1b]0;owned\x07",
    "OSC 2 (the title)": "\x1b]2;owned\x1b\\",
    "CSI erase": "\x1b[2J",
    "CSI alternate screen": "\x1b[?1049h",
    "DCS": "\x1bP+q544e\x1b\\",
    "C1 CSI": "\x9b2J",
    "C1 OSC": "\x9d0;owned\x07",
}
EVERY_ESCAPE = "".join(ESCAPES.values())
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def hostile(word: str) -> str:
    """`word` cut in two by every escape: shown as `<word>A<word>B` once they are gone."""
    return f"{word}A{EVERY_ESCAPE}{word}B"


def assert_shown_clean(shown: str, *words: str) -> None:
    assert not CONTROL.search(shown), [shown[max(0, m.start() - 30):m.end() + 30]
                                      for m in CONTROL.finditer(shown)][:3]
    for word in words:
        assert f"{word}a{word}b" in shown.lower(), word  # a phase's name is shown in capitals


def hostile_session(ws: Workspace) -> SessionRef:
    """A session as someone else committed it: every field a screen shows carries the escapes."""
    ref = create_session(ws, Config(), hostile("objective"), "optimize", T0)
    journal = JournalWriter(ref.journal)
    journal.append(ev.phase_started(T0 + 1, hostile("phase")))
    journal.append(ev.status(T0 + 2, hostile("status"), False))
    journal.append(ev.gate_started(T0 + 3, "env-1", "env", ("python",), "logs/env-1.log", 1))
    journal.append(ev.gate_finished(T0 + 4, "env-1", "env", "fail", hostile("summary"), 1.0, 1,
                                    "logs/env-1.log", {}))
    journal.close()
    ref.log_md.write_text(f"# Session\n\n{hostile('logline')}\n")
    return ref


PATTERN = f"""---
id: 71
title: "Tiles [link=http://evil.example]read as markup[/link] never"
status: operational
time_saved_min: 5
problem: One sentence.
when: Always.
solution: Do it.
---
{hostile('patternbody')}
"""


def hostile_patterns(ws: Workspace) -> None:
    ws.patterns_dir.mkdir(exist_ok=True)
    (ws.patterns_dir / "71-tiles.md").write_text(PATTERN)
    name = hostile("filename").replace("/", "_")  # a file name holds all but the slashes
    (ws.patterns_dir / f"72-{name}.md").write_text("not a pattern")


def app_on(ws: Workspace, ref: SessionRef) -> CockpitApp:
    return CockpitApp(ws, Config(status_every_s=10**6), ref, clock=FakeClock(T0 + 5), typing_gap_s=0,
                      tick_s=3600, gpu_every_s=0)


# The TUI --------------------------------------------------------------------------------------

async def test_the_main_screen_shows_a_hostile_session_without_one_escape(ws: Workspace) -> None:
    ref = hostile_session(ws)
    app = app_on(ws, ref)
    async with app.run_test(size=(200, 50), notifications=True) as pilot:
        await pilot.pause()
        screen = app.export_screenshot()
    # objective and phase in the header, the status in its history, the summary in the gates'
    # panel and the detail's head, SESSION.md in the editor
    assert_shown_clean(screen, "objective", "phase", "status", "summary", "logline")
    assert screen.count("summaryAsummaryB") >= 2


async def test_the_pattern_browser_shows_a_hostile_pattern_as_plain_text(ws: Workspace) -> None:
    ref = hostile_session(ws)
    hostile_patterns(ws)
    app = app_on(ws, ref)
    async with app.run_test(size=(200, 50), notifications=True) as pilot:
        app.open_patterns(71)
        await pilot.pause()
        assert isinstance(app.screen, PatternBrowser)
        screen = app.export_screenshot()
    assert_shown_clean(screen, "patternbody", "filename")  # the body; a file skipped, in a toast
    assert "[link=http://evil.example]read" in screen.replace("&#160;", " ")  # shown, never obeyed


async def history_screenshot(ws: Workspace, ref: SessionRef) -> str:
    """The History screen (H), once it has read every session."""
    app = app_on(ws, ref)
    async with app.run_test(size=(200, 50), notifications=True) as pilot:
        await pilot.press("H")
        history = app.screen
        assert isinstance(history, HistoryScreen)
        await until(pilot, lambda: history.table is not None, "the History screen's sessions, read")
        await pilot.pause()
        return app.export_screenshot()


async def test_the_history_screen_shows_a_hostile_objective_as_plain_text(ws: Workspace) -> None:
    ref = create_session(ws, Config(), f"[b]bold[/b] {hostile('objective')}", "optimize", T0)
    screen = await history_screenshot(ws, ref)
    assert_shown_clean(screen)
    assert "[b]bold[/b]" in screen  # the objective's brackets are its words, not markup


async def test_a_status_posted_from_a_hostile_session_titles_the_terminal_with_plain_words(
        ws: Workspace) -> None:
    from cockpit.session.status import terminal_title

    ref = hostile_session(ws)
    app = app_on(ws, ref)
    async with app.run_test(size=(200, 50), notifications=True):
        title = terminal_title(app.live.state, app.status_line())
    assert title.startswith("\x1b]2;") and title.endswith("\x07")  # one OSC: ours
    assert_shown_clean(title[4:-1], "phase")


# The command line -----------------------------------------------------------------------------

def test_status_and_history_print_a_hostile_session_without_one_escape(
        ws: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    hostile_session(ws)
    assert main(["--workspace", str(ws.root), "status"]) == 0
    assert_shown_clean(capsys.readouterr().out, "phase")
    assert main(["--workspace", str(ws.root), "history"]) == 0
    out = capsys.readouterr()
    assert_shown_clean(out.out + out.err, "objective")


def test_pattern_list_and_show_print_a_hostile_library_without_one_escape(
        ws: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    hostile_patterns(ws)
    assert main(["--workspace", str(ws.root), "pattern", "list"]) == 1  # a file did not load
    out = capsys.readouterr()
    assert_shown_clean(out.out + out.err, "filename")
    assert main(["--workspace", str(ws.root), "pattern", "show", "71"]) == 0
    assert_shown_clean(capsys.readouterr().out, "patternbody")


def test_workload_show_prints_a_hostile_exception_without_one_escape(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "workloads").mkdir()
    (tmp_path / "workloads" / "evil.py").write_text(f"raise RuntimeError({hostile('exception')!r})\n")
    (tmp_path / "cockpit.toml").write_text('[workload]\nmodule = "workloads/evil.py"\n')
    trust(tmp_path)  # run, it raises with escapes in its message
    assert main(["--workspace", str(tmp_path), "workload", "show"]) == 2
    out = capsys.readouterr()
    assert_shown_clean(out.out + out.err, "exception")



def test_a_bug_in_a_verb_prints_its_traceback_through_the_door(
        ws: Workspace, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A verb that fails with something other than a CockpitError (a bug) still prints no escape:
    its traceback carries the workspace's words it tripped on."""
    import cockpit.cli as cli

    def broken(args: object) -> int:
        raise RuntimeError(hostile("bug"))

    monkeypatch.setattr(cli, "handler", lambda name: broken)
    assert main(["--workspace", str(ws.root), "status"]) == 1
    out = capsys.readouterr()
    assert "Traceback" in out.err
    assert_shown_clean(out.out + out.err, "bug")
