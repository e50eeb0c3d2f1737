"""The GPU torch runs on, named by UUID and PCI bus id (CUDA's ordinal is not NVML's index), and
watched through NVML every 20 ms while a probe runs: clocks and clock-event reasons each time,
processes every 200 ms, for each timed block's check (probes/block_watch.py), the validity verdict
and the clock each implementation ran at."""

from __future__ import annotations

import os
import threading
import time
from typing import Any

import torch

from cockpit.workload.probe_wire import GpuIdentity, GpuSampleJson


def device_identity(ordinal: int) -> GpuIdentity:
    """The GPU behind CUDA ordinal `ordinal`, named so NVML finds it: UUID and PCI bus id."""
    props = torch.cuda.get_device_properties(ordinal)
    raw = str(getattr(props, "uuid", "") or "")
    uuid = raw if raw.startswith(("GPU-", "MIG-")) or not raw else f"GPU-{raw}"
    pci = None
    if hasattr(props, "pci_bus_id"):  # "00000000:1B:00.0", as NVML writes it
        pci = f"{props.pci_domain_id:08X}:{props.pci_bus_id:02X}:{props.pci_device_id:02X}.0"
    return {"cuda_ordinal": ordinal, "name": props.name, "uuid": uuid, "pci_bus_id": pci,
            "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES")}


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def nvml_handle(nv: Any, gpu: GpuIdentity) -> Any:
    """NVML's handle for the GPU torch runs on: by UUID, else by PCI bus id; never by ordinal
    (with CUDA_VISIBLE_DEVICES=1, torch's cuda:0 is NVML's GPU 1). A MIG slice is watched
    through its GPU."""
    uuid, pci = gpu.get("uuid"), gpu.get("pci_bus_id")
    handle = None
    tried = []
    for name in ([uuid, "MIG-" + uuid[4:]] if uuid and uuid.startswith("GPU-") else [uuid]):
        if name and handle is None:
            try:
                handle = nv.nvmlDeviceGetHandleByUUID(name)
            except nv.NVMLError as exc:
                tried.append(f"UUID {name}: {exc}")
    if handle is None and pci:
        try:
            handle = nv.nvmlDeviceGetHandleByPciBusId(pci)
        except nv.NVMLError as exc:
            tried.append(f"PCI bus id {pci}: {exc}")
    if handle is None:
        raise LookupError("NVML does not know the GPU torch runs on (" + "; ".join(tried) + ")")
    try:
        mig = nv.nvmlDeviceIsMigDeviceHandle(handle)
    except nv.NVMLError:  # a driver without MIG: no slices to unwrap
        mig = False
    return nv.nvmlDeviceGetDeviceHandleFromMigDeviceHandle(handle) if mig else handle


class GpuWatch:
    """NVML samples every 20 ms in a thread, of the GPU behind CUDA ordinal `ordinal` (found in
    NVML by UUID): clocks, throttle reasons, utilization; the compute processes every
    `PROCESS_EVERY`th sample (the slowest call), carried in between. `gpu` names it, NVML's index
    and UUID added once the watch has found it. A 20 ms period gives a 50 ms timed block two or
    three samples of its own."""

    PROCESS_EVERY = 10

    def __init__(self, ordinal: int, every_s: float = 0.02) -> None:
        self.samples: list[GpuSampleJson] = []
        self.error: str | None = None
        self.gpu = device_identity(ordinal)
        self._every_s = every_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> GpuWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)

    def _run(self) -> None:
        try:
            import pynvml as nv

            nv.nvmlInit()
            h = nvml_handle(nv, self.gpu)
            max_sm = nv.nvmlDeviceGetMaxClockInfo(h, nv.NVML_CLOCK_SM)
            self.gpu["nvml_index"] = int(nv.nvmlDeviceGetIndex(h))
            self.gpu["nvml_uuid"] = _text(nv.nvmlDeviceGetUUID(h))
            self.gpu["max_sm_clock"] = max_sm
        except Exception as exc:  # no NVML, or no such GPU: the verdict says it was not watched
            self.error = f"{type(exc).__name__}: {exc}"
            return
        pids: list[list[int]] = []
        count = 0
        while not self._stop.wait(self._every_s):
            try:
                if count % self.PROCESS_EVERY == 0:
                    pids = [[p.pid, (p.usedGpuMemory or 0) // (1 << 20)]
                            for p in nv.nvmlDeviceGetComputeRunningProcesses(h)]
                count += 1
                self.samples.append({
                    "t": time.time(), "util": nv.nvmlDeviceGetUtilizationRates(h).gpu,
                    "sm_clock": nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM), "max_sm_clock": max_sm,
                    "throttle": int(nv.nvmlDeviceGetCurrentClocksEventReasons(h)),
                    "temp": nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU),
                    "power_w": nv.nvmlDeviceGetPowerUsage(h) / 1000,
                    "pids": pids,
                })
            except Exception as exc:
                self.error = f"{type(exc).__name__}: {exc}"
                if "GpuIsLost" in type(exc).__name__ or "GPU is lost" in str(exc):
                    # fell off the bus: said in the samples, so the verdict names it
                    self.samples.append({"t": time.time(), "util": None, "sm_clock": None,
                                         "max_sm_clock": max_sm, "throttle": None, "temp": None,
                                         "power_w": None, "pids": [], "lost": True})
                    return


def no_cuda_device() -> str:
    """One line: why torch sees no GPU, and what to do."""
    if torch.version.cuda is None:
        return (f"no CUDA device: torch {torch.__version__} is a CPU-only build; install torch's CUDA "
                "build in this python (`cockpit gate env` checks the rest)")
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    mask = f"CUDA_VISIBLE_DEVICES = {visible!r}" if visible is not None else "CUDA_VISIBLE_DEVICES unset"
    return (f"no CUDA device: torch {torch.__version__} (CUDA {torch.version.cuda}) sees none; `nvidia-smi` "
            f"must list the GPU ({mask}; `cockpit gate env` says why)")
