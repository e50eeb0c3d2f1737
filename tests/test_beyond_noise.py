"""Keep/revert and history's regressions judge a change by the intervals the bench measured, not
a fixed margin: a 25 % gain whose intervals reach 1 is not kept, a 4 % loss inside the noise is
not a regression, and one outside it is. A config a bench from before device time found
launch-bound (its time there was the host's launch rate) never counts against a newer run's.
Times here are synthetic (a unit test of the rule); the bench's own are tested on the H100."""

from __future__ import annotations

from cockpit.analysis.keep import BenchRecord, KeepResult, decide_keep, speedup_interval
from cockpit.report.history import SessionSummary
from cockpit.report.trend import regressions

CONFIGS = ("S=1024", "S=2048", "S=4096")


def record(t: float, ms: float, spread: float, bound: frozenset[str] = frozenset(),
           fast_ms: float | None = None) -> BenchRecord:
    ours = {c: ms for c in CONFIGS} | {"S=32": fast_ms or ms}
    ci = {c: (v * (1 - spread), v * (1 + spread)) for c, v in ours.items()}
    return BenchRecord(f"s/{t:.0f}-bench", t, True, ours, "softmax", ci, bound)


def test_a_gain_over_the_bar_inside_the_noise_is_not_kept() -> None:
    before, after = record(1, 1.0, 0.15), record(2, 0.8, 0.15)  # +25 %, intervals ±15 %
    decision = decide_keep(after, [before], "tile the rows")
    assert decision.action == "revert" and "not beyond the noise" in decision.summary
    tight = decide_keep(record(2, 0.8, 0.005), [record(1, 1.0, 0.005)], "tile the rows")
    assert tight.action == "keep"
    # each decision carries its interval, through the journal too: a PR says 1.25x [1.24, 1.26]
    assert decision.interval is not None and decision.interval[0] <= 1.0
    assert tight.interval is not None and 1.0 < tight.interval[0] < 1.25 < tight.interval[1]
    assert KeepResult.from_json(tight.to_json()) == tight


def test_a_config_an_old_bench_found_launch_bound_does_not_decide_against_a_new_run() -> None:
    before = record(1, 1.0, 0.005, frozenset({"S=32"}), fast_ms=0.010)  # an old record's launch rate
    after = record(2, 0.8, 0.005, fast_ms=0.030)  # device time now: every config in its headline
    decision = decide_keep(after, [before], "x")
    assert decision.action == "keep" and decision.shared_configs == len(CONFIGS)
    interval = speedup_interval(before, after)
    assert interval is not None and interval[3] == len(CONFIGS)
    # two new runs compare on every config, the small one too
    both_new = decide_keep(record(2, 0.8, 0.005, fast_ms=0.030), [record(1, 1.0, 0.005, fast_ms=0.010)], "x")
    assert both_new.shared_configs == len(CONFIGS) + 1


def summary(i: int, ms: float, spread: float) -> SessionSummary:
    best_ms = tuple((c, ms) for c in CONFIGS)
    best_ci = tuple((c, ms * (1 - spread), ms * (1 + spread)) for c in CONFIGS) if spread else ()
    return SessionSummary(f"s{i}", "", "softmax", float(i), None, 0.0, None, 1.0, "MEDIUM", "001-bench", (),
                          "NVIDIA H100", best_ms, (), (), 1, "", best_ci)


def test_a_four_percent_loss_is_a_regression_only_outside_the_noise() -> None:
    assert regressions([summary(1, 1.0, 0.05), summary(2, 1.04, 0.05)]) == ()
    found = regressions([summary(1, 1.0, 0.005), summary(2, 1.04, 0.005)])
    assert [r.session for r in found] == ["s2"]


def test_runs_from_before_intervals_keep_the_fixed_margin() -> None:
    assert regressions([summary(1, 1.0, 0.0), summary(2, 1.02, 0.0)]) == ()
    assert [r.session for r in regressions([summary(1, 1.0, 0.0), summary(2, 1.05, 0.0)])] == ["s2"]
