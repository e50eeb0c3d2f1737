"""Bad input never crashes a reader and never loses what was written: a journal line nested
10^5 deep, Infinity or 1e400, an integer of 5,000 digits, a phase the template does not have, and
a budget of 1e308 minutes in cockpit.toml."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cockpit.cli import main
from cockpit.config import ConfigError, load_config
from cockpit.session import timer
from cockpit.session.journal import read_journal
from cockpit.session.state import fold
from cockpit.session.status import compose_status
from cockpit.session.workspace import SessionRef


def append(ref: SessionRef, *lines: str) -> None:
    with ref.journal.open("a", encoding="utf-8") as f:
        f.write("".join(line + "\n" for line in lines))


def test_lines_no_reader_could_take_are_skipped_and_listed_the_rest_reads(session: SessionRef) -> None:
    append(session,
           '{"t": 1795000010, "type": "status", "text": "x", "auto": false, "deep": ' + "[" * 100_000
           + "]" * 100_000 + "}",
           '{"t": 1795000020, "type": "status", "text": "inf", "auto": false, "v": Infinity}',
           '{"t": 1795000030, "type": "status", "text": "big", "auto": false, "v": 1e400}',
           '{"t": 1795000040, "type": "status", "text": "long", "auto": false, "v": ' + "9" * 5000 + "}",
           json.dumps({"t": 1795000050, "type": "status", "text": "still here", "auto": False}))
    read = read_journal(session.journal)
    assert [p.kind for p in read.problems] == ["garbage"] * 4
    state = fold(read.events)
    assert [s.text for s in state.statuses] == ["still here"]


def test_a_phase_the_template_does_not_have_is_shown_without_a_budget(session: SessionRef) -> None:
    append(session, json.dumps({"t": 1795000100, "type": "phase_started", "phase": "Bisect"}))
    state = fold(read_journal(session.journal).events)
    assert state.current_run is not None and state.current_run.phase == "Bisect"
    assert state.phase("Bisect").budget_s == 0
    assert timer.overrun_events(state, 1795009999.0) == []  # nothing to overrun
    line = compose_status(state, timer.timer_view(state, 1795000400.0, 0.8))
    assert "BISECT 5:00 (no budget: not in the template)" in line and "OVER BUDGET" not in line


def test_status_reads_a_session_with_a_line_too_deep_for_json(session: SessionRef, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    append(session, '{"t": 1795000010, "type": "note", "x": ' + "[" * 50_000 + "]" * 50_000 + "}")
    assert main(["--workspace", str(tmp_path), "status"]) == 0
    assert "elapsed" in capsys.readouterr().out


@pytest.mark.parametrize("budget", ["1e308", "inf", "nan"])
def test_a_budget_no_session_can_last_is_refused_with_its_line(tmp_path: Path, budget: str) -> None:
    (tmp_path / "cockpit.toml").write_text(
        f'[templates.optimize]\nphases = [{{ name = "Environment", budget_min = {budget} }}]\n')
    with pytest.raises(ConfigError, match=r"cockpit.toml:2: .*budget_min"):
        load_config(tmp_path)
    (tmp_path / "cockpit.toml").write_text(f"[tune]\nbudget_min = {budget}\n")
    with pytest.raises(ConfigError, match=r"cockpit.toml:2: tune.budget_min"):
        load_config(tmp_path)


def test_a_folder_that_refuses_the_save_keeps_the_text_and_a_copy_outside(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import errno
    import os

    from cockpit.errors import CockpitError
    from cockpit.session import logfile

    def read_only(*args: object, **kwargs: object) -> None:
        raise OSError(errno.EROFS, "Read-only file system")

    notes = tmp_path / "sessions" / "s1" / "SESSION.md"
    notes.parent.mkdir(parents=True)
    monkeypatch.setattr(os, "replace", read_only)
    monkeypatch.setattr(Path, "unlink", read_only)  # a read-only folder refuses the clean-up too
    with pytest.raises(CockpitError, match="cannot save \\(Read-only file system\\); your text is still"):
        logfile.save(notes, "# what I typed\n")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    copy = logfile.rescue(notes, "# what I typed\n")
    assert copy == tmp_path / "state" / "cockpit" / "rescue" / "s1-SESSION.md"
    assert copy.read_text() == "# what I typed\n"
