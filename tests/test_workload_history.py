"""A workspace that benchmarks two workloads: a row softmax's bench reads "vs torch.softmax" in
the gate's panel, its report and `cockpit history`; the history keeps the attention sessions and
the softmax sessions apart (each table against its own references, each trend and regression
within its workload, the History screen one workload at a time); and the attention sessions read
as they always did."""

from __future__ import annotations

import json
from dataclasses import replace
from types import SimpleNamespace

import pytest
from rich.console import Console

from cockpit.cli import main
from cockpit.clock import FakeClock
from cockpit.config import Config
from cockpit.gates.bench.result import BenchResult, read_bench_result
from cockpit.gates.catalog import read_result
from cockpit.report.build import build_report
from cockpit.report.gate_details import details
from cockpit.report.history import SessionSummary, previous_in_workload, resolve_workloads
from cockpit.report.markdown import render_markdown
from cockpit.session.workspace import SessionRef, Workspace, list_sessions
from cockpit.ui.app import CockpitApp
from cockpit.ui.controllers.decisions import profile_question
from cockpit.ui.screens.history_screen import HistoryScreen
from cockpit.ui.widgets.gate_results import gate_markdown, render_result
from tests.test_bench_result import softmax_result
from tests.test_report_history import BLOCKS, DAY, FIRST, bench, session, table
from tests.waiting import until


def bench_details(result: dict) -> tuple:
    return details("bench", result)


def read(result: dict) -> BenchResult:
    bench = read_bench_result(result)
    assert bench is not None
    return bench


def text_of(renderable: object) -> str:
    console = Console(width=200, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


@pytest.fixture
def two_workloads(ws: Workspace) -> dict[str, SessionRef]:
    """Attention, softmax, attention, a slower softmax, then a session that only built."""
    return {
        "a1": session(ws, "attention baseline", DAY, 60, [("bench", "warn", bench(FIRST, True))]),
        "s1": session(ws, "softmax baseline", DAY + 86400, 60, [("bench", "pass", softmax_result())]),
        "a2": session(ws, "attention blocks", DAY + 2 * 86400, 60, [("bench", "warn", bench(BLOCKS, True))]),
        "s2": session(ws, "softmax, one warp per row", DAY + 3 * 86400, 30,
                      [("bench", "pass", softmax_result(scale=0.8))]),
        "n": session(ws, "softmax: rebuild only", DAY + 4 * 86400, 20),
    }


def test_the_gate_panel_states_a_softmax_bench_against_its_own_references() -> None:
    shown = text_of(render_result("bench", read_result("bench", softmax_result()), [1.26]))
    assert shown.lstrip().startswith("1.26x  vs torch.softmax")  # the headline leads
    header = next(line for line in shown.splitlines() if line.split()[:1] == ["config"]).split()
    assert header == ["config", "ours", "torch.softmax", "torch.compile", "vs", "torch.softmax", "vs",
                      "torch.compile", "GB/s", "%", "peak"]  # no clocks recorded: no clock column
    assert "M=4096 N=1024 fp16" in shown and "1.25x" in shown and "SDPA" not in shown
    assert "1.26x vs torch.softmax (geometric mean), ahead of the baseline" in shown and "runs: █1.26x" in shown
    assert profile_question(read(softmax_result(scale=0.3))).startswith("0.38x vs torch.softmax is CRITICAL")
    log = gate_markdown(SimpleNamespace(gate="bench", status="pass", summary="s", duration_s=1.0,
                                        result=softmax_result()))
    assert "| config | ours ms | torch.softmax ms | speedup |" in log
    assert "| M=4096 N=1024 fp16 | 0.020 | 0.025 | 1.25x |" in log


def test_the_attention_bench_reads_as_it_always_did() -> None:
    assert profile_question(read({**FIRST, "geomean_speedup": 0.4})).startswith("0.40x vs SDPA is CRITICAL")
    shown = text_of(render_result("bench", read_result("bench", FIRST)))
    assert shown.lstrip().startswith("0.65x  vs SDPA")  # the headline leads
    assert next(line for line in shown.splitlines() if line.split()[:1] == ["config"]).split() == ["config", "ours", "SDPA", "FLASH", "cuDNN", "vs", "SDPA", "vs",
                                             "FLASH", "TFLOP/s"]
    facts, _, (configs,) = bench_details(FIRST)
    assert ("speedup", "0.65x vs SDPA (geometric mean), behind the baseline: one fix at a time") in [(f.label, f.value) for f in facts]
    assert "workload" not in [f.label for f in facts]  # the result does not name one
    assert configs.columns == ("config", "ours", "SDPA", "FLASH", "cuDNN", "vs SDPA", "vs FLASH", "TFLOP/s")


def test_the_report_details_state_the_softmax_speedup_against_torch_softmax() -> None:
    facts, _, (configs,) = bench_details(softmax_result())
    said = {f.label: f.value for f in facts}
    assert said["workload"] == "row-softmax (workloads/softmax/softmax.py)"
    assert said["speedup"] == "1.26x vs torch.softmax (geometric mean), ahead of the baseline"
    assert configs.columns == ("config", "ours", "torch.softmax", "torch.compile", "vs torch.softmax",
                               "vs torch.compile", "GB/s", "% peak")
    assert configs.rows[0] == ("M=4096 N=1024 fp16", "0.0200", "0.0250", "0.0180", "1.25x", "0.90x",
                               "839", "40")


def test_history_keeps_each_workload_apart(ws: Workspace, two_workloads: dict[str, SessionRef]) -> None:
    ids = {k: r.id for k, r in two_workloads.items()}
    t = table(ws)
    assert [(w.workload, w.sessions) for w in t.workloads] == [
        ("attention", (ids["a1"], ids["a2"])), ("row-softmax", (ids["s1"], ids["s2"], ids["n"]))]
    attention, softmax = t.workloads
    assert attention.references == (("sdpa", "SDPA"), ("flash", "FLASH"))
    assert softmax.references == (("torch.softmax", "torch.softmax"), ("torch.compile", "torch.compile"))
    # the latest session only rebuilt: it is compared with the softmax session before it, not a2
    assert t.vs_previous is softmax.vs_previous and t.vs_previous is not None
    assert t.vs_previous.previous_id == ids["s2"]
    assert [(c.metric, c.this, c.previous) for c in t.vs_previous.rows[2:4]] == [
        ("best valid speedup vs torch.softmax", "—", "1.01x"), ("best valid run vs torch.compile", "—", "0.74x")]
    assert attention.vs_previous is not None and attention.vs_previous.previous_id == ids["a1"]
    assert attention.vs_previous.rows[2].metric == "best valid speedup vs SDPA"
    # 25 % slower than the softmax session before it: a regression; the attention sessions
    # around it are never compared with it
    [regression] = t.regressions
    assert (regression.session, regression.earlier, regression.slower) == (ids["s2"], ids["s1"], 0.25)
    assert f"attention: best valid speedup vs SDPA: 0.65x in {ids['a1']} → 0.67x in {ids['a2']}" in t.overall[1]
    assert (f"row-softmax: best valid speedup vs torch.softmax: 1.26x in {ids['s1']} → 1.01x in {ids['s2']}; "
            f"best 1.26x in {ids['s1']}") in t.overall


def test_cockpit_history_prints_every_session_then_each_workloads_trend(
        ws: Workspace, two_workloads: dict[str, SessionRef], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--workspace", str(ws.root), "history", "--wide"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:3] == ["OUTCOME", "DATE", "DURATION"]
    rows = out[1:6]  # oldest first, each workload's sessions as they came, each naming its workload
    session, workload = out[0].index("SESSION"), out[0].index("WORKLOAD")
    assert [r[session:].split()[0] for r in rows] == [two_workloads[k].id for k in ("a1", "s1", "a2", "s2", "n")]
    assert [r[workload:].split()[0] for r in rows] == ["attention", "row-softmax", "attention", "row-softmax", "—"]
    attention, softmax = out.index("WORKLOAD attention: 2 sessions"), out.index("WORKLOAD row-softmax: 3 sessions")
    assert attention < softmax  # the workload worked on last nearest the prompt
    assert any(line.startswith("trend: best valid run vs torch.compile:") for line in out[softmax:])
    assert out[-1].startswith(f"REGRESSION {two_workloads['s2'].id}: best valid run 25% slower than "
                              f"{two_workloads['s1'].id}'s over 3 shared configs on NVIDIA H100 80GB HBM3")
    assert main(["--workspace", str(ws.root), "history", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [w["workload"] for w in data["workloads"]] == ["attention", "row-softmax"]
    assert [s["workload"] for s in data["sessions"]] == ["attention", "row-softmax", "attention",
                                                         "row-softmax", None]


def test_the_softmax_report_is_compared_with_the_softmax_session_before_it(
        ws: Workspace, two_workloads: dict[str, SessionRef]) -> None:
    report = build_report(ws, two_workloads["s2"], now=DAY + 10 * 86400)
    assert report.outcome.text == ("1.01x vs torch.softmax over 3 configs (ahead of the baseline), 0.74x vs "
                                   "torch.compile, run 001-bench; no interval: the bench recorded none")
    assert (report.outcome.workload, report.outcome.baseline) == ("row-softmax", "torch.softmax")
    assert [(v.reference, v.label) for v in report.outcome.vs] == [("torch.softmax", "torch.softmax"),
                                                                   ("torch.compile", "torch.compile")]
    assert report.comparison is not None and report.comparison.previous_id == two_workloads["s1"].id
    assert report.comparison.rows[2].metric == "best valid speedup vs torch.softmax"
    md = render_markdown(report, None, None)
    assert "**speedup:** 1.01x vs torch.softmax \\(geometric mean\\), ahead of the baseline" in md and "SDPA" not in md
    attention = build_report(ws, two_workloads["a2"], now=DAY + 10 * 86400)
    assert attention.comparison is not None and attention.comparison.previous_id == two_workloads["a1"].id
    assert attention.outcome.text.startswith("0.67x vs SDPA over 56 configs (behind the baseline: one fix at a "
                                             "time), 0.95x vs FLASH")


def summary(i: int, workload: str | None) -> SessionSummary:
    return SessionSummary(f"s{i}", "", workload, float(i), None, 0.0, None, None, None, None, (), None, (),
                          (), (), 0, "")


@pytest.mark.parametrize("workloads, resolved", [
    ([None, None], [None, None]),
    ([None, "softmax", None, "attention", None], ["softmax", "softmax", "softmax", "attention", "attention"]),
    (["attention", None, "softmax"], ["attention", "attention", "softmax"]),
])
def test_a_session_without_a_bench_is_on_the_workload_of_the_one_before_it(
        workloads: list[str | None], resolved: list[str | None]) -> None:
    sessions = [summary(i, w) for i, w in enumerate(workloads)]
    assert resolve_workloads(sessions) == resolved
    # the report finds the same previous session, reading back no further than it must
    for i, s in enumerate(sessions):
        same = [e for e, w in zip(sessions[:i], resolved[:i], strict=True) if w == resolved[i]]
        found = previous_in_workload(s, reversed(sessions[:i]))
        assert found == (same[-1] if same else None), (workloads, i)


def test_previous_in_workload_reads_no_further_than_the_session_it_finds() -> None:
    sessions = [summary(0, "softmax"), summary(1, "attention"), summary(2, None), summary(3, "attention")]
    read: list[str] = []

    def newest_first() -> object:
        for s in reversed(sessions[:3]):
            read.append(s.id)
            yield s

    assert previous_in_workload(sessions[3], newest_first()) == sessions[2]  # type: ignore[arg-type]
    assert read == ["s2", "s1"]
    assert previous_in_workload(replace(sessions[3], workload="softmax"), reversed(sessions[:3])) == sessions[0]


async def test_the_history_screen_shows_one_workload_at_a_time(ws: Workspace,
                                                              two_workloads: dict[str, SessionRef]) -> None:
    ref = list_sessions(ws)[-1]
    app = CockpitApp(ws, Config(status_every_s=10**6), ref, clock=FakeClock(DAY + 10 * 86400),
                     tick_s=3600, gpu_every_s=0, typing_gap_s=0)
    async with app.run_test(size=(180, 48)) as pilot:
        await pilot.press("H")
        screen = app.screen
        assert isinstance(screen, HistoryScreen)
        await until(pilot, lambda: screen.table is not None, "the History screen's sessions, read")
        await pilot.pause()
        grid = screen.query_one("DataTable")

        def columns() -> list[str]:
            return [str(c.label) for c in grid.ordered_columns]  # type: ignore[attr-defined]

        title = str(screen.query_one("#title").render())
        assert "3 sessions of workload row-softmax (2/2, w: next)" in title
        assert columns()[1:3] == ["vs torch.softmax", "vs torch.compile"] and grid.row_count == 3
        assert "REGRESSION" in str(screen.query_one("#regressions").render())
        await pilot.press("w")
        assert "2 sessions of workload attention (1/2, w: next)" in str(screen.query_one("#title").render())
        assert columns()[1:3] == ["vs SDPA", "vs FLASH"] and grid.row_count == 2
        assert "REGRESSION" not in str(screen.query_one("#regressions").render())
