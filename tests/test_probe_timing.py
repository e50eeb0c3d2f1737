"""The probes' timing pieces every workload's bench, tune and profile share (probes/batch_timing.py)
and the GPU watch beside them (probes/gpu_watch.py): the block plan that times every implementation
at its own settled clock, each block placed on the wall clock, and the watch that finds the GPU
torch runs on in NVML by UUID or PCI bus id, never by ordinal. No GPU needed."""

from __future__ import annotations

import pytest
import torch

from cockpit.probes.gpu_watch import GpuWatch, device_identity, nvml_handle
from cockpit.probes.timing_pieces import block_plan, block_spans, percentile

from .waiting import wait_until

H200_0 = "GPU-bb9154e7-4d32-33d5-30c4-d6bc4498ea20"
H200_1 = "GPU-5f0e2c71-9a8b-4c3d-8e2f-1a2b3c4d5e6f"


def test_percentiles_interpolate_between_samples() -> None:
    assert percentile([1, 2, 3, 4, 5], 0.5) == 3
    assert percentile([1, 2, 3, 4, 5], 0.2) == pytest.approx(1.8)


def test_each_implementation_is_timed_in_blocks_after_settling_at_its_own_clock() -> None:
    # An H200 at its power cap: cuDNN's clock keeps falling for ~100 ms after a lighter kernel,
    # so each block starts with 100 ms of untimed calls (flush included in the call time).
    call_ms = {"ours": 2.0, "sdpa": 0.9, "flash": 1.6}
    plan = block_plan(call_ms, n=30, rounds=2, settle_ms=100.0, config_index=0)
    assert plan == [("ours", 50, 15), ("sdpa", 112, 15), ("flash", 63, 15),
                    ("flash", 0, 15), ("sdpa", 112, 15), ("ours", 50, 15)]
    # every implementation gets all its timed calls, in two blocks each
    for name in call_ms:
        assert sum(t for n, _, t in plan if n == name) == 30
        assert sum(1 for n, _, _ in plan if n == name) == 2


def test_the_order_alternates_from_config_to_config_and_tiny_kernels_settle_bounded() -> None:
    call_ms = {"ours": 0.06, "sdpa": 0.055}
    first = [n for n, _, _ in block_plan(call_ms, 31, 2, 100.0, config_index=0)]
    second = [n for n, _, _ in block_plan(call_ms, 31, 2, 100.0, config_index=1)]
    assert first == ["ours", "sdpa", "sdpa", "ours"] and second == ["sdpa", "ours", "ours", "sdpa"]
    plan = block_plan({"tiny": 0.0}, 31, 1, 100.0, 0, max_settle_calls=5000)
    assert plan == [("tiny", 5000, 31)]  # a call that times as 0 ms cannot make settling endless
    assert block_plan(call_ms, 3, 1, 0.0, 0) == [("ours", 0, 3), ("sdpa", 0, 3)]  # settle off


def two_h200s():  # type: ignore[no-untyped-def]
    from cockpit.telemetry.fake import FakeGpu, FakePynvml

    return FakePynvml([FakeGpu(uuid=H200_0, pci_bus_id="00000000:1B:00.0"),
                       FakeGpu(uuid=H200_1, pci_bus_id="00000000:43:00.0", util_gpu=100, sm_clock_mhz=1755,
                               throttle_mask=0x4, processes=[(4242, 20480), (7001, 1002)])])


def test_the_probe_names_its_gpu_by_uuid_and_pci_bus_id(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "get_device_properties", cuda_device(H200_1[4:], 0x43))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
    assert device_identity(0) == {"cuda_ordinal": 0, "name": "NVIDIA H200", "uuid": H200_1,
                                  "pci_bus_id": "00000000:43:00.0", "cuda_visible_devices": "1"}


def cuda_device(uuid: str | None, bus: int):  # type: ignore[no-untyped-def]
    """What torch's get_device_properties says of a GPU (uuid None: a torch without UUIDs)."""
    from types import SimpleNamespace

    return lambda ordinal: SimpleNamespace(name="NVIDIA H200", uuid=uuid, pci_domain_id=0, pci_bus_id=bus,
                                           pci_device_id=0)


def test_with_cuda_visible_devices_1_the_watch_samples_nvmls_gpu_1(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "pynvml", two_h200s())
    monkeypatch.setattr(torch.cuda, "get_device_properties", cuda_device(H200_1[4:], 0x43))
    with GpuWatch(0, every_s=0.01) as watch:
        wait_until(lambda: watch.samples or watch.error, "the watch's first sample")
    assert watch.error is None and watch.gpu["nvml_index"] == 1 and watch.gpu["nvml_uuid"] == H200_1
    sample = watch.samples[0]
    assert (sample["util"], sample["sm_clock"], sample["throttle"]) == (100, 1755, 0x4)
    assert sample["pids"] == [[4242, 20480], [7001, 1002]]  # the foreign job on GPU 1 is seen


def test_without_a_uuid_the_watch_finds_the_gpu_by_pci_bus_id_and_never_by_ordinal(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    nv = two_h200s()
    monkeypatch.setitem(sys.modules, "pynvml", nv)
    assert nvml_handle(nv, {"uuid": None, "pci_bus_id": "00000000:43:00.0"}) == 1
    with pytest.raises(LookupError, match="NVML does not know the GPU torch runs on"):
        nvml_handle(nv, {"uuid": "GPU-00000000-0000-0000-0000-000000000000", "pci_bus_id": None})
    monkeypatch.setattr(torch.cuda, "get_device_properties", cuda_device("00000000-0000-0000-0000-000000000000",
                                                                         0x99))
    with GpuWatch(0, every_s=0.01) as watch:
        pass
    assert watch.samples == [] and watch.error is not None and watch.error.startswith("LookupError")


def test_each_timed_block_is_placed_in_wall_clock_time_from_the_gpus_events() -> None:
    class Event:
        def __init__(self, gpu_ms: float) -> None:
            self.gpu_ms = gpu_ms

        def elapsed_time(self, other: Event) -> float:
            return other.gpu_ms - self.gpu_ms

    anchor = Event(1000.0)
    spans = block_spans(anchor, 1_795_000_000.0, [("ours", Event(1100.0), Event(1150.5), 30),
                                                  ("sdpa", Event(1250.0), Event(1275.25), 30)])
    assert spans == [{"impl": "ours", "t0": 1_795_000_000.1, "t1": 1_795_000_000.1505, "calls": 30},
                     {"impl": "sdpa", "t0": 1_795_000_000.25, "t1": 1_795_000_000.2752, "calls": 30}]


def test_a_gpu_that_falls_off_the_bus_ends_the_watch_with_a_lost_sample(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    nv = two_h200s()
    monkeypatch.setitem(sys.modules, "pynvml", nv)
    monkeypatch.setattr(torch.cuda, "get_device_properties", cuda_device(H200_1[4:], 0x43))
    with GpuWatch(0, every_s=0.01) as watch:
        wait_until(lambda: watch.samples or watch.error, "the watch's first sample")
        nv.gpus[1].lost = True
        wait_until(lambda: watch.error, "the watch to see the GPU lost")
    assert watch.samples[0]["sm_clock"] == 1755
    assert watch.samples[-1]["lost"] is True and watch.samples[-1]["sm_clock"] is None
    assert sum(1 for s in watch.samples if s.get("lost")) == 1  # the watch stops there
    assert watch.error is not None and "GPU is lost" in watch.error
