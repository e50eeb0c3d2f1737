"""Triggers on real failure output: the logs under tests/fixtures/failures/ were produced on
this machine by capture.sh (g++, nvcc 13.0, NumPy 1.x headers under NumPy 2) — see its README.
The seed library must raise the right patterns on them, and nothing on unrelated output."""

from __future__ import annotations

from pathlib import Path

import pytest

from cockpit.patterns.library import SHIPPED, Pattern, load_library
from cockpit.patterns.triggers import (
    OutputTrigger,
    TriggerError,
    VerdictTrigger,
    match_output,
    match_verdict,
    output_trigger,
    trigger_from_mapping,
    trigger_text,
    trigger_to_mapping,
    verdict_trigger,
)

REPO = Path(__file__).resolve().parent.parent
FAILURES = REPO / "tests" / "fixtures" / "failures"
ENV_RUN = REPO / "tests" / "fixtures" / "gpu" / "env-run-h200.log"


@pytest.fixture(scope="module")
def seeds() -> tuple[Pattern, ...]:
    patterns, problems = load_library(SHIPPED)
    assert problems == ()
    return patterns


def log(name: str) -> list[str]:
    return (FAILURES / name).read_text(encoding="utf-8").splitlines()


def fired(seeds: tuple[Pattern, ...], gate: str, lines: list[str]) -> list[int]:
    return [p.id for p, _ in match_output(seeds, gate, lines)]


def test_an_undefined_symbol_at_import_raises_environment_validation(seeds: tuple[Pattern, ...]) -> None:
    lines = log("import-undefined-symbol.log")
    assert any("undefined symbol: _ZN3c104cuda14ExchangeDeviceEa" in line for line in lines)
    (hit,) = match_output(seeds, "build", lines)
    assert hit[0].id == 9
    assert hit[1].startswith("ImportError: ") and "undefined symbol" in hit[1]


def test_a_missing_template_instantiation_raises_the_template_pattern_too(seeds: tuple[Pattern, ...]) -> None:
    assert fired(seeds, "build", log("import-missing-instantiation.log")) == [4, 9]


def test_the_linker_naming_a_template_raises_the_template_pattern_on_the_build_gate(
    seeds: tuple[Pattern, ...]
) -> None:
    lines = log("link-missing-instantiation.log")
    assert fired(seeds, "build", lines) == [4]
    assert fired(seeds, "env", lines) == [], "that trigger listens to the build gate only"


def test_ptxas_too_much_shared_data_raises_the_shared_memory_budget(seeds: tuple[Pattern, ...]) -> None:
    lines = log("ptxas-too-much-shared.log")
    assert "uses too much shared data (0xe000 bytes, 0xc000 max)" in lines[0]
    [(pattern, line)] = match_output(seeds, "build", lines)
    assert pattern.id == 3
    assert "shared-memory budget" in pattern.title
    assert line == lines[0]


def test_numpy_1x_module_under_numpy_2_raises_environment_validation(seeds: tuple[Pattern, ...]) -> None:
    [(pattern, line)] = match_output(seeds, "env", log("numpy1x-under-numpy2.log"))
    assert pattern.id == 9
    assert line == "A module that was compiled using NumPy 1.x cannot be run in"


@pytest.mark.parametrize("gate", ["build", "env", "bench"])
def test_unrelated_output_raises_nothing(seeds: tuple[Pattern, ...], gate: str) -> None:
    assert fired(seeds, gate, log("ptxas-ok-resource-usage.log")) == []
    assert fired(seeds, gate, ENV_RUN.read_text(encoding="utf-8").splitlines()) == []
    assert fired(seeds, gate, (FAILURES / "smem_overflow.cu").read_text().splitlines()) == []
    assert fired(seeds, gate, []) == []


def test_a_stale_lock_in_the_env_gate_raises_the_silent_build_pattern(seeds: tuple[Pattern, ...]) -> None:
    lines = ENV_RUN.read_text(encoding="utf-8").splitlines()
    stale = [line.replace("PASS  stale_lock               none in",
                          "WARN  stale_lock               /root/.cache/torch_extensions/cockpit_attn/lock, 2 h 13 min old;")
             for line in lines]
    assert stale != lines
    assert fired(seeds, "env", stale) == [5]
    assert fired(seeds, "build", stale) == [], "the stale-lock line means something only from the env gate"


def test_speedup_below_half_raises_profile_first(seeds: tuple[Pattern, ...]) -> None:
    slow = match_verdict(seeds, "bench", {"speedup": 0.1})
    assert [(p.id, reason) for p, reason in slow] == [(2, "speedup 0.1 < 0.5"), (10, "speedup 0.1 < 1.0")]
    assert 2 not in [p.id for p, _ in match_verdict(seeds, "bench", {"speedup": 0.9})]
    assert match_verdict(seeds, "bench", {"speedup": 1.7}) == []


def test_verdicts_without_the_field_or_with_odd_values_raise_nothing(seeds: tuple[Pattern, ...]) -> None:
    for result in ({}, {"speedup": None}, {"speedup": "0.1"}, {"speedup": True}, {"speedup": float("nan")},
                   {"checks": []}, {"status": "pass"}):
        assert match_verdict(seeds, "bench", result) == [], result


def test_verdict_status_and_bottleneck_conditions(seeds: tuple[Pattern, ...]) -> None:
    assert [(p.id, r) for p, r in match_verdict(seeds, "env", {"status": "fail"})] == [(9, "status is fail")]
    assert match_verdict(seeds, "build", {"status": "fail"}) == [], "that condition listens to the env gate"
    assert [p.id for p, _ in match_verdict(seeds, "build", {"status": "timeout"})] == [5]
    assert [(p.id, r) for p, r in match_verdict(seeds, "build", {"silent_s": 185})] == [(5, "silent_s 185 >= 60")]
    hits = match_verdict(seeds, "profile", {"bottleneck": "MEMORY_BOUND"})
    assert [(p.id, r) for p, r in hits] == [(10, "bottleneck is MEMORY_BOUND, not none")]
    assert match_verdict(seeds, "profile", {"bottleneck": "none"}) == []


def pattern_with(*triggers: OutputTrigger | VerdictTrigger, pid: int = 1) -> Pattern:
    return Pattern(pid, "t", "operational", 0, "p", "w", "s", (), tuple(triggers), "", Path(f"{pid:02d}-t.md"))


@pytest.mark.parametrize(("condition", "result", "fires"), [
    ("speedup < 0.5", {"speedup": 0.5}, False),
    ("speedup <= 0.5", {"speedup": 0.5}, True),
    ("speedup >= 1.5", {"speedup": 2}, True),
    ("speedup > 1.5", {"speedup": 1.5}, False),
    ("speedup == 1", {"speedup": 1.0}, True),
    ("speedup != 1", {"speedup": 1.0}, False),
    ("max_abs_diff > 1e-2", {"max_abs_diff": 0.03}, True),
    ("bottleneck == memory-bound", {"bottleneck": "Memory bound"}, True),
    ("bottleneck == memory_bound", {"bottleneck": "compute-bound"}, False),
    ("throttled == true", {"throttled": True}, True),
    ("speedup < 0.5", {"speedup": "slow"}, False),
    ("bottleneck == latency", {"bottleneck": 3}, False),
])
def test_conditions_compare_numbers_and_words(condition: str, result: dict[str, object], fires: bool) -> None:
    assert bool(match_verdict([pattern_with(verdict_trigger(condition))], "any", result)) is fires


@pytest.mark.parametrize(("condition", "says"), [
    ("speedup", "is not 'FIELD OP VALUE'"),
    ("speedup << 0.5", "is not 'FIELD OP VALUE'"),
    ("Speedup < 0.5", "is not 'FIELD OP VALUE'"),
    ("speedup < fast", "'<' needs a number"),
    ("speedup < 0.5x", "neither a number nor a bare word"),
])
def test_bad_conditions_are_refused(condition: str, says: str) -> None:
    with pytest.raises(TriggerError, match=says):
        verdict_trigger(condition)


@pytest.mark.parametrize(("mapping", "says"), [
    ({"regex": "(open"}, "does not compile"),
    ({"regex": ".*"}, "matches an empty line"),
    ({"regex": ""}, "regex is empty"),
    ({"regex": 3}, "must be text"),
    ({"regex": "x", "on": "verdict"}, "on: 'verdict' is not supported"),
    ({"regex": "x", "when": "speedup < 1"}, "not both"),
    ({"regex": "x", "colour": "red"}, "unknown trigger key 'colour'"),
    ({"when": 0.5}, "must be a condition in quotes"),
    ({"when": "speedup < 1", "gate": "Build Gate"}, "is not a gate name"),
    ({"gate": "build"}, "needs regex"),
])
def test_bad_trigger_mappings_are_refused(mapping: dict[str, object], says: str) -> None:
    with pytest.raises(TriggerError, match=says):
        trigger_from_mapping(mapping)


def test_a_bad_regex_in_a_pattern_file_is_a_load_problem_not_a_crash(tmp_path: Path) -> None:
    good = (SHIPPED / "03-compile-time-config-checks.md").read_text(encoding="utf-8")
    bad = tmp_path / "03-compile-time-config-checks.md"
    bad.write_text(good.replace("'too much shared data'", "'too much (shared data'"), encoding="utf-8")
    patterns, (problem,) = load_library(tmp_path)
    assert patterns == ()
    assert "trigger: regex 'too much (shared data' does not compile" in str(problem)
    assert str(problem).startswith(f"{bad}:")


def test_triggers_round_trip_through_their_mapping() -> None:
    for trigger in (output_trigger(r"(?i)broken pipe", "build"), verdict_trigger("speedup  <   0.5"),
                    verdict_trigger("bottleneck != none", "profile")):
        assert trigger_from_mapping(trigger_to_mapping(trigger)) == trigger
    assert trigger_text(verdict_trigger("speedup < 0.5", "bench")) == "speedup < 0.5 (bench)"
    assert trigger_text(output_trigger("undefined symbol")) == "output /undefined symbol/"


def test_each_pattern_fires_once_with_its_first_line_earliest_first() -> None:
    a = pattern_with(output_trigger("beta"), output_trigger("alpha"), pid=1)
    b = pattern_with(output_trigger("alpha"), pid=2)
    lines = ["nothing", "alpha one", "beta", "alpha two"]
    assert [(p.id, line) for p, line in match_output([b, a], "build", lines)] == [
        (1, "alpha one"), (2, "alpha one")]


def test_matching_a_long_build_log_is_quick(seeds: tuple[Pattern, ...]) -> None:
    noise = [f"[{i}/20000] nvcc -c csrc/part_{i}.cu -o build/part_{i}.o -O3 -arch=sm_89" for i in range(20000)]
    lines = [*noise, *log("ptxas-too-much-shared.log")]
    assert fired(seeds, "build", lines) == [3]
