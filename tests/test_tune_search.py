"""The search as an engineer runs it, on a GPU stand-in whose fastest configuration is known:
the current configuration first, a spread-out seed, then TPE; slow configurations pruned after
a short look, wrong ones rejected before any timing, a crash recorded and survived; every step
in the session journal; a study cut off mid-write resumes where it stopped; two workers share
one study without measuring anything twice."""

from __future__ import annotations

import threading
from pathlib import Path

import optuna
import pytest

from cockpit.session.journal import Event, read_journal
from cockpit.tune.launch import resume_run
from cockpit.tune.progress import tune_progress
from cockpit.tune.runplan import read_plan
from cockpit.tune.search import search
from cockpit.tune.study import measured, open_study, params_of, suggest
from tests.tune_fakes import FakeGpu, context, model_tflops, start_run


def study_of(run):  # type: ignore[no-untyped-def]
    head = run.head_dims[0]
    return open_study(run.journal, head.head_dim, head.options, head.current, len(head.seeds), run.prune_slower)


def test_the_search_starts_from_the_current_configuration_then_the_seed_then_tpe(tmp_path: Path) -> None:
    config, run = start_run(tmp_path)
    head = run.head_dims[0]
    assert head.seeds[0] == head.current and len(set(head.seeds)) == config.tune.seed_trials
    assert all(p in head.feasible for p in head.seeds[1:])
    assert "Latin hypercube" in run.seed_how
    gpu, recorded = FakeGpu(list(head.shapes)), []
    done = search(study_of(run), context(run, gpu, recorded.append))
    trials = study_of(run).get_trials()
    assert done == len(measured(trials)) >= config.tune.trials
    first = [params_of(t) for t in sorted(trials, key=lambda t: t.number)][: len(head.seeds)]
    assert first == list(head.seeds)  # the enqueued seed comes first, in order
    checked = [label for op, label in gpu.calls if op == "check"]
    assert len(checked) == len(set(checked)), "a configuration was measured twice"
    best = max((t for t in trials if t.value is not None), key=lambda t: t.value)
    current = next(t for t in trials if t.user_attrs.get("current"))
    assert best.value > current.value  # TPE found better than the hand-picked defaults
    assert model_tflops(params_of(best)) > model_tflops(head.current)


def test_slow_configurations_are_pruned_after_the_short_look_and_never_timed_fully(tmp_path: Path) -> None:
    _, run = start_run(tmp_path)
    gpu, recorded = FakeGpu(list(run.head_dims[0].shapes)), []
    search(study_of(run), context(run, gpu, recorded.append))
    pruned = [e for e in recorded if e.get("outcome") == "pruned"]
    assert pruned, "nothing was pruned"
    full = {label for op, label in gpu.calls if op == "full"}
    assert not full & {e["config"] for e in pruned}
    trials = study_of(run).get_trials(states=(optuna.trial.TrialState.PRUNED,))
    assert all(t.user_attrs["short"]["hi"] < max(x.value for x in study_of(run).get_trials()
                                                  if x.value is not None) for t in trials)


def test_a_wrong_configuration_is_rejected_before_timing_and_a_crash_is_survived(tmp_path: Path) -> None:
    toml = (Path(__file__).parent / "tune_fakes.py").read_text().split('TOML = """')[1].split('"""')[0]
    toml = toml.replace("trials = 14", "trials = 40").replace("budget_min = 5", "budget_min = 30")
    _, run = start_run(tmp_path, toml + "\n[tune.space]\nblock_m = [64, 128]\nblock_n = [16, 64]\n"
                       "warps = [4]\nmin_blocks = [1]\nstages = [1, 2]\no_smem = [true, false]\nq_regs = [true]\n")
    gpu, recorded = FakeGpu(list(run.head_dims[0].shapes)), []
    search(study_of(run), context(run, gpu, recorded.append))
    outcomes = {e["config"]: e for e in recorded if e["type"] == "tune_trial"}
    wrong = outcomes["BM128 BN16 4w mb1 1st O:reg"]
    assert wrong["outcome"] == "incorrect" and "rel L2" in wrong["detail"]
    assert ("short", "BM128 BN16 4w mb1 1st O:reg") not in gpu.calls  # never timed
    crashed = [e for e in outcomes.values() if e["outcome"] == "crashed"]
    assert crashed and "illegal memory access" in crashed[0]["detail"] and gpu.restarts == len(crashed)
    refused = outcomes["BM128 BN64 4w mb1 2st O:reg"]
    assert refused["outcome"] == "failed" and refused["detail"].startswith("ours did not run")
    assert len(outcomes) == 16 + 1, "the search stopped before the space (and the current) was done"


def test_every_trial_is_in_the_session_journal_and_folds_into_the_panels_progress(tmp_path: Path) -> None:
    from cockpit.session.journal import JournalWriter
    from cockpit.tune import events as tev

    _, run = start_run(tmp_path)
    run.session_journal.parent.mkdir(parents=True, exist_ok=True)
    writer = JournalWriter(run.session_journal)
    writer.append(tev.tune_started(1_700_000_000.0, run.run, run.target, ["GPU-fake"], run.budget_s, run.trials,
                                   [{"head_dim": 64, "total": 480, "left": 136,
                                     "rejected_by": {"tile divisibility": 272, "registers": 64}}],
                                   run.seed_how, False))
    search(study_of(run), context(run, FakeGpu(list(run.head_dims[0].shapes)), writer.append))
    events = read_journal(run.session_journal).events
    progress = tune_progress(events)
    assert progress is not None and progress.run == run.run
    assert progress.measured == len(measured(study_of(run).get_trials()))
    assert progress.planned == run.trials
    [best] = progress.best
    assert best.vs_current is not None and best.vs_current > 1 and best.vs_baseline is not None
    assert progress.activity().startswith(f"tuning: {progress.measured}/{run.trials}, best ")
    assert progress.activity().endswith("× FLASH")
    assert progress.rejected["tile divisibility"] == 272 and len(progress.chart) == progress.outcomes["timed"]
    assert all(len(str(e)) < 600 for e in events), "journal events must stay small"


def test_a_search_cut_off_mid_write_resumes_where_it_stopped(tmp_path: Path) -> None:
    _, run = start_run(tmp_path)
    gpu = FakeGpu(list(run.head_dims[0].shapes))
    calls = iter(range(10**6))
    ticks = lambda: 1_700_000_100.0 + next(calls)  # noqa: E731
    study = study_of(run)
    search(study, context(run, gpu, lambda e: None, deadline=1_700_000_100.0 + 25, clock=ticks))
    before = len(measured(study_of(run).get_trials()))
    assert 0 < before < run.trials
    # A trial asked and being measured when the process died mid-write (kill -9).
    dying = study_of(run).ask()
    lost = suggest(dying, run.head_dims[0].options)
    dying.set_user_attr("config", lost.label)
    data = run.journal.read_bytes()
    run.journal.write_bytes(data[: len(data) - 17])
    # Appended to as it is, the torn line would corrupt the study for good:
    spoiled = tmp_path / "spoiled.log"
    spoiled.write_bytes(run.journal.read_bytes())
    head = run.head_dims[0]
    with pytest.raises(ValueError):  # JSONDecodeError: the next write was glued onto the torn line
        open_study(spoiled, 64, head.options, head.current, 1, 0.1).enqueue_trial(head.current.as_dict())
        open_study(spoiled, 64, head.options, head.current, 1, 0.1).get_trials()
    # Room for the seeds still queued before it and for the interrupted configuration itself.
    resumed, notes = resume_run(run.run_dir, None, run.trials + 8)
    assert any("cut off mid-line" in n for n in notes)
    assert read_plan(run.run_dir / "plan.json").run == resumed.run
    assert any("1 configurations interrupted mid-measurement, queued again" in n for n in notes)
    assert study_of(run).get_trials()[dying.number].state == optuna.trial.TrialState.FAIL
    search(study_of(run), context(resumed, gpu, lambda e: None))
    after = study_of(run).get_trials()
    assert len(measured(after)) >= resumed.trials > before
    timed = [params_of(t) for t in measured(after)]
    assert len(timed) == len(set(timed)), "the resumed search measured a configuration again"
    assert lost in timed or lost not in run.head_dims[0].feasible


def test_two_workers_share_one_study_without_measuring_a_configuration_twice(tmp_path: Path) -> None:
    _, run = start_run(tmp_path)
    gpu = FakeGpu(list(run.head_dims[0].shapes), delay_s=0.05)
    recorded: list[Event] = []
    results: list[int] = []

    def worker() -> None:
        results.append(search(study_of(run), context(run, gpu, recorded.append)))

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert len(results) == 2 and all(n > 0 for n in results)
    timed = [params_of(t) for t in measured(study_of(run).get_trials())]
    assert len(timed) == len(set(timed)) and run.trials <= len(timed) <= run.trials + 2
