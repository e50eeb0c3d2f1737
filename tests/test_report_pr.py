"""`cockpit export --format pr`: a session as a pull request's description, in one screen."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cockpit.cli import main

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
TUNED = "20261123-1109-332d-32-query-rows-per-warp-without-spills"


def test_the_h100_session_fits_a_pr_description(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = tmp_path / "examples"
    shutil.copytree(EXAMPLES, ws)
    assert main(["--workspace", str(ws), "export", TUNED, "--format", "pr"]) == 0
    path = Path(capsys.readouterr().out.strip())
    assert path == ws / "sessions" / TUNED / "PR.md"
    text = path.read_text()
    lines = text.splitlines()
    assert len(lines) <= 40
    assert "- **Outcome** — `attention`: 0.77x vs SDPA (HIGH), 1.08x vs FLASH, run 008-bench" in lines
    header = "| config | ours | SDPA | FLASH | cuDNN | vs SDPA | vs FLASH | TFLOP/s | MHz ours/SDPA |"
    assert "| 0.57x | 1.07x | 185.6 | " in lines[lines.index(header) + 2]  # the slowest config against SDPA first
    assert "<sub>56 configs; the 4 slowest and 4 fastest vs SDPA shown</sub>" in lines
    assert any(line.startswith("- **Validity** — VALID: GPU 0") for line in lines)
    assert any(line.startswith("- **Decision** — KEEP: D=128 BM128 BN64") for line in lines)
    assert any("the one fix: larger tiles" in line for line in lines)
    assert lines[-1].endswith(f"Full report: [sessions/{TUNED}/REPORT.md](sessions/{TUNED}/REPORT.md)")


def test_a_session_without_a_valid_bench_says_so_and_its_words_stay_words(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--workspace", str(tmp_path), "new", "fix the | table <script>x</script>"]) == 0
    capsys.readouterr()
    assert main(["--workspace", str(tmp_path), "export", "--format", "pr"]) == 0
    text = Path(capsys.readouterr().out.strip()).read_text()
    assert text.startswith("### fix the \\| table \\<script\\>x\\</script\\>\n")  # REPORT.md's escape
    assert "- **Outcome** — no valid benchmark in this session" in text
