"""`cockpit pattern list|show|new` handlers: what an engineer sees, and the exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cockpit.cli.pattern import list_command, new_command, show_command
from cockpit.errors import CockpitError

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A new workspace: an empty patterns/ of its own, and the library that ships with the cockpit."""
    (tmp_path / "patterns").mkdir()
    return tmp_path


def test_list_shows_id_status_time_saved_and_title(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert list_command(workspace, as_json=False) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0].split() == ["ID", "STATUS", "SAVES", "TITLE"]
    assert lines[1].startswith("01  operational  60 min  Measure the PyTorch baseline")
    assert lines[11].startswith("11  planned      0 min   Run the compile-time gates in CI")
    assert lines[-1] == "14 patterns: 12 operational, 2 planned; 500 min saved when all apply"
    assert err == ""


def test_list_json_is_one_object(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert list_command(workspace, as_json=True) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["time_saved_min"] == 500
    assert data["problems"] == []
    first = data["patterns"][0]
    assert (first["id"], first["status"], first["time_saved_min"]) == (1, "operational", 60)
    assert data["patterns"][1]["triggers"] == [{"when": "speedup < 0.5"}]


def test_list_names_broken_files_on_stderr_and_exits_1(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = workspace / "patterns" / "15-broken.md"
    broken.write_bytes(b"---\nid: 15\ntitle: caf\xe9\n---\n")
    assert list_command(workspace, as_json=False) == 1
    out, err = capsys.readouterr()
    assert "14 patterns" in out
    assert err == f"cockpit: {broken}:3: not UTF-8 (byte 0xe9); re-save the file as UTF-8\n"


def test_list_of_an_empty_workspace_shows_the_library_that_ships_with_the_cockpit(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert list_command(tmp_path, as_json=False) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[1].startswith("01  operational  60 min  Measure the PyTorch baseline")
    assert out.splitlines()[-1].startswith("14 patterns: 12 operational, 2 planned")


def test_show_finds_by_id_and_by_fuzzy_title(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert show_command(workspace, "3", as_json=False) == 0
    by_id = capsys.readouterr().out
    assert by_id.startswith("03 · Check the kernel's configuration at compile time")
    assert "triggers: output /too much shared data/" in by_id
    assert "## The budget, per block" in by_id
    assert show_command(workspace, "smem budget", as_json=False) == 0
    assert capsys.readouterr().out == by_id


def test_show_json_includes_the_body(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert show_command(workspace, "env", as_json=True) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["id"] == 9
    assert "## The checklist" in data["body"]


def test_show_forgives_dropped_letters(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert show_command(workspace, "enviroment valdation", as_json=False) == 0
    assert capsys.readouterr().out.startswith("09 · Validate the environment")


def test_show_of_an_unknown_pattern_is_one_line_with_close_matches(workspace: Path) -> None:
    with pytest.raises(CockpitError) as caught:
        show_command(workspace, "enviornment", as_json=False)
    message = str(caught.value)
    assert "\n" not in message
    assert message == (f"no pattern matches 'enviornment' in {workspace / 'patterns'} "
                       "(close: 09 Validate the environment before building: torch, CUDA, numpy, ABI, import)")
    with pytest.raises(CockpitError, match=r"no pattern matches '42' .*\(ids 1, 2, 3"):
        show_command(workspace, "42", as_json=False)


def test_new_prints_the_path_of_the_next_pattern(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert new_command(workspace, "Stale lock hangs the JIT load", "A killed build leaves a lock.",
                       "A load prints nothing for a minute.", "Delete the lock when no build runs.", 25) == 0
    path = Path(capsys.readouterr().out.strip())
    assert path == workspace / "patterns" / "15-stale-lock-hangs-the-jit-load.md"
    assert show_command(workspace, "15", as_json=False) == 0
    assert "saves 25 min" in capsys.readouterr().out


def test_new_with_an_empty_title_is_a_usage_error(workspace: Path) -> None:
    with pytest.raises(CockpitError, match="the title is empty"):
        new_command(workspace, " ", "p", "w", "s", 1)


def test_a_pattern_written_during_a_session_names_it_as_evidence(workspace: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    from cockpit.config import Config
    from cockpit.patterns.library import read_pattern
    from cockpit.session.workspace import Workspace, create_session

    ref = create_session(Workspace(workspace), Config(), "tile the softmax", None, 1_795_300_000.0)
    assert new_command(workspace, "Power cap on the H200", "Benches come out suspect.",
                       "A bench is suspect for the cap alone.", "Time in settled blocks.", 0) == 0
    path = Path(capsys.readouterr().out.strip())
    assert read_pattern(path).evidence == (ref.id,)  # history dates the pattern from this session
