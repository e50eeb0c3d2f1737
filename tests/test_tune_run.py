"""A search started for real on a machine that cannot measure: the worker processes are pinned
to their GPU by UUID, and a worker (or the measuring child) that finds no usable GPU ends with
one line saying so, not a traceback; the progress the panel shows folds from the journal."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from cockpit.tune import events as tev
from cockpit.tune.launch import run_workers
from cockpit.tune.measure import MeasureCrashed, ProbeMeasurer
from cockpit.tune.progress import tune_progress
from cockpit.tune.target import Gpu
from tests.no_gpu import no_gpu_env
from tests.tune_fakes import start_run


def test_the_measuring_child_without_a_cuda_device_says_so_in_one_line(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    _, run = start_run(tmp_path)
    measurer = ProbeMeasurer(run.probe, tmp_path / "probe.log", env={"CUDA_VISIBLE_DEVICES": "",
                                                                     "PATH": "/usr/bin:/bin"})
    with pytest.raises(MeasureCrashed) as err:
        measurer.start()
    assert "no CUDA device: torch " in str(err.value) and f"last lines in {tmp_path / 'probe.log'}" in str(err.value)
    measurer.close()


def test_each_worker_is_pinned_by_uuid_and_one_that_cannot_measure_ends_with_one_line(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    _, run = start_run(tmp_path)
    ticks: list[int] = []
    gpu = Gpu(3, "GPU-00000000-fake-0000-0000-000000000003", "H200", "sm_90")
    codes = run_workers(run, [gpu], tmp_path / "logs", lambda: ticks.append(1))
    assert codes == [2]
    log = (tmp_path / "logs" / f"{run.run}-gpu3.log").read_text()
    assert log.splitlines()[0] == ("worker 0: GPU GPU-00000000-fake-0000-0000-000000000003 (nvidia-smi 3), "
                                   "CUDA_VISIBLE_DEVICES=GPU-00000000-fake-0000-0000-000000000003")
    last = log.strip().splitlines()[-1]
    assert last.startswith("cockpit tune worker: cannot measure on this GPU: no CUDA device: torch ")
    assert "Traceback" not in log
    from cockpit.tune.runplan import read_plan

    [(start, end)] = read_plan(run.run_dir / "plan.json").segments
    assert 0 < end - start < 600  # the time it ran is counted against the budget on --resume
    assert sys.executable  # the workers ran under this same python


def test_progress_counts_trials_rejections_and_eta_and_says_when_it_is_done() -> None:
    t0 = 1_700_000_000.0
    spaces = [{"head_dim": 64, "total": 480, "left": 136, "rejected_by": {"tile divisibility": 272}},
              {"head_dim": 128, "total": 480, "left": 70, "rejected_by": {"shared memory": 88}}]
    events = [tev.tune_started(t0, "tune-1", "H100 (sm_90)", ["GPU-a"], 900.0, 50, spaces, "LHS", False),
              tev.tune_baseline(t0 + 5, "tune-1", 64, {"value": 250.0, "lo": 249.0, "hi": 251.0}),
              tev.tune_trial(t0 + 10, "tune-1", 64, 0, "BM128 BN64 8w mb2 1st O:smem", "timed", tflops=240.0,
                             lo=239.0, hi=241.0, current=True, queued=2),
              tev.tune_trial(t0 + 20, "tune-1", 64, 1, "BM64 BN64 4w mb2 2st O:smem", "rejected", limit="spills",
                             queued=1),
              tev.tune_trial(t0 + 30, "tune-1", 64, 2, "BM128 BN128 4w mb1 2st O:smem", "timed", tflops=262.0,
                             lo=261.0, hi=263.0, queued=1),
              tev.tune_trial(t0 + 40, "tune-1", 64, 3, "BM64 BN32 4w mb1 1st O:reg", "pruned", tflops=180.0,
                             lo=170.0, hi=190.0, queued=0)]
    p = tune_progress(events)
    assert p is not None and p.running and (p.measured, p.planned) == (3, 100)
    assert p.rejected == {"tile divisibility": 272, "shared memory": 88, "spills": 1}
    [best] = p.best
    assert best.config == "BM128 BN128 4w mb1 2st O:smem" and best.beats_current
    assert round(best.vs_current or 0, 3) == round(262 / 240, 3) and round(best.vs_baseline or 0, 3) == 1.048
    assert p.activity() == "tuning: 3/100, best 1.05× FLASH"
    assert p.chart == (240.0, 262.0) and p.queued == 0
    assert p.eta_s(t0 + 60) == pytest.approx(min(900 - 60, 20 * 97))
    done = tune_progress([*events, tev.tune_finished(t0 + 900, "tune-1", "keep", "KEEP: D=64 ...")])
    assert done is not None and not done.running and done.activity() == "tuned: KEEP: D=64 ..."
    again = tune_progress([*events, tev.tune_started(t0 + 1000, "tune-2", "H100 (sm_90)", ["GPU-a"], 60.0, 5,
                                                     spaces, "LHS", False)])
    assert again is not None and again.run == "tune-2" and again.measured == 0 and again.best == ()


def test_a_search_on_a_machine_without_a_gpu_stops_before_anything_starts(tmp_path: Path) -> None:
    import subprocess

    repo = Path(__file__).resolve().parent.parent
    (tmp_path / "workloads").mkdir()
    (tmp_path / "workloads" / "attention.py").write_text((repo / "workloads" / "attention" / "attention.py").read_text())
    (tmp_path / "cockpit.toml").write_text('[workload]\nmodule = "workloads/attention.py"\n')
    out = subprocess.run([sys.executable, "-m", "cockpit", "--workspace", str(tmp_path), "tune", "--arch", "9.0"],
                         capture_output=True, text=True, timeout=120, cwd=Path(__file__).resolve().parent.parent,
                         env=no_gpu_env())
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.strip() == ("cockpit: no GPU to tune on (NVML sees none); `cockpit tune --dry-run --arch 8.9` "
                                  "examines a space without one")
    assert not (tmp_path / "sessions").exists()
    # only the workload's described manifest is kept (build/cockpit/), no tune folder or cache
    assert sorted(p.name for p in (tmp_path / "build").iterdir()) == ["cockpit"]


FAKE_PROBE = Path(__file__).parent / "fixtures" / "tune" / "fake_probe.py"


def _fake_measurer(tmp_path: Path, mode: str, timeout_s: float = 30.0) -> ProbeMeasurer:
    _, run = start_run(tmp_path)
    return ProbeMeasurer(run.probe, tmp_path / "probe.log", env={"FAKE_PROBE": mode, "PATH": "/usr/bin:/bin"},
                         timeout_s=timeout_s, probe=FAKE_PROBE)


def test_the_worker_asks_the_measuring_child_which_gpu_it_holds_and_gets_an_answer(tmp_path: Path) -> None:
    # On the H100 the first real search measured 0 of 40 trials: the worker waited for the
    # answer to a hello it never sent. The child speaks only when spoken to.
    measurer = _fake_measurer(tmp_path, "")
    try:
        assert measurer.start()["device"] == "Fake H100"
        assert measurer.correctness(Path("/x.so"), 64).detail == "64 shapes correct"
        assert measurer.timing(Path("/x.so"), 64, short=True) == [[0.5, 0.5]]
    finally:
        measurer.close()


def test_a_child_that_never_answers_is_a_crash_with_its_last_words_not_a_hang(tmp_path: Path) -> None:
    measurer = _fake_measurer(tmp_path, "silent", timeout_s=1.0)
    with pytest.raises(MeasureCrashed) as err:
        measurer.start()
    assert "no answer to hello in 1 s" in str(err.value) and "fake probe up" in str(err.value)


def test_a_child_killed_by_a_configuration_is_a_crash_and_the_next_request_starts_a_fresh_one(
        tmp_path: Path) -> None:
    measurer = _fake_measurer(tmp_path, "crash-on-check")
    try:
        first = measurer.start()["pid"]
        with pytest.raises(MeasureCrashed) as err:
            measurer.correctness(Path("/bad.so"), 64)
        assert "illegal memory access" in str(err.value)
        assert measurer.timing(Path("/ok.so"), 64, short=False) == [[0.5, 0.5]]
        assert measurer.device["pid"] != first
    finally:
        measurer.close()
