"""Predicted against realized (issue 47): the profile names one fix with ncu's estimate, the engineer
makes the change, and the next bench that keeps or reverts says what the change realized beside what
ncu predicted, with what changed in git and the note the engineer wrote; a later bench does not take
the same profile again; a fix ncu gave no number for is said as the decision tree's."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from cockpit.analysis.fix_payoff import FixPayoff, Predicted, paid_by_rule
from cockpit.cli import main
from cockpit.gates.bench.payoff import LOG_SEEN
from cockpit.gates.bench.result import read_bench_result
from cockpit.gates.bench.view import bench_view
from cockpit.gates.gate import Verdict, result_json
from cockpit.patterns.library import new_pattern
from cockpit.session import events as ev
from cockpit.session.journal import JournalWriter
from cockpit.session.results import gate_finished_event
from cockpit.session.workspace import SessionRef, Workspace
from tests.test_one_past import bench as journaled_bench
from tests.test_one_past import session

OCCUPANCY = ("TheoreticalOccupancy: The kernel's theoretical occupancy is limited by the number of required "
             "registers. (47.7 % est., of the whole kernel)")


def bench(ws: Path, ref: SessionRef, run_id: str, scale: float, t: float) -> Verdict:
    """The bench gate on the H100's recorded bench, ours `scale` times as long with a ±1 % interval
    on every config, its finish journaled as the runner does."""
    return journaled_bench(ws, ref, run_id, scale, t, spread=0.01)


def git(ws: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(ws), *args], check=True, capture_output=True, text=True).stdout.strip()


def a_repo(ws: Path) -> str:
    (ws / "csrc").mkdir(parents=True)
    (ws / "csrc" / "kernel.cu").write_text("// 64 registers a thread\n")
    git(ws, "init", "-q")
    git(ws, "add", "-A")
    git(ws, "-c", "user.email=e@e", "-c", "user.name=e", "commit", "-qm", "base")
    return git(ws, "rev-parse", "--short", "HEAD")


def profiled(ws: Path, ref: SessionRef, run_id: str, t: float, fix: str, estimates: list[str],
             commit: str | None, log_seen: int | None = None) -> None:
    """A profile gate run journaled as the runner does, its result keeping its fix and commit (and
    how many SESSION.md Log lines there were as it finished)."""
    result = {"kernels": [], "fix": {"line": fix, "estimates": estimates}, **({"commit": commit} if commit else {}),
              **({LOG_SEEN: log_seen} if log_seen is not None else {})}
    writer = JournalWriter(ref.journal)
    writer.append(ev.gate_started(t - 30, run_id, "profile", ("python",), f"logs/{run_id}.log", 1))
    writer.append(gate_finished_event(ref.path, ws, t, run_id, "profile", "pass", f"memory-bound — next: {fix}",
                                      30.0, 0, f"logs/{run_id}.log", result))
    writer.close()


def noted(ref: SessionRef, t: float, text: str) -> None:
    writer = JournalWriter(ref.journal)
    writer.append({"type": ev.NOTE, "t": t, "text": text})
    writer.close()


def test_the_bench_after_a_profile_says_what_ncu_predicted_and_what_the_change_realized(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    commit = a_repo(tmp_path)
    now = time.time()
    s = session(tmp_path, now - 7200, "occupancy")
    bench(tmp_path, s, "002-bench", 1.0, now - 3600)
    profiled(tmp_path, s, "003-profile", now - 3000, OCCUPANCY, [OCCUPANCY], commit)
    noted(s, now - 2000, "launch bounds: 128 threads, 2 blocks an SM")
    (tmp_path / "csrc" / "kernel.cu").write_text("// 64 registers a thread\n__launch_bounds__(128, 2)\n")
    verdict = bench(tmp_path, s, "004-bench", 0.8, now - 600)
    result = read_bench_result(result_json(verdict))
    assert result is not None and result.raw["commit"] == commit
    payoff = result.payoff
    assert payoff is not None and payoff.action == "keep"
    assert payoff.predicted == Predicted(OCCUPANCY, f"{s.id}/003-profile", "TheoreticalOccupancy", 47.7,
                                         "of the whole kernel")
    assert payoff.realized is not None and abs(payoff.realized[0] - 1.25) < 1e-9
    assert payoff.realized[1] < 1.25 < payoff.realized[2] and payoff.against == f"{s.id}/002-bench"
    assert payoff.changed == f"{commit} -> {commit}: 1 file changed, 1 insertion(+)"
    assert payoff.notes == ("launch bounds: 128 threads, 2 blocks an SM",)
    line = payoff.line()
    assert line.startswith("ncu estimated 47.7 % for TheoreticalOccupancy (of the whole kernel); this change "
                           "realized 1.25x [")
    assert line.endswith("] (20.0 % less time), KEEP")
    facts = {f.label: f.value for f in bench_view(result).facts}
    assert facts["the profile's fix"] == line  # the gate pane says it after the bench
    assert facts["changed since it"] == (f"{commit} -> {commit}: 1 file changed, 1 insertion(+); "
                                         "noted: launch bounds: 128 threads, 2 blocks an SM")
    # the profile is paid off once: the next bench finds it taken
    later = read_bench_result(result_json(bench(tmp_path, s, "005-bench", 0.8, now - 300)))
    assert later is not None and later.payoff is None
    # `cockpit history`: the fix, what ncu predicted and what the change realized, numbers first
    assert main(["--workspace", str(tmp_path), "history", "--wide"]) == 0
    table = capsys.readouterr().out.split("\n\n")[0].splitlines()
    assert "FIX → REALIZED" in table[0]
    assert "47.7 % → 1.25x [1.23, 1.28] keep · Theoretical" in table[1]  # numbers first: a cut cell keeps them
    # PR.md and REPORT.md open with it beside the decision
    capsys.readouterr()
    assert main(["--workspace", str(tmp_path), "export", "--format", "pr"]) == 0
    pr = Path(capsys.readouterr().out.strip()).read_text()
    said = next(line for line in pr.splitlines() if line.startswith("- **Fix realized** — "))
    assert said.startswith("- **Fix realized** — ncu estimated 47.7 % for TheoreticalOccupancy \\(of the whole "
                           "kernel\\); this change realized 1.25x \\[")
    assert f"KEEP \\(run 004-bench; changed: {commit} -\\> {commit}: 1 file changed" in said
    # the pattern library: a pattern that names the rule says how often and how much it paid
    new_pattern(Workspace(tmp_path).patterns_dir, "Registers cap the occupancy",
                "TheoreticalOccupancy below 50 %", "ncu names TheoreticalOccupancy", "__launch_bounds__", 20)
    new_pattern(Workspace(tmp_path).patterns_dir, "Tiles too small", "a partial wave", "a tail", "bigger tiles", 5)
    assert main(["--workspace", str(tmp_path), "pattern", "list"]) == 0
    listed = capsys.readouterr().out.splitlines()
    mine = next(i for i, line in enumerate(listed) if line.endswith("Registers cap the occupancy"))
    assert listed[mine + 1].strip() == "paid: TheoreticalOccupancy applied 1 time, kept 1, realized median 1.25x"
    assert [line for line in listed if "paid:" in line] == [listed[mine + 1]]  # no other pattern names it
    assert main(["--workspace", str(tmp_path), "pattern", "show", "Registers cap the occupancy"]) == 0
    assert "paid: TheoreticalOccupancy applied 1 time, kept 1" in capsys.readouterr().out


def test_a_fix_ncu_gave_no_number_for_is_said_as_the_decision_trees_and_a_workspace_without_git_says_nothing_changed(
        tmp_path: Path) -> None:
    now = time.time()
    s = session(tmp_path, now - 7200, "bytes")
    bench(tmp_path, s, "002-bench", 1.0, now - 3600)
    tree = "move fewer bytes: the kernel is memory-bound at 91 % of DRAM bandwidth"
    profiled(tmp_path, s, "003-profile", now - 3000, tree, [], None)
    result = read_bench_result(result_json(bench(tmp_path, s, "004-bench", 1.25, now - 600)))
    assert result is not None and "commit" not in result.raw  # no git checkout: no commit said
    payoff = result.payoff
    assert payoff is not None and payoff.action == "revert" and payoff.changed is None
    assert payoff.predicted.rule is None and payoff.predicted.estimate_pct is None
    assert payoff.line().startswith(f"the profile's fix (the decision tree's; ncu estimated nothing for it): {tree}; "
                                    "this change realized 0.80x [")
    assert payoff.line().endswith("(25.0 % more time), REVERT")
    assert payoff.changed_words().startswith("not recorded (no commit for both runs")


def test_the_change_is_said_in_the_engineers_words_its_commits_and_what_the_log_got_after_the_profile(
        tmp_path: Path) -> None:
    """The commits that touched the kernel since the profile's, by their subjects, and the lines
    written under SESSION.md's Log after the profile finished: what the engineer said of the change.
    A subject is a stranger's text: its hidden characters are spelled out."""
    commit = a_repo(tmp_path)
    now = time.time()
    s = session(tmp_path, now - 7200, "occupancy")
    log = s.path / "SESSION.md"
    log.write_text(log.read_text() + "\n- 10:02 Baseline: 1.00x, next the profile\n")
    bench(tmp_path, s, "002-bench", 1.0, now - 3600)
    profiled(tmp_path, s, "003-profile", now - 3000, OCCUPANCY, [OCCUPANCY], commit, log_seen=1)
    log.write_text(log.read_text() + "- 10:20 registers: launch bounds 128 x 2, nothing else\n")
    (tmp_path / "csrc" / "kernel.cu").write_text("// 64 registers a thread\n__launch_bounds__(128, 2)\n")
    git(tmp_path, "-c", "user.email=e@e", "-c", "user.name=e", "commit", "-qam", "kernel: __launch_bounds__(128, 2)\u202e")
    now_commit = git(tmp_path, "rev-parse", "--short", "HEAD")
    result = read_bench_result(result_json(bench(tmp_path, s, "004-bench", 0.8, now - 600)))
    assert result is not None and result.payoff is not None
    assert result.payoff.changed == (f'{commit} -> {now_commit}: 1 file changed, 1 insertion(+), in '
                                     '"kernel: __launch_bounds__(128, 2)<U+202E>"')
    assert result.payoff.notes == ("10:20 registers: launch bounds 128 x 2, nothing else",)
    facts = {f.label: f.value for f in bench_view(result).facts}
    assert facts["changed since it"].endswith('; noted: 10:20 registers: launch bounds 128 x 2, nothing else')


def test_a_first_bench_after_a_profile_decides_nothing_and_pays_nothing_off(tmp_path: Path) -> None:
    now = time.time()
    s = session(tmp_path, now - 7200, "first")
    profiled(tmp_path, s, "002-profile", now - 3000, OCCUPANCY, [OCCUPANCY], None)
    result = read_bench_result(result_json(bench(tmp_path, s, "003-bench", 1.0, now - 600)))
    assert result is not None and result.keep is not None and not result.keep.decides
    assert result.payoff is None


def test_how_each_rule_paid_across_sessions_and_a_payoff_from_another_version_is_not_read() -> None:
    def payoff(rule: str | None, action: str, mid: float | None) -> FixPayoff:
        predicted = Predicted(f"{rule}: x", "s/1", rule, 30.0 if rule else None, "of the whole kernel")
        return FixPayoff(predicted, "s/2", action, (mid, mid * 0.99, mid * 1.01) if mid else None, 10)

    paid = paid_by_rule([payoff("TheoreticalOccupancy", "keep", 1.2), payoff("TheoreticalOccupancy", "revert", 0.9),
                         payoff("TheoreticalOccupancy", "keep", 1.1), payoff("TailEffect", "keep", None)])
    assert paid["TheoreticalOccupancy"].words() == "applied 3 times, kept 2, realized median 1.10x"
    assert paid["TailEffect"].words() == "applied 1 time, kept 1"
    recorded = payoff("TailEffect", "keep", 1.05).to_json()
    assert FixPayoff.from_json(recorded) == payoff("TailEffect", "keep", 1.05)
    assert FixPayoff.from_json({**recorded, "schema": 2}) is None


async def test_the_pattern_browser_says_how_the_rule_a_pattern_names_paid(tmp_path: Path) -> None:
    """The TUI's library (the pattern browser) reads every session's payoffs off its thread and
    then shows, under the pattern that names the rule, how it paid."""
    from cockpit.clock import FakeClock
    from cockpit.config import Config
    from cockpit.ui.app import CockpitApp
    from cockpit.ui.screens.patterns import PatternBrowser

    now = time.time()
    s = session(tmp_path, now - 7200, "occupancy")
    bench(tmp_path, s, "002-bench", 1.0, now - 3600)
    profiled(tmp_path, s, "003-profile", now - 3000, OCCUPANCY, [OCCUPANCY], None)
    bench(tmp_path, s, "004-bench", 0.8, now - 600)
    path = new_pattern(Workspace(tmp_path).patterns_dir, "Registers cap the occupancy",
                       "TheoreticalOccupancy below 50 %", "ncu names it", "__launch_bounds__", 20)
    pattern_id = int(path.name.split("-")[0])
    app = CockpitApp(Workspace(tmp_path), Config(status_every_s=10**6), s, clock=FakeClock(now), typing_gap_s=0,
                     tick_s=3600, gpu_every_s=0)
    async with app.run_test(size=(200, 50)) as pilot:
        app.open_patterns(pattern_id)
        shown = ""
        for _ in range(600):
            await pilot.pause()
            if isinstance(app.screen, PatternBrowser):
                shown = str(app.screen.query_one("#pattern-detail").render())
                if "paid:" in shown:
                    break
    assert "paid: TheoreticalOccupancy applied 1 time, kept 1, realized median 1.25x" in shown


def test_a_profiles_commit_that_is_no_commit_name_never_reaches_git(tmp_path: Path) -> None:
    """The commit comes from a result file in the workspace: "--output=..." would be git's option."""
    a_repo(tmp_path)
    now = time.time()
    s = session(tmp_path, now - 7200, "hostile")
    bench(tmp_path, s, "002-bench", 1.0, now - 3600)
    planted = f"--output={tmp_path / 'written-by-git'}"
    profiled(tmp_path, s, "003-profile", now - 3000, OCCUPANCY, [OCCUPANCY], planted)
    result = read_bench_result(result_json(bench(tmp_path, s, "004-bench", 0.8, now - 600)))
    assert result is not None and result.payoff is not None and result.payoff.changed is not None
    assert result.payoff.changed.endswith("is no commit name")
    assert not (tmp_path / "written-by-git").exists()
