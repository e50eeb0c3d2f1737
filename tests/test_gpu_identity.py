"""Which physical GPU is meant: a UUID, a PCI bus id or an NVML index in cockpit.toml, and a
CUDA_VISIBLE_DEVICES that may hold CUDA ordinals, UUIDs or MIG ids, all found among NVML's GPUs
by UUID; a CUDA ordinal is never taken for an NVML index without saying so."""

from __future__ import annotations

import pytest

from cockpit.clock import FakeClock
from cockpit.hardware.device_spec import normalise_pci_bus_id, parse_device, visible_devices
from cockpit.telemetry.fake import FakeGpu, FakePynvml
from cockpit.telemetry.identity import cuda_ordinal_gpu, find_gpu, short_uuid
from cockpit.telemetry.nvml import Nvml
from cockpit.telemetry.recording import read_recording
from cockpit.telemetry.sample import GpuStatic
from cockpit.telemetry.sampler import Sampler

# Two H200s as NVML lists them (their UUIDs and bus ids as `nvidia-smi -L` / NVML write them).
H200_0 = GpuStatic(0, "NVIDIA H200", "GPU-bb9154e7-4d32-33d5-30c4-d6bc4498ea20", "00000000:1B:00.0")
H200_1 = GpuStatic(1, "NVIDIA H200", "GPU-5f0e2c71-9a8b-4c3d-8e2f-1a2b3c4d5e6f", "00000000:43:00.0")
BOX = (H200_0, H200_1)


def test_a_pin_is_a_uuid_a_pci_bus_id_or_an_nvml_index_and_nothing_else() -> None:
    assert parse_device("GPU-BB9154E7-4D32-33D5-30C4-D6BC4498EA20").value == H200_0.uuid
    assert parse_device(" 0000:43:00.0 ").value == "00000000:43:00.0"
    assert parse_device(1).kind == "index" and parse_device("01").value == "1"
    for bad in ("cuda:1", "GPU-bb9154e7", "1.5", "", True, -2, "43:00"):
        with pytest.raises(ValueError, match="is not a GPU"):
            parse_device(bad)  # type: ignore[arg-type]
    assert normalise_pci_bus_id("00000000:1B:00.0") == normalise_pci_bus_id("1b:00.0") == "00000000:1B:00.0"


def test_each_pin_finds_its_gpu_among_nvmls() -> None:
    assert find_gpu(parse_device(H200_1.uuid or ""), BOX) is H200_1
    assert find_gpu(parse_device("43:00.0"), BOX) is H200_1
    assert find_gpu(parse_device(0), BOX) is H200_0
    assert find_gpu(parse_device(7), BOX) is None
    assert find_gpu(parse_device("MIG-5c8a2f1e-6b7d-5e0f-9a1b-2c3d4e5f6a7b"), BOX) is None


def test_cuda_visible_devices_is_read_as_cuda_reads_it() -> None:
    assert visible_devices(None) is None
    assert visible_devices("1") == ("1",)
    assert visible_devices("GPU-5f0e2c71,0") == ("GPU-5f0e2c71", "0")
    assert visible_devices("1,oops,0") == ("1",)  # CUDA stops at the first entry that is no device
    assert visible_devices("") == ()


def test_with_cuda_visible_devices_1_cudas_first_gpu_is_nvmls_gpu_1() -> None:
    choice = cuda_ordinal_gpu("1", 0, BOX)
    assert choice.gpu is H200_1 and choice.exact  # one GPU model: CUDA's order is the bus order
    assert choice.why == "CUDA_VISIBLE_DEVICES=1"
    assert cuda_ordinal_gpu(None, 0, BOX).gpu is H200_0
    assert cuda_ordinal_gpu("1", 1, BOX).gpu is None  # only one GPU visible


def test_a_uuid_prefix_is_exact_a_number_on_a_mixed_box_is_only_assumed() -> None:
    assert cuda_ordinal_gpu("GPU-5f0e", 0, BOX).gpu is H200_1
    mixed = (H200_0, GpuStatic(1, "NVIDIA L4", "GPU-11111111-2222-3333-4444-555555555555"))
    guess = cuda_ordinal_gpu("1", 0, mixed)
    assert guess.gpu is mixed[1] and not guess.exact  # CUDA puts the fastest first
    assert cuda_ordinal_gpu("1", 0, mixed, pci_order=True).exact  # CUDA_DEVICE_ORDER=PCI_BUS_ID
    mig = cuda_ordinal_gpu("MIG-5c8a2f1e-6b7d-5e0f-9a1b-2c3d4e5f6a7b", 0, BOX)
    assert mig.gpu is None and "MIG slice" in mig.why


def test_the_sampler_reads_each_gpus_uuid_and_pci_bus_id_once() -> None:
    fake = FakePynvml([FakeGpu(uuid=H200_0.uuid or "", pci_bus_id="00000000:1B:00.0"),
                       FakeGpu(uuid=H200_1.uuid or "", pci_bus_id="00000000:43:00.0")])
    sampler = Sampler(Nvml(fake), FakeClock())
    snap = sampler.tick()
    assert [(g.index, g.uuid, g.pci_bus_id) for g in snap.gpus] == [
        (0, H200_0.uuid, "00000000:1B:00.0"), (1, H200_1.uuid, "00000000:43:00.0")]
    assert snap.uuid(1) == H200_1.uuid and snap.uuid(5) is None
    sampler.tick()
    assert fake.calls["nvmlDeviceGetPciInfo"] == 2  # read when NVML opens, not every tick


def test_a_recording_from_before_pci_bus_ids_still_reads_with_its_uuid(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from pathlib import Path

    rec = read_recording(Path(__file__).parent / "fixtures" / "telemetry" / "loaded-h200.jsonl")
    (gpu,) = rec.gpus
    assert gpu.uuid == "GPU-bb9154e7-4d32-33d5-30c4-d6bc4498ea20" and gpu.pci_bus_id is None
    assert rec.snapshots[0].uuid(0) == gpu.uuid
    assert short_uuid(gpu.uuid) == "GPU-bb9154e7" and short_uuid(None) == "no UUID"
