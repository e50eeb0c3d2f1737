"""The committed example reports are what today's export writes (issue 36, item 5): they carried a
fixed slip ("n/a busy samples below n/a MHz") and no roofline long after the code had moved on.
A change to the report fails here until `cockpit --workspace examples export SESSION_ID` (and
`--format pr`, for its PR.md) is run for each session and the result committed."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from cockpit.cli import main

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
SESSIONS = sorted(p.name for p in (EXAMPLES / "sessions").iterdir() if p.is_dir())
WRITTEN = ("REPORT.md", "report.html", "report.json", "report.svg", "report-speedup.svg", "report-roofline.svg")


def without_svg(html: str) -> str:
    """The page with each chart's drawing left out: its bytes follow the installed matplotlib."""
    return re.sub(r"<svg.*?</svg>", "<svg>…</svg>", html, flags=re.S)


def test_there_are_example_sessions() -> None:
    assert len(SESSIONS) == 4


@pytest.mark.parametrize("session", SESSIONS)
def test_the_committed_report_is_todays_export(session: str, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copytree(EXAMPLES, tmp_path / "examples")
    (tmp_path / ".git").mkdir()  # PR.md links REPORT.md from the repository's root, as the committed one does
    for name in (*WRITTEN, "PR.md"):
        (tmp_path / "examples" / "sessions" / session / name).unlink(missing_ok=True)
    assert main(["--workspace", str(tmp_path / "examples"), "export", session]) == 0
    assert main(["--workspace", str(tmp_path / "examples"), "export", session, "--format", "pr"]) == 0
    capsys.readouterr()
    fresh, committed = tmp_path / "examples" / "sessions" / session, EXAMPLES / "sessions" / session
    assert {n for n in WRITTEN if (fresh / n).is_file()} == {n for n in WRITTEN if (committed / n).is_file()}
    hint = (f"examples/sessions/{session}: run `cockpit --workspace examples export {session}` (and "
            "`--format pr`) and commit it")
    for name in ("REPORT.md", "report.json", "PR.md"):
        assert (fresh / name).read_text() == (committed / name).read_text(), f"{name} differs; {hint}"
    assert without_svg((fresh / "report.html").read_text()) == without_svg((committed / "report.html").read_text()), \
        f"report.html differs; {hint}"
    for name in ("REPORT.md", "report.html"):
        assert "n/a busy samples" not in (committed / name).read_text()
