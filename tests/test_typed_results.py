"""Gate results are typed end to end: a bench recorded before results had a schema and one from a
committed session read into the same `BenchResult`; every result type written and read back is
the same result; each gate is registered once (code, result type, view); and the TUI and the
report show one view of a run."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from rich.console import Console

from cockpit.analysis.keep import KeepResult
from cockpit.gate_lines import GATE_NAMES
from cockpit.gates.bench.result import SCHEMA, BenchResult, read_bench_result
from cockpit.gates.bench.validity import BenchValidity
from cockpit.gates.build.result import BuildResult
from cockpit.gates.catalog import GATES, measures, read_result, view_of
from cockpit.gates.correctness.result import CorrectnessResult
from cockpit.gates.env.result import EnvResult
from cockpit.gates.profile.result import ProfileResult
from cockpit.report.gate_details import details
from cockpit.report.reading import read_session
from cockpit.session.workspace import Workspace, list_sessions
from cockpit.ui.widgets.gate_results import render_result
from tests.test_bench_result import softmax_result

ROOT = Path(__file__).resolve().parent.parent
OLD_BENCH = json.loads((ROOT / "tests" / "fixtures" / "gpu" / "gates" / "gate-bench.json").read_text())["result"]
"""The attention bench as an H200 journaled it before results named a schema (1)."""
PROFILE = ROOT / "tests" / "fixtures" / "gpu" / "ncu"


def committed_runs(gate: str) -> list[object]:
    """The whole results of every finished run of `gate` in the committed example sessions."""
    ws = Workspace(ROOT / "examples")
    found = []
    for ref in list_sessions(ws):
        state = read_session(ref).state
        assert state is not None
        found += [run.result for run in state.gate_runs if run.gate == gate and run.finished]
    assert found, f"the examples hold no {gate} run"
    return found


def test_a_bench_from_before_the_schema_a_committed_one_and_todays_read_into_the_same_type() -> None:
    old = read_bench_result(OLD_BENCH)
    committed = read_bench_result(committed_runs("bench")[-1])  # its validity verdict is the redesign's
    today = read_bench_result(softmax_result())
    assert isinstance(old, BenchResult) and isinstance(committed, BenchResult) and isinstance(today, BenchResult)
    assert (old.schema, old.workload, old.baseline_label) == (1, "attention", "SDPA")
    assert committed.validity is not None and committed.validity.verdict == "comparable"
    assert (today.schema, today.workload, today.baseline_label) == (SCHEMA, "row-softmax", "torch.softmax")
    for bench in (old, committed, today):  # the same questions, answered the same way, whichever wrote it
        assert bench.speedup is not None and bench.rows and bench.validity is not None
        assert bench.vs_label(bench.baseline) == f"vs {bench.baseline_label}" and bench.baseline in bench.vs
    assert committed.keep is not None and committed.keep.action in ("keep", "revert", "baseline")


def test_an_old_bench_written_again_is_schema_2_and_says_the_same() -> None:
    old = read_bench_result(OLD_BENCH)
    assert old is not None
    again = read_bench_result(json.loads(json.dumps(old.to_json())))
    assert again is not None and again.schema == SCHEMA
    assert (again.speedup, again.vs, again.level, again.valid, again.keep, again.rows) == (
        old.speedup, old.vs, old.level, old.valid, old.keep, old.rows)


@pytest.mark.parametrize("gate", ["env", "build", "correctness", "bench", "profile"])
def test_every_committed_result_written_and_read_back_is_the_same_result(gate: str) -> None:
    for raw in committed_runs(gate) if gate != "profile" else [*committed_runs(gate), _profile()]:
        read = read_result(gate, raw)
        assert read is not None
        written = read_result(gate, json.loads(json.dumps(read.to_json())))
        # a bench from before the schema is written as schema 2: the same result otherwise
        assert written == (replace(read, schema=SCHEMA) if isinstance(read, BenchResult) else read)


def test_a_decision_and_a_validity_verdict_round_trip_on_their_own() -> None:
    keep = KeepResult("keep", "KEEP: +23 %", 0.23, 12, "attention: blocks (+23 %)", "sessions/a/results/b.json",
                      ("csrc/", "workloads/attention/"))
    assert KeepResult.from_json(keep.to_json()) == keep and keep.touched == ("csrc/", "workloads/attention/")
    assert KeepResult.from_json({"action": "merge"}) is None  # an action this cockpit does not know
    # a decision from before the bench named paths touches the first kernel's, once read from its result
    old = read_bench_result({"rows": [], "keep": {"action": "revert", "summary": "REVERT"}})
    assert old is not None and old.keep is not None and old.keep.touched == ("csrc/",)
    assert KeepResult("revert", "REVERT").touched == ()  # one written now names its paths
    validity = BenchValidity.from_json(OLD_BENCH["validity"])
    assert validity is not None and BenchValidity.from_json(validity.to_json()) == validity
    assert BenchValidity.from_json({"reasons": ["no flag"]}) is None


def test_torn_or_foreign_results_read_as_empty_never_raise() -> None:
    for junk in (None, 3, "text", [], {"rows": "no"}, {"checks": [1, None, "x"]}, {"kernels": {"a": 1}}):
        for gate in GATES:
            read_result(gate, junk)  # never raises
            view_of(gate, read_result(gate, junk))
    assert CorrectnessResult.from_json({"rows": [{"ok": True, "rel_l2": "1e-3"}]}).checks[0].rel_l2 is None
    assert EnvResult.from_json({"checks": [{"name": "gcc"}]}).checks[0].status == ""
    assert BuildResult.from_json({"errors": [{"line": "x", "message": 3}]}).errors[0].line is None
    assert ProfileResult.from_json({"kernels": [{"verdict": "?"}]}).kernels[0].verdict.bottleneck == "?"


def test_each_gate_is_registered_once_with_its_code_result_type_and_view() -> None:
    assert tuple(GATES) == GATE_NAMES  # `[gates.<name>]` in cockpit.toml names the catalog's gates
    for name, gate in GATES.items():
        assert gate.read({}) is not None or name == "bench"  # a bench that measured nothing is none
        assert callable(gate.argv) and gate.result.split(":")[1].endswith("Result")
    assert [name for name in GATES if measures(name)] == ["bench"]


def test_the_tui_and_the_report_show_one_view_of_a_bench() -> None:
    raw = committed_runs("bench")[-1]
    facts, _, (table,) = details("bench", raw)
    console = Console(width=300, record=True, color_system=None)
    console.print(render_result("bench", read_result("bench", raw)))
    shown = console.export_text()
    for fact in facts:
        assert fact.value[:80] in shown.replace("\n", " ") or fact.value[:40] in shown
    assert all(row[0] in shown for row in table.rows) and " ".join(table.columns[:3]) in " ".join(shown.split())


def _profile() -> dict[str, object]:
    from cockpit.gates.profile.gate import CLOCK_NOTE, judge_profile

    csv = next(PROFILE.glob("*.csv")).read_text()
    return judge_profile(csv, ProfileResult(report="r.ncu-rep", clock_note=CLOCK_NOTE["base"]), 0.5).result


def test_a_gate_is_one_folder_and_one_catalog_line() -> None:
    """Every folder under cockpit/gates/ holding a gate is on the catalog, and every catalog line's
    folder holds its code, result type and view by the names the line gives."""
    import importlib
    from pathlib import Path

    from cockpit.gate_lines import CATALOG

    gates = Path(importlib.import_module("cockpit.gates").__file__ or "").parent
    folders = {p.parent.name for p in gates.glob("*/gate.py")}
    assert folders == set(GATE_NAMES)
    for line in CATALOG:
        for module, name in (("gate", line.code), ("result", line.result), ("view", line.view)):
            assert hasattr(importlib.import_module(f"cockpit.gates.{line.name}.{module}"), name)
