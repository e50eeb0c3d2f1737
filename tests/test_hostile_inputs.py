"""Hostile inputs are bounded (issue 34, items 5 and 6): every file of a cloned workspace is
someone else's input. A task.yml alias bomb, a trigger regex that backtracks for ever, a session
no reader could open, a cockpit.toml nested 400 deep or with an env key no process can take, a
password in a URL's query, a remote image in the objective and a 100 MB note: each ends in one
line that says what was refused and why, and the user's own text is kept."""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path

import pytest

from cockpit.cli import main
from cockpit.config import Config, ConfigError, load_config
from cockpit.errors import CockpitError
from cockpit.session.journal import read_journal
from cockpit.session.state import fold
from cockpit.session.workspace import SessionRef, Workspace, create_session, latest_open_session

GPUMODE = Path(__file__).resolve().parent.parent / "workloads" / "gpumode"
SECRET = "hunter2-\u00e9t\u00e9"


def one_line(message: str) -> str:
    assert "\n" not in message and "Traceback" not in message, message
    return message


def gpumode_workspace(tmp_path: Path, task: str) -> Path:
    """GPU MODE's vectoradd_py (and the utils.py its reference imports) with this task.yml."""
    shutil.copytree(GPUMODE, tmp_path / "gpumode")
    (tmp_path / "gpumode" / "vectoradd_py" / "task.yml").write_text(task)
    (tmp_path / "cockpit.toml").write_text('[workload]\ngpumode = "gpumode/vectoradd_py"\n')
    return tmp_path


# --- GPU MODE task.yml ---------------------------------------------------------------------------

def alias_bomb(levels: int = 7, width: int = 10) -> str:
    lines = ['a0: &a0 ["lol"]']
    for n in range(1, levels):
        lines.append(f"a{n}: &a{n} [" + ", ".join([f"*a{n - 1}"] * width) + "]")
    lines += ["tests:", f"  - {{size: 1, seed: 1, payload: *a{levels - 1}}}",
              "benchmarks:", "  - {size: 2, seed: 2}"]
    return "\n".join(lines) + "\n"


def test_a_task_yml_alias_bomb_is_refused_in_a_moment_with_one_line(tmp_path: Path) -> None:
    from cockpit.workload.gpumode_task import read_task

    ws = gpumode_workspace(tmp_path, alias_bomb())
    started = time.monotonic()
    with pytest.raises(CockpitError) as refused:
        read_task(ws / "gpumode" / "vectoradd_py")
    assert time.monotonic() - started < 5
    message = one_line(str(refused.value))
    assert "task.yml" in message and "alias" in message


def test_a_task_yml_over_the_size_cap_is_refused_with_its_size(tmp_path: Path) -> None:
    from cockpit.workload.gpumode_task import read_task

    shapes = "".join(f"  - {{size: {n}, seed: {n}}}\n" for n in range(120_000))
    ws = gpumode_workspace(tmp_path, "tests:\n" + shapes + "benchmarks:\n  - {size: 2, seed: 2}\n")
    with pytest.raises(CockpitError) as refused:
        read_task(ws / "gpumode" / "vectoradd_py")
    message = one_line(str(refused.value))
    assert "task.yml" in message and "MB" in message


def test_a_task_yml_over_128_kb_reaches_the_child_by_file(tmp_path: Path) -> None:
    from cockpit.workload.describe import workload_args, workload_manifest

    shapes = "".join(f"  - {{size: {n}, seed: {4242 + n}}}\n" for n in range(1, 8000))
    ws = gpumode_workspace(tmp_path, "tests:\n" + shapes + "benchmarks:\n  - {size: 3, seed: 3}\n")
    assert (ws / "gpumode" / "vectoradd_py" / "task.yml").stat().st_size > 128 << 10
    config = load_config(ws)
    argv = workload_args(ws, config).argv()
    assert max(len(a) for a in argv) < 4096  # nothing near the kernel's 128 KB argument limit
    manifest = workload_manifest(ws, config, sys.executable, use_cache=False)
    assert len(manifest.test_grid) == 7999


# --- pattern triggers ----------------------------------------------------------------------------

def slow_pattern(tmp_path: Path) -> Path:
    patterns = tmp_path / "patterns"
    patterns.mkdir(exist_ok=True)
    (patterns / "90-backtracks.md").write_text(
        "---\nid: 90\ntitle: Backtracks for ever\nstatus: operational\ntime_saved_min: 1\n"
        "problem: p\nwhen: w\nsolution: s\ntriggers:\n  - {regex: '(a+)+$', on: output}\n---\nbody\n")
    return patterns


def test_a_trigger_that_backtracks_for_ever_is_skipped_and_named_once(tmp_path: Path) -> None:
    from cockpit.patterns.library import load_patterns
    from cockpit.patterns.triggers import TriggerBudget, match_output

    patterns, _ = load_patterns(slow_pattern(tmp_path))
    budget = TriggerBudget()
    line = "a" * 3000 + "!"
    started = time.monotonic()
    for _ in range(3):  # three gate runs: the pattern costs its budget once, then is skipped
        hits = match_output(patterns, "build", [line] * 50 + ["undefined symbol: foo"], budget)
        assert all(p.id != 90 for p, _ in hits)
    assert time.monotonic() - started < 3
    assert list(budget.too_slow) == [90]
    message = one_line(budget.too_slow[90])
    assert "90" in message and "(a+)+$" in message and "skipped" in message


def test_history_names_a_trigger_that_backtracks_for_ever_and_finishes(
        ws: Workspace, session: SessionRef, capsys: pytest.CaptureFixture[str]) -> None:
    from cockpit.session import events as ev
    from cockpit.session.journal import JournalWriter

    slow_pattern(ws.root)
    log = session.path / "logs" / "001-build.log"
    log.parent.mkdir(exist_ok=True)
    log.write_text(("a" * 3000 + "!\n") * 20)
    writer = JournalWriter(session.journal)
    writer.append(ev.event(ev.GATE_STARTED, 1_795_000_100, run_id="001-build", gate="build", pid=1,
                           log=str(log.relative_to(ws.root))))
    writer.append(ev.event(ev.GATE_FINISHED, 1_795_000_200, run_id="001-build", gate="build",
                           status="fail", summary="x", duration_s=1.0, exit_code=1, result={}))
    writer.close()
    (ws.root / "patterns" / "90-backtracks.md").write_text(
        (ws.root / "patterns" / "90-backtracks.md").read_text().replace("solution: s\n", "solution: s\n"
                                                                         "evidence: []\n"))
    started = time.monotonic()
    assert main(["--workspace", str(ws.root), "history"]) == 0
    assert time.monotonic() - started < 10
    err = capsys.readouterr().err.splitlines()
    named = [line for line in err if "(a+)+$" in line]
    assert len(named) == 1 and "skipped" in named[0]


# --- sessions nothing could open -----------------------------------------------------------------

def session_with(ws: Workspace, first: dict[str, object], *rest: dict[str, object]) -> SessionRef:
    folder = ws.sessions_dir / "20261123-0915-c0de-hostile"
    folder.mkdir(parents=True)
    (folder / "journal.jsonl").write_text("".join(json.dumps(e) + "\n" for e in (first, *rest)))
    (folder / "SESSION.md").write_text("# my notes\n")
    return SessionRef(folder.name, None, folder)


def started(**fields: object) -> dict[str, object]:
    return {"t": 1_795_000_000, "type": "session_started", "id": "20261123-0915-c0de-hostile",
            "objective": "hostile", "template": "optimize",
            "phases": [{"name": "Environment", "budget_s": 600.0}, {"name": "Baseline", "budget_s": 1200.0}],
            "gpu_cost_per_hour": 0.0, **fields}


def test_phase_budgets_of_1e308_read_as_no_budget_with_one_line(ws: Workspace, capsys) -> None:
    from cockpit.session import timer

    ref = session_with(ws, started(phases=[{"name": "Environment", "budget_s": 1e308},
                                           {"name": "Baseline", "budget_s": 1e308}]),
                       {"t": 1_795_000_000, "type": "phase_started", "phase": "Environment"})
    state = fold(read_journal(ref.journal).events)
    assert [p.budget_s for p in state.phases] == [0.0, 0.0]
    assert len(state.refused) == 1 and "budget" in one_line(state.refused[0])
    view = timer.timer_view(state, 1_795_000_300.0, 0.8)
    assert view.total_budget_s == 0.0
    assert main(["--workspace", str(ws.root), "status"]) == 0
    assert "ENVIRONMENT" in capsys.readouterr().out


async def test_the_tui_opens_a_session_of_1e308_budgets_and_says_so(ws: Workspace, clock) -> None:
    from cockpit.ui.app import CockpitApp

    ref = session_with(ws, started(phases=[{"name": "Environment", "budget_s": 1e308},
                                           {"name": "Baseline", "budget_s": 1e308}]),
                       {"t": 1_795_000_000, "type": "phase_started", "phase": "Environment"})
    app = CockpitApp(ws, Config(), ref, clock=clock, tick_s=3600, typing_gap_s=0)
    toasts: list[str] = []
    app.notify = lambda message, **kw: toasts.append(message)  # type: ignore[method-assign]
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        assert app.live is not None and app.live.state.id == ref.id
    assert any("budget" in t and "1e+308" in t for t in toasts)


def test_a_status_at_t_1e17_is_skipped_with_its_line_and_the_session_opens(ws: Workspace, capsys) -> None:
    ref = session_with(ws, started(),
                       {"t": 1_795_000_000, "type": "phase_started", "phase": "Environment"},
                       {"t": 1e17, "type": "status", "text": "from the far future", "auto": False},
                       {"t": 1_795_000_100, "type": "status", "text": "still here", "auto": False})
    read = read_journal(ref.journal)
    assert [p.line for p in read.problems] == [3]
    assert "time" in one_line(read.problems[0].describe(ref.journal))
    assert [s.text for s in fold(read.events).statuses] == ["still here"]
    assert main(["--workspace", str(ws.root), "status"]) == 0
    assert "ENVIRONMENT" in capsys.readouterr().out


def test_an_objective_of_69_kb_is_refused_at_new_with_its_size(tmp_path: Path, capsys) -> None:
    objective = "make it fast " * 5300
    assert main(["--workspace", str(tmp_path), "new", objective]) == 2
    err = one_line(capsys.readouterr().err.strip())
    assert "68,899 characters" in err and "SESSION.md" in err
    assert not (tmp_path / "sessions").exists() or not any((tmp_path / "sessions").iterdir())


def test_a_cloned_session_with_a_69_kb_objective_opens_shown_cut(ws: Workspace, capsys) -> None:
    objective = "make it fast " * 5300
    ref = session_with(ws, started(objective=objective),
                       {"t": 1_795_000_000, "type": "phase_started", "phase": "Environment"})
    assert (latest := latest_open_session(ws)) is not None and latest.id == ref.id
    state = fold(read_journal(ref.journal).events)
    assert len(state.objective) < 5000 and state.objective.startswith("make it fast make it fast")
    assert any("objective" in one_line(r) for r in state.refused)
    assert main(["--workspace", str(ws.root), "status"]) == 0
    assert main(["--workspace", str(ws.root), "new", "another"]) == 2  # the open one is found
    assert ref.id in capsys.readouterr().err
    assert objective in ref.journal.read_text()  # the user's text is kept


async def test_the_tui_names_a_session_whose_first_line_was_cut(ws: Workspace, clock) -> None:
    from cockpit.ui.app import CockpitApp

    ref = create_session(ws, Config(), "cut in its first line", "optimize", clock.now())
    ref.journal.write_bytes(ref.journal.read_bytes()[:40])
    assert latest_open_session(ws) is None
    app = CockpitApp(ws, Config(), None, clock=clock, tick_s=3600, typing_gap_s=0)
    toasts: list[str] = []
    app.notify = lambda message, **kw: toasts.append(message)  # type: ignore[method-assign]
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
    named = [t for t in toasts if ref.id in t]
    assert len(named) == 1 and "first line" in one_line(named[0])


# --- cockpit.toml ---------------------------------------------------------------------------------

def test_inline_tables_nested_400_deep_are_one_line(tmp_path: Path, capsys) -> None:
    (tmp_path / "cockpit.toml").write_text("x = " + "{ a = " * 400 + "1" + " }" * 400 + "\n")
    with pytest.raises(ConfigError) as refused:
        load_config(tmp_path)
    assert "nested" in one_line(str(refused.value))
    assert main(["--workspace", str(tmp_path), "status"]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


@pytest.mark.parametrize("table", ['{ "A=B" = "x" }', '{ "A\\u0000B" = "x" }', '{ "" = "x" }',
                                   '{ A = "x\\u0000y" }'])
def test_an_env_key_no_process_can_take_is_refused_at_load(tmp_path: Path, table: str) -> None:
    (tmp_path / "cockpit.toml").write_text(f"[gates.build]\nenv = {table}\n")
    with pytest.raises(ConfigError) as refused:
        load_config(tmp_path)
    assert "cockpit.toml:2: gates.build.env" in one_line(str(refused.value))


async def test_a_crash_screen_never_prints_the_environment(ws: Workspace, session: SessionRef, clock,
                                                           capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from cockpit.ui.app import CockpitApp

    monkeypatch.setenv("AAA_PGPASSWORD", SECRET)  # first in the sorted environment
    app = CockpitApp(ws, Config(), session, clock=clock, tick_s=3600, typing_gap_s=0)

    def crash() -> None:
        env = dict(sorted(os.environ.items()))  # what a gate hands its child
        raise ValueError(f"illegal environment variable name ({len(env)} names)")

    with pytest.raises(ValueError):
        async with app.run_test(size=(140, 40)) as pilot:
            app.call_later(crash)
            await pilot.pause()
    shown = capsys.readouterr().err
    assert "ValueError" in shown and "illegal environment variable name" in shown
    assert SECRET not in shown and "PGPASSWORD" not in shown


# --- secrets ----------------------------------------------------------------------------------------

def test_a_password_in_the_storage_url_s_query_is_never_printed(tmp_path: Path) -> None:
    from cockpit.config.tune import redact

    url = f"postgres://kernel@db:5432/tune?sslmode=require&password={SECRET}"
    assert SECRET not in redact(url) and "sslmode=require" in redact(url)
    assert "password=***" in redact(url)
    (tmp_path / "cockpit.toml").write_text(f'[tune]\nstorage = "{url}"\n')
    with pytest.raises(ConfigError) as refused:
        load_config(tmp_path)
    assert SECRET not in str(refused.value) and "postgresql://" in str(refused.value)


def test_a_database_error_that_echoes_the_query_s_password_is_masked() -> None:
    pytest.importorskip("optuna")
    import sqlalchemy.exc

    from cockpit.tune.storage import db_error

    url = f"postgresql://kernel@db:5432/tune?password={SECRET}"
    exc = sqlalchemy.exc.OperationalError("connect", {}, Exception(f'could not connect with "{SECRET}"'))
    error = db_error(exc, url)
    assert error is not None and SECRET not in str(error) and "***" in str(error)


# --- the report's leaks (item 6) -------------------------------------------------------------------

def test_a_remote_image_in_the_objective_is_text_in_pr_md(tmp_path: Path, capsys) -> None:
    assert main(["--workspace", str(tmp_path), "new", "speed ![x](https://evil/track.png) up"]) == 0
    capsys.readouterr()
    assert main(["--workspace", str(tmp_path), "export", "--format", "pr"]) == 0
    pr = Path(capsys.readouterr().out.strip()).read_text()
    assert "![x](" not in pr and "](https://evil" not in pr
    assert pr.startswith("### speed \\!\\[x\\]\\(https\\://evil/track.png\\) up\n")


def test_a_100_mb_note_is_cut_in_the_report_with_a_count(ws: Workspace, session: SessionRef) -> None:
    from cockpit.report.build import build_report
    from cockpit.session import events as ev
    from cockpit.session.journal import JournalWriter

    big = "x" * (100 << 20)
    session.log_md.write_text("# notes\n" + big + "\n")
    writer = JournalWriter(session.journal)
    writer.append(ev.event(ev.NOTE, 1_795_000_100, text="n" * (5 << 20)))
    writer.close()
    report = build_report(ws, session, now=1_795_000_600.0)
    assert report.notes is not None and len(report.notes) < 1 << 20
    assert "104,857,6" in report.notes.splitlines()[-1] or "characters" in report.notes.splitlines()[-1]
    assert "cut" in report.notes.splitlines()[-1]
    assert len(report.journal_notes[-1].text) < 10_000 and "cut" in report.journal_notes[-1].text
    assert session.log_md.stat().st_size > 100 << 20  # the notes themselves are kept whole
