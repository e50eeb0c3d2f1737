"""`cockpit decision`: a bench run from a second pane (`cockpit gate bench`) keeps or reverts, and
the engineer answers from the shell as the TUI's dialog would have asked: the question first (what a
yes does, git's diff stat), then --yes commits the kernel's files (or restores them) and --no leaves
them; the answer is journaled, so the report's Decision line says what was done. A yes runs git
(and its hooks): refused in a workspace not trusted, and in an ended session."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from cockpit.cli import main
from cockpit.session import timer
from cockpit.session.live import LiveSession
from cockpit.session.workspace import SessionRef
from tests.test_fix_payoff import a_repo, bench, git, session


def benched(ws: Path) -> tuple[SessionRef, str]:
    """A session whose second bench, after a change to the kernel, is 1.25x the first: KEEP."""
    commit = a_repo(ws)
    now = time.time()
    s = session(ws, now - 7200, "tile the rows")
    bench(ws, s, "002-bench", 1.0, now - 3600)
    (ws / "csrc" / "kernel.cu").write_text("// 64 registers a thread\n__launch_bounds__(128, 2)\n")
    bench(ws, s, "003-bench", 0.8, now - 600)
    return s, commit


def decision(ws: Path, capsys: pytest.CaptureFixture[str], *answer: str) -> tuple[int, str, str]:
    code = main(["--workspace", str(ws), "decision", *answer])
    out, err = capsys.readouterr()
    return code, out, err


def pr_decision(ws: Path, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["--workspace", str(ws), "export", "--format", "pr"]) == 0
    pr = Path(capsys.readouterr().out.strip()).read_text()
    return next(line for line in pr.splitlines() if line.startswith("- **Decision** — "))


def test_a_bench_from_the_shell_is_kept_with_cockpit_decision_and_the_report_says_it_was_done(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, before = benched(tmp_path)
    said = pr_decision(tmp_path, capsys)
    assert said.endswith(r"\(the verdict of run 003-bench; no keep or revert answer was journaled\)")
    code, out, _ = decision(tmp_path, capsys)
    assert code == 0 and out.startswith("003-bench: KEEP: +25% vs the best earlier run")
    assert "Commit csrc/ with this message?" in out and "csrc/kernel.cu | 1 +" in out
    assert out.rstrip().endswith("answer: cockpit decision --yes (or --no)")
    assert git(tmp_path, "rev-parse", "--short", "HEAD") == before  # asking changed nothing
    code, out, _ = decision(tmp_path, capsys, "--yes")
    kept = git(tmp_path, "rev-parse", "--short", "HEAD")
    assert code == 0 and kept != before and out.strip() == f"003-bench: Kept: committed csrc/ as {kept}."
    assert git(tmp_path, "status", "--porcelain", "csrc") == ""
    assert pr_decision(tmp_path, capsys).endswith(f"; done, commit {kept}")
    code, out, _ = decision(tmp_path, capsys, "--yes")  # answered: nothing waits any more
    assert code == 0 and out.startswith("no keep/revert verdict waits for an answer")
    assert git(tmp_path, "rev-parse", "--short", "HEAD") == kept


def test_no_leaves_the_kernel_as_it_is_and_is_journaled_as_not_carried_out(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, before = benched(tmp_path)
    code, out, _ = decision(tmp_path, capsys, "--no")
    assert code == 0 and out.strip() == "003-bench: Declined: csrc/ left as it is."
    assert git(tmp_path, "rev-parse", "--short", "HEAD") == before
    assert "__launch_bounds__" in (tmp_path / "csrc" / "kernel.cu").read_text()
    assert pr_decision(tmp_path, capsys).endswith("; not carried out")


def test_a_yes_is_refused_in_a_workspace_not_trusted_and_in_an_ended_session(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    s, before = benched(tmp_path)
    (tmp_path / "cockpit.toml").write_text('[workload]\nmodule = "workloads/tile.py"\n')  # a stranger's
    code, _, err = decision(tmp_path, capsys, "--yes")
    assert code != 0 and "cockpit trust allow" in err
    assert git(tmp_path, "rev-parse", "--short", "HEAD") == before  # git never ran
    code, out, _ = decision(tmp_path, capsys)  # asking runs nothing: allowed
    assert code == 0 and out.startswith("003-bench: KEEP")
    live = LiveSession(s)
    try:
        live.append(timer.end_session(live.state, time.time(), "done"))
    finally:
        live.close()
    code, _, err = decision(tmp_path, capsys, "--session", s.id, "--no")
    assert code != 0 and f"session {s.id} has ended" in err


async def test_the_tuis_dialog_asks_the_same_question_and_a_yes_commits_and_is_journaled(
        tmp_path: Path) -> None:
    """After a bench the TUI ran, the dialog asks what `cockpit decision` prints, and `y` does
    what `--yes` does: one engine (gates/bench/answer.py)."""
    from cockpit.cli.decision import waiting
    from cockpit.clock import FakeClock
    from cockpit.gates.bench.result import read_bench_result
    from cockpit.session.workspace import Workspace, load_state
    from cockpit.ui.controllers.decisions import offer_bench_decision
    from cockpit.ui.screens.dialogs import ConfirmDialog
    from tests.test_app import SIZE, journal, make_app
    from tests.waiting import until

    s, before = benched(tmp_path)
    found = waiting(s, load_state(s))
    assert found is not None
    result = read_bench_result(found[0].result)  # the bench the TUI would have run: 003's KEEP
    assert result is not None and result.keep is not None and result.keep.action == "keep"
    app = make_app(Workspace(tmp_path), s, FakeClock(time.time()))
    async with app.run_test(size=SIZE) as pilot:
        offer_bench_decision(app, result)
        await until(pilot, lambda: isinstance(app.screen, ConfirmDialog) and app.screen.query("Label"),
                    "the keep/revert dialog")
        asked = str(app.screen.query_one("Label").render())
        assert "Commit csrc/ with this message?" in asked and "csrc/kernel.cu | 1 +" in asked
        await pilot.press("y")
        await until(pilot, lambda: any(e["type"] == "decision" for e in journal(s)), "the answer journaled")
    kept = git(tmp_path, "rev-parse", "--short", "HEAD")
    [said] = [e for e in journal(s) if e["type"] == "decision"]
    assert kept != before and said["confirmed"] is True and said["commit"] == kept
    assert f"Kept: committed csrc/ as {kept}." in app.toasts  # type: ignore[attr-defined]
