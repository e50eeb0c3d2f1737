"""A cloned workspace's pattern library cannot hang the cockpit: its triggers share one budget.
200 committed patterns whose triggers backtrack for ever (each within its own 0.25 s) once left
the TUI blank for 53 s and made `history` take minutes; now the library as a whole spends at most
a second on a gate run's output, the patterns that ran out of their own budget are named, and one
line says the rest were skipped."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from cockpit.cli import main
from cockpit.config import Config
from cockpit.patterns.library import load_patterns
from cockpit.patterns.triggers import LIBRARY, TriggerBudget, match_output
from cockpit.session import events as ev
from cockpit.session.journal import JournalWriter
from cockpit.session.workspace import SessionRef, Workspace, create_session

from .conftest import T0
from .test_hostile_display import app_on

SLACK_S = 10.0
"""What a hostile library may add to a first frame or a history, on a busy 2-core runner: its 1 s
budget, reading 200 files and parsing their YAML. Unbudgeted, the same library took 53 s and minutes."""

SLOW_LINE = "a" * 3000 + "!"
"""A line on which (a+)+$ backtracks for ever."""


def slow_library(patterns: Path, count: int = 200) -> None:
    patterns.mkdir(parents=True, exist_ok=True)
    for n in range(100, 100 + count):
        (patterns / f"{n}-backtracks.md").write_text(
            f"---\nid: {n}\ntitle: Backtracks {n}\nstatus: operational\ntime_saved_min: 1\nproblem: p\n"
            "when: w\nsolution: s\ntriggers:\n  - {regex: '(a+)+$', on: output}\n---\nbody\n")


def session_with_runs(ws: Workspace, runs: int = 1, sessions: int = 1) -> SessionRef:
    """Sessions, each with `runs` failed env runs whose logs hold the slow lines."""
    ref = None
    for s in range(sessions):
        ref = create_session(ws, Config(), f"objective {s}", "optimize", T0 + s * 10_000)
        journal = JournalWriter(ref.journal)
        for r in range(runs):
            log = ref.path / "logs" / f"env-{r}.log"
            log.parent.mkdir(exist_ok=True)
            log.write_text(f"{SLOW_LINE}\n" * 20)
            t = T0 + s * 10_000 + 10 * r
            journal.append(ev.gate_started(t + 1, f"env-{r}", "env", ("python",), str(log), 1))
            journal.append(ev.gate_finished(t + 2, f"env-{r}", "env", "fail", "no torch", 1.0, 1, str(log), {}))
        journal.close()
    assert ref is not None
    return ref


def test_200_slow_triggers_spend_one_library_budget_and_say_so_in_one_line(tmp_path: Path) -> None:
    slow_library(tmp_path / "patterns")
    patterns, problems = load_patterns(tmp_path / "patterns")
    assert len(patterns) == 214 and not problems  # and the 14 shipped
    budget = TriggerBudget()
    started = time.monotonic()
    for _ in range(5):  # five gate runs: the library spends its budget on the first, then is skipped
        assert match_output(patterns, "build", [SLOW_LINE] * 50, budget) == []
    assert time.monotonic() - started < budget.library_s + 1.5
    named = [pid for pid in budget.too_slow if pid != LIBRARY]
    assert 1 <= len(named) <= 4  # those that spent their own 0.25 s (or more: a timeout overruns)
    library = budget.too_slow[LIBRARY]
    assert "\n" not in library and "were not searched" in library and "slowest" in library
    assert any(f"{pid:02d} (" in library for pid in named)  # the slowest, so the user knows which file


def test_a_library_within_its_budget_still_finds_what_it_should(tmp_path: Path) -> None:
    """A fast library, searched on gate run after gate run for longer than its budget in all, is
    never cut: the budget is per gate run."""
    slow_library(tmp_path / "patterns", count=0)
    (tmp_path / "patterns" / "95-frobnicate.md").write_text(
        "---\nid: 95\ntitle: Frobnicated\nstatus: operational\ntime_saved_min: 1\nproblem: p\n"
        "when: w\nsolution: s\ntriggers:\n  - {regex: 'cannot frobnicate \\w+', on: output}\n---\nbody\n")
    patterns, _ = load_patterns(tmp_path / "patterns")
    budget = TriggerBudget(library_s=0.5)
    started = time.monotonic()
    while time.monotonic() - started < 2 * budget.library_s:
        hits = match_output(patterns, "build", ["x" * 200] * 2000 + ["cannot frobnicate foo"], budget)
        assert [p.id for p, _ in hits] == [95]
    assert not budget.too_slow


def test_one_slow_pattern_is_named_and_the_rest_of_the_library_still_searched(tmp_path: Path) -> None:
    """However far its search overruns its timeout, one pattern spends at most half the library's
    budget: it is named and skipped, and the library goes on."""
    slow_library(tmp_path / "patterns", count=1)
    patterns, _ = load_patterns(tmp_path / "patterns")
    budget = TriggerBudget(seconds=0.25, library_s=0.3)
    hits = match_output(patterns, "build", [SLOW_LINE] * 5 + ["undefined symbol: foo"], budget)
    assert list(budget.too_slow) == [100]
    assert [p.id for p, _ in hits] == [9]  # the shipped pattern on undefined symbols


async def first_frame_s(ws: Workspace, ref: SessionRef) -> tuple[float, list[str]]:
    """From starting the app to its first frame with the env run's detail drawn, and its toasts."""
    started = time.monotonic()
    app = app_on(ws, ref)
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        while "FAIL" not in app.export_screenshot() and time.monotonic() - started < 120:
            await pilot.pause()
        took = time.monotonic() - started
        return took, [n.message for n in app._notifications]


async def test_the_tui_s_first_frame_stays_within_a_second_of_its_usual_time(tmp_path: Path) -> None:
    usual_ws = Workspace(tmp_path / "usual")
    usual, _ = await first_frame_s(usual_ws, session_with_runs(usual_ws))
    hostile_ws = Workspace(tmp_path / "hostile")
    slow_library(hostile_ws.patterns_dir)
    hostile, toasts = await first_frame_s(hostile_ws, session_with_runs(hostile_ws))
    # The library's 1 s and reading 200 files, on a CPU that CI shares with a hog: the defect this
    # guards against left the first frame blank for 53 s; 2.8 s over was seen on a busy CI runner.
    assert hostile - usual < SLACK_S, (usual, hostile)
    assert sum("not searched" in t for t in toasts) == 1, toasts


def test_history_stays_within_a_second_of_its_usual_time(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Twelve sessions of three runs each: the library spends its budget once, not per run or
    per session."""
    times = {}
    for name in ("usual", "hostile"):
        ws = Workspace(tmp_path / name)
        if name == "hostile":
            slow_library(ws.patterns_dir)
        session_with_runs(ws, runs=3, sessions=12)
        started = time.monotonic()
        assert main(["--workspace", str(ws.root), "history"]) == 0
        times[name] = time.monotonic() - started
    assert times["hostile"] - times["usual"] < SLACK_S, times  # the defect took minutes
    err = capsys.readouterr().err.splitlines()
    assert sum("not searched" in line for line in err) == 1, err


REGEXES = [
    "undefined symbol", r"^WARN\s+stale_lock\b", r"error\s*$", r"^$x|^\s+at\b", r"[^x]{3}end$",
    r"(?i)TOO MUCH shared", r"(?:ab|cd)+\.cu", r"\bfoo\B", r"(?P<n>ab)(?P=n)", r"a\s+b",
    # searched a line at a time: each could hold a newline, or the text's ends, a line never had
    r"(?!\s)x$", r"\Aline 3", r"end\Z", r"(?>\s*)$z", r"x\s*+$", r"(?<=\n)foo", r"(a)?(?(1)b|d)",
]
LINES = ["line 1 foo", "", "   at main.py:3", "WARN", "stale_lock held", "xxxend", "line 3 error  ",
         "ab cd", "a", "b", "TOO much SHARED data", "abcd.cu", "fooo", "abab", "x", "z", "plain end"]


@pytest.mark.parametrize("regex", REGEXES)
def test_many_lines_searched_at_once_find_what_each_line_finds_alone(regex: str, tmp_path: Path) -> None:
    """The batch search is a shortcut, never a change in what fires or on which line."""
    import dataclasses

    from cockpit.patterns.library import parse_pattern

    path = tmp_path / "42-x.md"
    pattern = parse_pattern(
        "---\nid: 42\ntitle: t\nstatus: operational\ntime_saved_min: 1\nproblem: p\nwhen: w\n"
        f"solution: s\ntriggers:\n  - {{regex: '{regex}', on: output}}\n---\n", path, 42)
    assert (pattern.triggers[0].lines_regex is not None) == (REGEXES.index(regex) < 10)  # type: ignore[union-attr]
    alone = dataclasses.replace(pattern, triggers=tuple(dataclasses.replace(t, lines_regex=None)
                                                        for t in pattern.triggers))
    for start in range(len(LINES)):
        lines = LINES[start:] + LINES[:start]
        expected = [(line, lines.index(line)) for line in (m[1] for m in match_output([alone], "build", lines))]
        got = [(line, lines.index(line)) for line in (m[1] for m in match_output([pattern], "build", lines))]
        assert got == expected, (regex, lines)
