"""`cockpit export --format pr`: a session as a pull request's description, in one screen, that a
reviewer can trust (issue 47): it opens with the result and its interval against the baseline,
whether the kernel is correct, whether the sanitizer ran and found anything, whether the bench is
valid, and what the keep/revert decision compared with, the change spelled out; what a session
did not record is said, never guessed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cockpit.cli import main
from cockpit.session import events as ev

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
TUNED = "20261123-1109-332d-32-query-rows-per-warp-without-spills"
BEFORE = "20261123-0849-2108-reach-sdpa-s-flash-backend-with-the"
SANITIZE = Path(__file__).resolve().parent / "fixtures" / "gpu" / "sanitize"
ENDED = 1795432748.636
"""When the tuned session ended: the events planted below come just before."""


def export_pr(ws: Path, session: str, capsys: pytest.CaptureFixture[str]) -> list[str]:
    assert main(["--workspace", str(ws), "export", session, "--format", "pr"]) == 0
    return Path(capsys.readouterr().out.strip()).read_text().splitlines()


def opening(lines: list[str]) -> dict[str, str]:
    """The PR's bullet lines by label: {"Result": "...", ...}, in order."""
    return {line[4:].split("**", 1)[0]: line.split(" — ", 1)[1] for line in lines if line.startswith("- **")}


def planted(ws: Path, events: list[dict[str, object]]) -> None:
    """Events journaled into the tuned session at their times, as the cockpit journals them."""
    journal = ws / "sessions" / TUNED / "journal.jsonl"
    lines = journal.read_text().splitlines()
    for e in events:
        at = next(i for i, line in enumerate(lines) if json.loads(line)["t"] > e["t"])
        lines.insert(at, json.dumps(e))
    journal.write_text("\n".join(lines) + "\n")


@pytest.fixture
def examples(tmp_path: Path) -> Path:
    shutil.copytree(EXAMPLES, tmp_path / "examples")
    return tmp_path / "examples"


def test_the_tuned_session_opens_with_what_a_reviewer_asks_in_that_order(
        examples: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = export_pr(examples, TUNED, capsys)
    said = opening(lines)
    assert list(said)[:7] == ["Result", "Correctness", "Sanitizer", "Validity", "Decision", "Fix realized",
                              "Profile"]
    assert said["Fix realized"] == "the profile's fix has no bench that kept or reverted after it in this session"
    assert lines[2:7] == [f"- **{label}** — {said[label]}" for label in list(said)[:5]]  # right under the title
    # the result against its baseline over its configs; this bench (recorded before intervals) has none
    assert said["Result"] == ("`attention`: 0.77x vs SDPA over 56 configs \\(behind the baseline: one fix at a "
                              "time\\), 1.08x vs FLASH, run 008-bench; no interval: the bench recorded none")
    # the checks and their tolerance; the rounds were not recorded by the correctness of the time
    assert said["Correctness"] == ("all 104/104 configs correct, rounds not recorded; rel L2 tolerance 1e-2; "
                                   "worst rel L2 2.3e-03 at B2 H16 S8192 D128 bf16 full \\(run 007-correctness\\)")
    assert said["Sanitizer"] == "not run in this session"
    assert said["Validity"] == ("VALID: comparable \\(power cap 36% of the window; SM clock ours 1980, "
                                "SDPA 1980 MHz\\)")
    # "vs current" said as what it was, the tile in words, and no commit invented
    assert said["Decision"] == (
        "KEEP: 1.20x \\[1.18, 1.20\\] vs the build before this change \\(the tuned values before "
        "tune-20261123-111122\\), 1.06x vs FLASH, with head dim 128: block 128x64, 4 warps, min 1 block/SM, "
        "1 stage, O in shared memory, Q in shared memory; done, no commit recorded")
    assert "BM128" not in "\n".join(lines) and "vs current" not in "\n".join(lines)
    assert said["Profile"].endswith("the one fix: larger tiles: let each byte brought into shared memory / L1 "
                                    "feed more math \\(bigger tiles per block, fragments kept in registers across "
                                    "the loop\\) to cut L1 wavefronts")


def test_the_h100_session_fits_a_pr_description(examples: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = export_pr(examples, TUNED, capsys)
    assert len(lines) <= 40
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
    caption = next(i for i, line in enumerate(lines) if line.startswith("<sub>"))
    assert lines[caption].startswith("<sub>56 configs; the 4 slowest and 4 fastest vs SDPA shown, the fastest "
                                     "among those whose time is not mostly the launch \\(16 configs are\\)")
    # GitHub reads a line right under a table as its last row: the caption stands after a blank line
    assert lines[caption - 1] == "" and lines[caption - 2] == rows[-1]
    # outside a git repository the link is from the workspace
    assert lines[-1].endswith(f"Full report: [sessions/{TUNED}/REPORT.md](sessions/{TUNED}/REPORT.md)")


def test_every_table_the_reports_write_stands_between_blank_lines(
        examples: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """PR.md and REPORT.md of every example: nothing written against a table's first or last row
    (a caption there renders as a row of the table)."""
    for session in sorted(p.name for p in (examples / "sessions").iterdir()):
        export_pr(examples, session, capsys)
        assert main(["--workspace", str(examples), "export", session, "--format", "md"]) == 0
        capsys.readouterr()
        for name in ("PR.md", "REPORT.md"):
            lines = (examples / "sessions" / session / name).read_text().splitlines()
            tables = [i for i, line in enumerate(lines) if line.startswith("|")]
            assert tables, f"{session}/{name} has no table"
            for i in tables:
                for j in (i - 1, i + 1):
                    assert j in tables or j == len(lines) or lines[j] == "", \
                        f"{session}/{name}:{j + 1}: {lines[j]!r} against a table"


def test_a_sanitizer_run_is_said_with_its_errors_and_shapes(
        examples: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The H200's recorded runs of the sanitizer gate, planted in the session: a clean one, then
    one that caught a write past the end (the last run is the one the PR says)."""
    runs = []
    for n, name in enumerate(("honest", "past_end")):
        recorded = json.loads((SANITIZE / f"{name}.json").read_text())
        run_id, t = f"{9 + n:03d}-sanitize", ENDED - 2 + n
        runs += [ev.gate_started(t - 0.5, run_id, "sanitize", (), f"sessions/{TUNED}/logs/{run_id}.log", 1),
                 ev.gate_finished(t, run_id, "sanitize", recorded["status"], recorded["summary"],
                                  recorded["duration_s"], recorded["exit_code"], recorded["log"], recorded["result"])]
    planted(examples, runs[:2])
    assert opening(export_pr(examples, TUNED, capsys))["Sanitizer"] == (
        "compute-sanitizer memcheck: 0 errors on 3 shapes \\(run 009-sanitize\\)")
    planted(examples, runs[2:])
    assert opening(export_pr(examples, TUNED, capsys))["Sanitizer"] == (
        "compute-sanitizer memcheck: 6 errors on 3 shapes \\(0 of 3 calls ran\\); first: Invalid "
        "\\_\\_global\\_\\_ write of size 4 bytes in twice\\_kernel at sanitize\\_past\\_end.py:32 "
        "\\(run 010-sanitize\\)")


def test_a_bench_decision_names_the_bench_it_was_compared_with_and_the_commits(
        examples: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two keeps as the TUI journals them after a bench: the first (after 004-bench, against the
    session before) committed 1a2b3c4; the second, after 008-bench, was measured against 004-bench,
    so it names that run, when it finished and the commit its build was kept as. The correctness
    run before that second keep vouches for the build before it, and says so."""
    session = f"{TUNED}/004-bench"
    planted(examples, [
        ev.decision(1795432273.0, "keep", "KEEP: +25% vs the best earlier run", True, improvement=0.25,
                    reference=f"{BEFORE}/bench-20261123-090527.json", commit="1a2b3c4"),
        ev.decision(ENDED - 1, "keep", "KEEP: +15% vs the best earlier run", True, improvement=0.149,
                    reference=session, interval=[1.12, 1.18], commit="9f8e7d6")])
    said = opening(export_pr(examples, TUNED, capsys))
    assert said["Decision"] == ("KEEP: 1.15x \\[1.12, 1.18\\] vs the best earlier bench, run 004-bench "
                                "\\(2026-11-23 11:11 UTC, commit 1a2b3c4\\); done, commit 9f8e7d6")
    assert said["Correctness"].endswith("; it ran before the last change kept: it vouches for the build before "
                                        "it \\(run 007-correctness\\)")
    assert main(["--workspace", str(examples), "export", TUNED, "--format", "json"]) == 0
    capsys.readouterr()
    report = json.loads((examples / "sessions" / TUNED / "report.json").read_text())
    assert [d["versus"] for d in report["decisions"]] == [
        f"the best earlier bench, bench-20261123-090527 of session {BEFORE}",
        "the tuned values before tune-20261123-111122",
        "the best earlier bench, run 004-bench (2026-11-23 11:11 UTC, commit 1a2b3c4)"]


def test_a_decision_from_before_the_interval_says_what_it_did_not_record(
        examples: Path, capsys: pytest.CaptureFixture[str]) -> None:
    planted(examples, [ev.decision(ENDED - 1, "revert", "REVERT: +3% vs the best earlier run", False,
                                   improvement=0.03)])
    assert opening(export_pr(examples, TUNED, capsys))["Decision"] == (
        "REVERT: 1.03x \\(no interval recorded\\) vs the best earlier bench \\(the journal does not name "
        "it\\); not carried out")


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


def test_a_session_without_a_bench_says_what_did_not_run_and_its_words_stay_words(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--workspace", str(tmp_path), "new", "fix the | table <script>x</script>"]) == 0
    capsys.readouterr()
    assert main(["--workspace", str(tmp_path), "export", "--format", "pr"]) == 0
    text = Path(capsys.readouterr().out.strip()).read_text()
    assert text.startswith("### fix the \\| table \\<script\\>x\\</script\\>\n")  # REPORT.md's escape
    assert opening(text.splitlines()) == {
        "Result": "no benchmark was run", "Correctness": "not run in this session",
        "Sanitizer": "not run in this session", "Validity": "no bench in this session",
        "Decision": "no keep/revert decision was taken in this session",
        "Fix realized": "no profile in this session"}


LOOP = "20261129-1543-8f13-row-softmax-first-version-baseline"
"""The learning-loop example, recorded on an H200 (bench/device/loop_session.sh): a first softmax,
its profile, the one fix the profile named, the bench after it."""


def test_the_loop_example_says_what_the_profile_predicted_and_what_the_fix_realized(
        examples: Path, capsys: pytest.CaptureFixture[str]) -> None:
    said = opening(export_pr(examples, LOOP, capsys))
    # the interval from the bench's result file: the journal's headline of that run predates it
    assert said["Result"].startswith(r"`row-softmax`: 1.11x \[1.10, 1.12\] vs torch.softmax over 18 configs")
    assert said["Correctness"].startswith("all 53/53 configs correct on 3 rounds of fresh inputs")
    assert said["Sanitizer"] == "not run in this session"
    # the bench ran from the command line: its verdict, said as the bench's, never as a decision taken
    assert said["Decision"].startswith("KEEP: +684% vs the best earlier run")
    assert said["Decision"].endswith(r"\(the verdict of run 008-bench; no keep or revert answer was journaled\)")
    assert said["Fix realized"].startswith(
        r"ncu estimated 75.6 % for MemoryCacheAccessPattern \(of the whole kernel\); this change realized "
        r"7.84x \[7.76, 7.92\] \(87.2 % less time\), KEEP")
    assert r"9db28ff -\> 8faa449: 1 file changed" in said["Fix realized"]


def test_the_loop_examples_pattern_says_how_its_rule_paid(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--workspace", str(EXAMPLES), "pattern", "show", "15"]) == 0
    assert "paid: MemoryCacheAccessPattern applied 1 time, kept 1, realized median 7.84x" in capsys.readouterr().out
