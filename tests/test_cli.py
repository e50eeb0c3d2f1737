"""The CLI contract: `new`, `status`, exit codes, one-line errors, nothing written is lost."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from cockpit.cli import main
from cockpit.slug import slugify


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cockpit", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=60)


def test_new_names_sessions_by_start_time_with_a_slug(tmp_path: Path, capsys) -> None:
    assert main(["--workspace", str(tmp_path), "new", "Vectorize K loads (float4)!"]) == 0
    out = capsys.readouterr().out.split()
    assert re.fullmatch(r"\d{8}-\d{4}-c0de-vectorize-k-loads-float4", out[0])
    assert Path(out[1]) == tmp_path / "sessions" / out[0]
    # a second session while the first is open: refused in one line, or started beside it with --force
    assert main(["--workspace", str(tmp_path), "new", "baseline run"]) == 2
    assert "is still open: end it first (`cockpit end`), or pass --force" in capsys.readouterr().err
    assert main(["--workspace", str(tmp_path), "new", "baseline run", "--template", "baseline",
                 "--json", "--force"]) == 0
    created = json.loads(capsys.readouterr().out)
    assert re.fullmatch(r"\d{8}-\d{4}-c0de-baseline-run", created["id"])
    folder = Path(created["path"])
    md = (folder / "SESSION.md").read_text()
    for section in ("**Objective:** baseline run", "| 3 | Document | 5 min |", "## What worked",
                    "## What failed", "## Lessons", "## Next session"):
        assert section in md
    events = [json.loads(line) for line in (folder / "journal.jsonl").read_text().splitlines()]
    assert [e["type"] for e in events] == ["session_started", "phase_started"]
    assert events[0]["phases"][1] == {"name": "Baseline", "budget_s": 900.0}


def test_slugs_are_path_safe() -> None:
    assert slugify("../../etc/passwd") == "etc-passwd"
    assert slugify("Ünïcode façade — résumé") == "unicode-facade-resume"
    assert slugify("!!!") == "session"
    assert len(slugify("word " * 40)) <= 40


def test_python_dash_m_status_prints_the_latest_open_session(tmp_path: Path) -> None:
    assert run("--workspace", str(tmp_path), "new", "first").returncode == 0
    assert run("--workspace", str(tmp_path), "new", "second", "--force").returncode == 0
    result = run("status", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("0:0")
    assert "ENVIRONMENT" in result.stdout and "/10:00" in result.stdout
    data = json.loads(run("--workspace", str(tmp_path), "status", "--json").stdout)
    assert data["session"].endswith("-second")
    assert data["phase"] == "Environment" and data["budget"] == "ok" and data["open"] is True


def test_status_without_a_session_says_so(tmp_path: Path) -> None:
    result = run("--workspace", str(tmp_path), "status")
    assert (result.returncode, result.stdout.strip()) == (0, "no open cockpit session")
    data = json.loads(run("--workspace", str(tmp_path), "status", "--json").stdout)
    assert data == {"open": False, "session": None, "line": None}


def test_status_never_imports_textual(tmp_path: Path) -> None:
    main(["--workspace", str(tmp_path), "new", "x"])
    code = ("import sys; from cockpit.cli import main; main(['--workspace', sys.argv[1], 'status']);"
            "print('TEXTUAL' if any(m.startswith('textual') for m in sys.modules) else 'CLEAN')")
    result = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True,
                            text=True, timeout=60)
    assert result.stdout.strip().endswith("CLEAN"), result.stdout + result.stderr


def test_an_unknown_session_id_is_a_one_line_error_exit_2(tmp_path: Path) -> None:
    run("--workspace", str(tmp_path), "new", "x")
    result = run("--workspace", str(tmp_path), "status", "--session", "042")
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1
    assert "no session '042'" in result.stderr and "cockpit new" in result.stderr


def test_a_malformed_config_is_exit_2_naming_the_line(tmp_path: Path) -> None:
    (tmp_path / "cockpit.toml").write_text("[cadence]\nstatus_every_s = -1\n")
    result = run("--workspace", str(tmp_path), "new", "x")
    assert result.returncode == 2
    assert "cockpit.toml:2: cadence.status_every_s" in result.stderr
    assert list_sessions_dir(tmp_path) == []


def list_sessions_dir(root: Path) -> list[str]:
    return sorted(p.name for p in (root / "sessions").glob("*")) if (root / "sessions").exists() else []


def test_an_unwritable_sessions_folder_is_exit_2_with_what_to_do(tmp_path: Path) -> None:
    (tmp_path / "sessions").write_text("a file where the folder should be")
    result = run("--workspace", str(tmp_path), "new", "x")
    assert result.returncode == 2
    assert "cannot create the sessions folder" in result.stderr
    assert result.stderr.count("\n") == 1
    assert (tmp_path / "sessions").read_text() == "a file where the folder should be"


def test_a_journal_full_of_garbage_is_exit_2_and_left_untouched(tmp_path: Path) -> None:
    folder = tmp_path / "sessions" / "001-broken"
    folder.mkdir(parents=True)
    garbage = b"\x00\xffnot json\n{\"half\": \n"
    (folder / "journal.jsonl").write_bytes(garbage)
    result = run("--workspace", str(tmp_path), "status", "--session", "1")
    assert result.returncode == 2
    assert "not a cockpit session" in result.stderr
    assert (folder / "journal.jsonl").read_bytes() == garbage
    # and it is not mistaken for the latest open session
    assert run("--workspace", str(tmp_path), "status").stdout.strip() == "no open cockpit session"


def test_a_missing_workspace_is_exit_2(tmp_path: Path) -> None:
    result = run("--workspace", str(tmp_path / "nope"), "status")
    assert result.returncode == 2 and "is not a folder" in result.stderr


def test_screenshot_writes_svgs_of_the_main_screens(tmp_path: Path) -> None:
    result = run("screenshot", "--demo", "--out", str(tmp_path / "shots"), "--size", "120x36")
    assert result.returncode == 0, result.stderr
    shots = tmp_path / "shots"
    main_svg = (shots / "main.svg").read_text()  # a recorded H200 session, mid-way
    assert "<svg" in main_svg and "build-loop" in main_svg and "BASELINE" in main_svg
    assert {p.name for p in shots.iterdir()} == {
        "main.svg", "main-80x24.svg", "main-120x40.svg", "main-160x48.svg", "bench.svg", "profile.svg",
        "build-running.svg", "editor.svg", "patterns.svg", "history.svg", "new-session.svg"}
    assert "[2/3]" in (shots / "build-running.svg").read_text().replace("&#160;", " ")
    assert "History:" in (shots / "history.svg").read_text().replace("&#160;", " ")
    assert run("screenshot", "--size", "huge").returncode == 2


def test_a_reader_that_leaves_early_gets_no_traceback(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parents[1]
    shell = f"{sys.executable} -m cockpit --workspace {repo} pattern show 6 | head -1"
    done = subprocess.run(["bash", "-c", f"set -o pipefail; {shell}"], capture_output=True, text=True,
                          timeout=60)
    assert done.stdout.startswith("06 ")
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr


def test_a_reader_that_leaves_while_a_verb_prints_through_the_door_gets_no_traceback(
        monkeypatch, capfd) -> None:  # type: ignore[no-untyped-def]
    """`cockpit workload show | head -1`: the write that finds the pipe closed is inside the verb,
    where a bug's traceback is printed; a closed pipe is not a bug."""
    import cockpit.cli as cli

    def prints_into_a_closed_pipe(args):  # type: ignore[no-untyped-def]
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(cli, "handler", lambda verb: prints_into_a_closed_pipe)
    monkeypatch.setattr(cli.os, "dup2", lambda *a: None)  # keep pytest's stdout
    assert cli.main(["history"]) == 141
    assert "Traceback" not in capfd.readouterr().err
