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
    assert "- **Outcome** — `attention`: 0.77x vs SDPA (behind the baseline: one fix at a time), 1.08x vs FLASH, run 008-bench" in lines
    # units in every numeric header; the slowest config against SDPA first, with its interval
    header = ("| config | vs SDPA \\(x\\) | p20-p80 \\(x\\) | ours \\(ms\\) | SDPA \\(ms\\) | FLASH \\(ms\\) "
              "| cuDNN \\(ms\\) | TFLOP/s | MHz ours/SDPA |")
    rows = lines[lines.index(header) + 2:lines.index(header) + 10]
    assert rows[0] == ("| B4 H16 S1024 D128 fp16 causal | 0.57 | 0.55–0.59 | 0.0926 | 0.0531 | 0.0995 | 0.0532 "
                       "| 185.6 | 1980/1980 |")
    # the fastest are never the S=32 and S=128 configs whose ~9 µs calls are mostly their launch
    assert [r.split(" | ")[0] for r in rows[4:]] == [
        "| B4 H16 S512 D64 fp16 full", "| B4 H16 S512 D64 bf16 full", "| B4 H16 S512 D64 bf16 causal",
        "| B4 H16 S512 D64 fp16 causal"]
    assert not any(" S32 " in r or " S128 " in r for r in rows)
    assert any(line.startswith("<sub>56 configs; the 4 slowest and 4 fastest vs SDPA shown, the fastest among "
                               "those whose time is not mostly the launch \\(16 configs are\\)") for line in lines)
    assert any(line.startswith("- **Validity** — VALID: GPU 0") for line in lines)
    assert any(line.startswith("- **Decision** — KEEP: D=128 BM128 BN64") for line in lines)
    assert any("the one fix: larger tiles" in line for line in lines)
    # outside a git repository the link is from the workspace
    assert lines[-1].endswith(f"Full report: [sessions/{TUNED}/REPORT.md](sessions/{TUNED}/REPORT.md)")


def test_the_link_works_from_the_repository_root(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The examples live in examples/ of a repository: the link a PR carries starts there, not
    at the session folder or the workspace."""
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    ws = tmp_path / "repo" / "examples"
    shutil.copytree(EXAMPLES, ws)
    assert main(["--workspace", str(ws), "export", TUNED, "--format", "pr"]) == 0
    text = Path(capsys.readouterr().out.strip()).read_text()
    link = f"examples/sessions/{TUNED}/REPORT.md"
    assert text.rstrip().endswith(f"Full report: [{link}]({link})")
    assert (tmp_path / "repo" / link).parent.is_dir()


def test_a_session_without_a_valid_bench_says_so_and_its_words_stay_words(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--workspace", str(tmp_path), "new", "fix the | table <script>x</script>"]) == 0
    capsys.readouterr()
    assert main(["--workspace", str(tmp_path), "export", "--format", "pr"]) == 0
    text = Path(capsys.readouterr().out.strip()).read_text()
    assert text.startswith("### fix the \\| table \\<script\\>x\\</script\\>\n")  # REPORT.md's escape
    assert "- **Outcome** — no valid benchmark in this session" in text
