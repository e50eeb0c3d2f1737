"""On a box with two GPUs the bench is judged on the GPU it ran on, found by UUID: a foreign load
on that GPU makes it suspect, a foreign load on the other GPU does not; the GPU panel marks the
GPU the gates use. Driven by tests/two_gpu_scaffold.py (one real H200 recording placed as both
GPUs, with made-up UUIDs) for the cases the real 2×H200 capture
(test_two_gpus_recorded.py) cannot replay, such as the panel's marks."""

from __future__ import annotations

from cockpit.clock import FakeClock
from cockpit.config import Config
from cockpit.gates.device import gate_device
from cockpit.telemetry.history import History
from cockpit.telemetry.identity import cuda_ordinal_gpu
from cockpit.telemetry.recording import ReplaySampler
from cockpit.telemetry.validity import judge_window
from tests.test_gpu_panel import SIZE, app_with, polled
from tests.two_gpu_scaffold import LOAD_T0, LOAD_T1, OUR_PID, OURS_UUID, THEIRS_UUID, two_gpu_box

BOX = two_gpu_box()


def test_a_foreign_load_on_another_gpu_leaves_the_bench_comparable() -> None:
    v = judge_window(BOX.snapshots, LOAD_T0, LOAD_T1, own_pids={OUR_PID}, gpus={OURS_UUID})
    assert v.valid and v.evidence.to_json()["gpus"] == [{"gpu": 0, "uuid": OURS_UUID}]
    assert v.evidence.to_json()["foreign"] == []
    assert "power cap active for 29.8 s" in v.notes[0]


def test_a_foreign_load_on_the_pinned_gpu_makes_the_bench_suspect() -> None:
    v = judge_window(BOX.snapshots, LOAD_T0, LOAD_T1, own_pids={OUR_PID}, gpus={THEIRS_UUID})
    assert not v.valid
    assert v.reasons == ("GPU 1 (GPU-5ca1f01d): pid 7001 (train.py) is not ours and used 1002 MiB in 30 "
                         "of 30 samples",)


def test_cuda_visible_devices_1_is_judged_on_nvmls_gpu_1_not_on_gpu_0() -> None:
    # The bench ran with CUDA_VISIBLE_DEVICES=1: torch's cuda:0 is NVML's GPU 1. Taking the
    # ordinal for NVML's index watched GPU 0 and missed the foreign process.
    choice = cuda_ordinal_gpu("1", 0, BOX.gpus)
    assert choice.uuid == THEIRS_UUID and choice.exact
    assert not judge_window(BOX.snapshots, LOAD_T0, LOAD_T1, {OUR_PID}, gpus={THEIRS_UUID}).valid


def test_a_phase_summary_covers_the_gpu_the_gates_ran_on_by_uuid() -> None:
    history = History()
    for snap in BOX.snapshots:
        history.append(snap)
    assert [g["uuid"] for g in history.phase_summary(LOAD_T0, LOAD_T1)["gpus"]] == [OURS_UUID, THEIRS_UUID]
    (only,) = history.phase_summary(LOAD_T0, LOAD_T1, uuids={THEIRS_UUID})["gpus"]
    assert (only["gpu"], only["uuid"], only["power_max_w"]) == (1, THEIRS_UUID, 695.6)


async def test_the_panel_marks_the_gates_gpu_and_a_foreign_process_there(ws, session) -> None:  # type: ignore[no-untyped-def]
    clock = FakeClock()
    app = app_with(ws, session, ReplaySampler(BOX, clock), clock)
    async with app.run_test(size=SIZE) as pilot:
        app.gpu_panel.watch_gate(gate_device(Config(), "bench", {"CUDA_VISIBLE_DEVICES": "1"}))
        text = await polled(app, pilot, times=10)
        gpu0, gpu1 = text.split("GPU1 ")
        assert "gates run here" not in gpu0
        assert "pid 445 python3 1002 MiB: not ours, on a GPU the gates do not use" in gpu0
        assert "◇ gates run here" in gpu1
        assert "⚠ pid 7001 train.py 1002 MiB: not ours, bench suspect" in gpu1
        running = gate_device(Config(), "bench", {"CUDA_VISIBLE_DEVICES": "0"}, running=True)
        app.gpu_panel.watch_gate(running)
        text = "\n".join(line.plain for line in app.gpu_panel.lines)
        assert "◆ bench gate runs here" in text.split("GPU1 ")[0]
        assert "pid 7001 train.py 1002 MiB: not ours, on a GPU the gates do not use" in text
