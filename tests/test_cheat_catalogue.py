"""The cheat catalogue (workloads/cheats/): every planted cheat is caught by its own guard with its
own line, the honest twin passes, and the mutation table says which guard no cheat needs and which
cheat was caught by luck. The table logic on made-up runs; the CPU-runnable cheats through the real
correctness probe in a child (bench/cheat_catalogue.py's CPU door); the GPU's recording of the
whole mutation test, when the GPU box has made one."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from cockpit.analysis.mutation import (
    DEFEATED_IN_TESTS,
    HONEST,
    Cheat,
    Run,
    cheat_of,
    flag_lines,
    mutation,
    runs_from_json,
)
from cockpit.workload.guards import BY_NAME, GUARDS

REPO = Path(__file__).resolve().parent.parent
CHEATS = REPO / "workloads" / "cheats"
RECORDING = REPO / "tests" / "fixtures" / "gpu" / "cheats" / "mutation.json"
GUARD_GATES = {g.name: g.gate for g in GUARDS}


def runner() -> ModuleType:
    spec = importlib.util.spec_from_file_location("cheat_catalogue", REPO / "bench" / "cheat_catalogue.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def catalogue() -> list[Cheat]:
    return [cheat_of(p.stem, p.read_text(encoding="utf-8")) for p in sorted(CHEATS.glob("*.py"))
            if p.stem not in ("cheat_kit", HONEST)]


# --- the table, on made-up runs ----------------------------------------------------------------

POINTER = Cheat("cache_by_pointer", "correctness", "fresh-rounds", "a result kept", True)
ZEROS = Cheat("trivial_output", "correctness", "not-constant", "returned all zeros", True)
GUARDS_HERE = {"fresh-rounds": "correctness", "not-constant": "correctness", "inputs-unchanged": "correctness"}


def made_up(**verdicts: str) -> list[Run]:
    """Every run caught with its line, but those named `cheat__guard` (or `cheat__on`) = verdict."""
    runs = []
    for c in (POINTER, ZEROS):
        for off in (None, *GUARDS_HERE):
            verdict = verdicts.get(f"{c.name}__{off or 'on'}", "pass" if off == c.guard else "fail")
            runs.append(Run(c.name, c.gate, off, verdict, (f"FAILS: {c.expect}",)))  # type: ignore[arg-type]
    return [*runs, Run(HONEST, "correctness", None, "pass", ("all 5/5 checks correct",))]


def test_a_whole_catalogue_raises_no_flag_but_the_guard_no_cheat_needs() -> None:
    m = mutation([POINTER, ZEROS], GUARDS_HERE, made_up())
    assert m.passes_without == {"fresh-rounds": ["cache_by_pointer"], "not-constant": ["trivial_output"],
                                "inputs-unchanged": []}
    assert m.own_line == {"cache_by_pointer": True, "trivial_output": True}
    assert flag_lines(m) == ["a guard no cheat needs: inputs-unchanged (turned off, every cheat is still caught)",
                             "a guard no cheat plants: inputs-unchanged (no cheat in workloads/cheats/ names it)"]


def test_a_cheat_passing_with_every_guard_on_is_a_hole() -> None:
    m = mutation([POINTER, ZEROS], GUARDS_HERE, made_up(trivial_output__on="pass"))
    assert m.escaped == ["trivial_output"] and m.own_line["trivial_output"] is False
    assert "a cheat passing with every guard on: trivial_output" in flag_lines(m)


def test_a_cheat_still_caught_with_its_own_guard_off_was_caught_by_luck() -> None:
    m = mutation([POINTER, ZEROS], GUARDS_HERE, made_up(**{"cache_by_pointer__fresh-rounds": "fail"}))
    assert m.lucky == ["cache_by_pointer"] and m.passes_without["fresh-rounds"] == []
    assert "a cheat caught without its guard (by luck): cache_by_pointer" in flag_lines(m)
    assert "a guard no cheat needs: fresh-rounds (turned off, every cheat is still caught)" in flag_lines(m)


def test_a_cheat_caught_with_another_line_and_a_failing_honest_twin_are_said() -> None:
    runs = [r if (r.cheat, r.off) != ("trivial_output", None) else Run(r.cheat, r.gate, None, "fail", ("rel L2 2",))
            for r in made_up()]
    runs[-1] = Run(HONEST, "correctness", None, "fail", ("FAILS at M=1: 3 NaN/Inf",))
    flags = flag_lines(mutation([POINTER, ZEROS], GUARDS_HERE, runs))
    assert "a cheat caught, but not with its line: trivial_output: rel L2 2" in flags
    assert "the honest twin fails the correctness gate: FAILS at M=1: 3 NaN/Inf" in flags


def test_a_cheat_module_without_its_declaration_is_one_line_naming_what_is_missing() -> None:
    with pytest.raises(ValueError, match=r"^x: no GUARD, EXPECT = \"...\" at module level"):
        cheat_of("x", 'GATE = "bench"\n')


def test_every_cheat_names_a_guard_of_its_gate_and_every_guard_has_a_cheat_or_its_defeat_a_test() -> None:
    cheats = catalogue()
    assert len(cheats) >= 20  # the field's 18 classes, a race and right-when-checked-wrong-when-timed
    for c in cheats:
        assert c.guard in BY_NAME and BY_NAME[c.guard].gate == c.gate, c
        assert all(g in BY_NAME for g in c.also), c
    planted = {g for c in cheats for g in (c.guard, *c.also)}
    assert [g.name for g in GUARDS if g.name not in planted] == sorted(DEFEATED_IN_TESTS, key=list(BY_NAME).index)
    tests = {path.split("::")[1] for path in DEFEATED_IN_TESTS.values()}
    here = (REPO / "tests" / "test_timed_outputs.py").read_text(encoding="utf-8")
    assert all(f"def {name}(" in here for name in tests)  # each defeat's test is there to fail


# --- the CPU-runnable cheats through the real correctness probe ---------------------------------

CPU_CHEATS = [c for c in catalogue() if c.cpu_ok]


@pytest.fixture(scope="module")
def cpu_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Run]:
    """Every CPU-runnable cheat and the honest twin, every guard on, in one child (forked per cheat)."""
    jobs = [(HONEST, "correctness", None)] + [(c.name, "correctness", None) for c in CPU_CHEATS]
    runs = runner().run_on_cpu(jobs, tmp_path_factory.mktemp("cheats"))
    return {r.cheat: r for r in runs}


def test_the_honest_twin_passes_the_correctness_gate(cpu_runs: dict[str, Run]) -> None:
    honest = cpu_runs[HONEST]
    assert honest.verdict == "pass", honest.lines
    assert any(line.startswith("ghost replay: no kernel of its own to replace") for line in honest.lines)


@pytest.mark.parametrize("cheat", [pytest.param(c, id=c.name) for c in CPU_CHEATS])
def test_a_cpu_runnable_cheat_fails_the_correctness_probe_with_its_own_line(
        cheat: Cheat, cpu_runs: dict[str, Run]) -> None:
    run = cpu_runs[cheat.name]
    assert run.verdict == "fail", run.lines[0]
    assert run.says(cheat.expect), run.lines[0]


# --- the GPU box's recording of the whole mutation test -----------------------------------------

def test_the_gpu_recording_shows_each_cheat_caught_by_its_own_guard_with_its_own_line() -> None:
    """The H200's recording (2026-11-29; its correctness part at 199811a with cache_by_pointer from
    9190455 and the reference's freed buffer from the commit that planted it at its one shape; its
    bench part at 88e6b68): every planted cheat fails with its own line, the honest twin passes, and
    each guard but one lets its cheats through when it is turned off. The one: the reference's freed
    buffer is right on its first call with poisoned-reference off and is then caught by the repeat
    check (it declares it: its repeat call finds no oracle freed before it); with both off it passes
    its one test shape and is caught at the bench grid's M=4096 N=1024, where the allocator hands it
    another block: luck, which the table says (the cheat needs a bench grid it works at, and a GPU run
    to show poisoned-reference needed)."""
    recorded = json.loads(RECORDING.read_text(encoding="utf-8"))
    cheats = catalogue()
    m = mutation(cheats, GUARD_GATES, runs_from_json(recorded["runs"]))
    assert m.escaped == [] and m.honest_failed == {} and m.not_run == []
    assert {c.name: m.own_line.get(c.name) for c in cheats} == {c.name: True for c in cheats}
    assert m.lucky == ["reference_freed_buffer"] and m.unneeded == ["poisoned-reference"]
    both_off = next(r for r in recorded["runs"] if r["cheat"] == "reference_freed_buffer"
                    and r["off"] == "poisoned-reference,same-bits-on-repeat")
    assert both_off["lines"][0].startswith("FAILS at M=4096 N=1024: rel L2")
    freed_off = next(r for r in recorded["runs"] if r["cheat"] == "reference_freed_buffer"
                     and r["off"] == "poisoned-reference")
    assert "differs from itself on the same inputs" in freed_off["lines"][0]
    assert set(m.passes_without["kernel-records"]) == {"side_stream", "background_thread", "launch_only"}
    assert m.passes_without["timed-outputs"] and m.passes_without["speed-of-light"]
