"""A stand-in for the `pynvml` module, for tests and screenshots on machines without a GPU.

Hand it to `Nvml(lib=FakePynvml(...))`. Each `FakeGpu` is mutable on purpose: a test turns up
the load, makes a field unsupported, or pulls the GPU off the bus between ticks. `calls` counts
every NVML function called, so a test can check what a tick costs in calls.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from cockpit.telemetry.nvml import (
    NVML_CLOCK_SM,
    NVML_ERROR_GPU_IS_LOST,
    NVML_ERROR_NOT_FOUND,
    NVML_ERROR_NOT_SUPPORTED,
    NVML_MEMORY_ERROR_TYPE_CORRECTED,
    NVML_PCIE_UTIL_RX_BYTES,
)

_MIB = 1 << 20
_MESSAGES = {
    1: "Uninitialized", 3: "Not Supported", 4: "Insufficient Permissions", 6: "Not Found",
    9: "Driver Not Loaded",
    10: "Timeout", 12: "NVML Shared Library Not Found", 15: "GPU is lost", 999: "Unknown Error",
}


class FakeNvmlError(Exception):
    """Like pynvml.NVMLError: the NVML return code is in `value`."""

    def __init__(self, value: int) -> None:
        super().__init__(value)
        self.value = value

    def __str__(self) -> str:
        return _MESSAGES.get(self.value, f"NVML Error with code {self.value}")


@dataclass
class FakeGpu:
    """One fake GPU: an idle H200 unless told otherwise. Power in W, memory in MiB."""

    name: str = "NVIDIA H200"
    uuid: str = "GPU-0000fa4e-0000-0000-0000-000000000000"
    pci_bus_id: str = "00000000:1B:00.0"
    compute_capability: tuple[int, int] = (9, 0)
    memory_total_mib: int = 143771
    memory_used_mib: int = 512
    util_gpu: int = 0
    util_mem: int = 0
    temp_c: int = 30
    power_w: float = 75.0
    power_limit_w: float = 700.0
    sm_clock_mhz: int = 345
    mem_clock_mhz: int = 3201
    max_sm_clock_mhz: int = 1980
    max_mem_clock_mhz: int = 3201
    pstate: int = 0
    throttle_mask: int = 0x1
    slowdown_temp_c: int = 90
    persistence_mode: int = 1
    processes: list[tuple[int, int]] = field(default_factory=list)
    """(pid, used MiB) of each compute process."""
    ecc: tuple[int, int] = (0, 0)
    energy_j: float = 1000.0
    pcie_kbs: tuple[int, int] = (1000, 2000)
    """(rx, tx)."""
    unsupported: set[str] = field(default_factory=lambda: {"nvmlDeviceGetMigMode"})
    """NVML function names that answer NOT_SUPPORTED on this GPU."""
    errors: dict[str, int] = field(default_factory=dict)
    """NVML function name -> the error code it raises."""
    lost: bool = False
    """Fell off the bus: every call about it raises GPU_IS_LOST."""


class FakePynvml:
    """The slice of pynvml that `Nvml` uses. `init_error` makes nvmlInit fail with that code."""

    NVMLError = FakeNvmlError
    NVML_CLOCK_SM = NVML_CLOCK_SM
    NVML_TEMPERATURE_GPU = 0

    def __init__(self, gpus: list[FakeGpu] | None = None, init_error: int | None = None,
                 driver_version: str = "580.159.03", cuda_version: int = 13000) -> None:
        self.gpus = gpus if gpus is not None else [FakeGpu()]
        self.init_error = init_error
        self.driver_version = driver_version
        self.cuda_version = cuda_version
        self.calls: Counter[str] = Counter()

    def _gpu(self, name: str, handle: int, read: Callable[[FakeGpu], Any]) -> Any:
        self.calls[name] += 1
        gpu = self.gpus[handle]
        if gpu.lost:
            raise FakeNvmlError(NVML_ERROR_GPU_IS_LOST)
        if name in gpu.errors:
            raise FakeNvmlError(gpu.errors[name])
        if name in gpu.unsupported:
            raise FakeNvmlError(NVML_ERROR_NOT_SUPPORTED)
        return read(gpu)

    # System ----------------------------------------------------------------------------------

    def nvmlInit(self) -> None:
        self.calls["nvmlInit"] += 1
        if self.init_error is not None:
            raise FakeNvmlError(self.init_error)

    def nvmlShutdown(self) -> None:
        self.calls["nvmlShutdown"] += 1

    def nvmlDeviceGetCount(self) -> int:
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> int:
        if self.gpus[index].lost:
            raise FakeNvmlError(NVML_ERROR_GPU_IS_LOST)
        return index

    def nvmlDeviceGetHandleByUUID(self, uuid: str) -> int:
        return self._find("nvmlDeviceGetHandleByUUID", lambda g: g.uuid == uuid)

    def nvmlDeviceGetHandleByPciBusId(self, bus_id: str) -> int:
        return self._find("nvmlDeviceGetHandleByPciBusId", lambda g: g.pci_bus_id == bus_id)

    def _find(self, name: str, match: Callable[[FakeGpu], bool]) -> int:
        self.calls[name] += 1
        index = next((i for i, g in enumerate(self.gpus) if match(g)), None)
        if index is None:
            raise FakeNvmlError(NVML_ERROR_NOT_FOUND)
        return index

    def nvmlDeviceGetIndex(self, h: int) -> int:
        return h

    def nvmlDeviceIsMigDeviceHandle(self, h: int) -> bool:
        return False

    def nvmlSystemGetDriverVersion(self) -> str:
        return self.driver_version

    def nvmlSystemGetCudaDriverVersion_v2(self) -> int:
        return self.cuda_version

    # Per GPU ---------------------------------------------------------------------------------

    def nvmlDeviceGetName(self, h: int) -> str:
        return str(self._gpu("nvmlDeviceGetName", h, lambda g: g.name))

    def nvmlDeviceGetUUID(self, h: int) -> str:
        return str(self._gpu("nvmlDeviceGetUUID", h, lambda g: g.uuid))

    def nvmlDeviceGetPciInfo(self, h: int) -> Any:
        return self._gpu("nvmlDeviceGetPciInfo", h, lambda g: SimpleNamespace(busId=g.pci_bus_id))

    def nvmlDeviceGetCudaComputeCapability(self, h: int) -> tuple[int, int]:
        return self._gpu("nvmlDeviceGetCudaComputeCapability", h,  # type: ignore[no-any-return]
                         lambda g: g.compute_capability)

    def nvmlDeviceGetMemoryInfo(self, h: int) -> Any:
        return self._gpu("nvmlDeviceGetMemoryInfo", h, lambda g: SimpleNamespace(
            total=g.memory_total_mib * _MIB, used=g.memory_used_mib * _MIB,
            free=(g.memory_total_mib - g.memory_used_mib) * _MIB))

    def nvmlDeviceGetMaxClockInfo(self, h: int, kind: int) -> int:
        return int(self._gpu("nvmlDeviceGetMaxClockInfo", h, lambda g: (
            g.max_sm_clock_mhz if kind == NVML_CLOCK_SM else g.max_mem_clock_mhz)))

    def nvmlDeviceGetPowerManagementLimit(self, h: int) -> int:
        return int(self._gpu("nvmlDeviceGetPowerManagementLimit", h, lambda g: g.power_limit_w * 1000))

    def nvmlDeviceGetTemperatureThreshold(self, h: int, kind: int) -> int:
        return int(self._gpu("nvmlDeviceGetTemperatureThreshold", h, lambda g: g.slowdown_temp_c))

    def nvmlDeviceGetPersistenceMode(self, h: int) -> int:
        return int(self._gpu("nvmlDeviceGetPersistenceMode", h, lambda g: g.persistence_mode))

    def nvmlDeviceGetMigMode(self, h: int) -> list[int]:
        return self._gpu("nvmlDeviceGetMigMode", h, lambda g: [0, 0])  # type: ignore[no-any-return]

    def nvmlDeviceGetUtilizationRates(self, h: int) -> Any:
        return self._gpu("nvmlDeviceGetUtilizationRates", h,
                         lambda g: SimpleNamespace(gpu=g.util_gpu, memory=g.util_mem))

    def nvmlDeviceGetTemperature(self, h: int, sensor: int) -> int:
        return int(self._gpu("nvmlDeviceGetTemperature", h, lambda g: g.temp_c))

    def nvmlDeviceGetPowerUsage(self, h: int) -> int:
        return int(self._gpu("nvmlDeviceGetPowerUsage", h, lambda g: g.power_w * 1000))

    def nvmlDeviceGetEnforcedPowerLimit(self, h: int) -> int:
        return int(self._gpu("nvmlDeviceGetEnforcedPowerLimit", h, lambda g: g.power_limit_w * 1000))

    def nvmlDeviceGetClockInfo(self, h: int, kind: int) -> int:
        return int(self._gpu("nvmlDeviceGetClockInfo", h, lambda g: (
            g.sm_clock_mhz if kind == NVML_CLOCK_SM else g.mem_clock_mhz)))

    def nvmlDeviceGetPerformanceState(self, h: int) -> int:
        return int(self._gpu("nvmlDeviceGetPerformanceState", h, lambda g: g.pstate))

    def nvmlDeviceGetCurrentClocksEventReasons(self, h: int) -> int:
        return int(self._gpu("nvmlDeviceGetCurrentClocksEventReasons", h, lambda g: g.throttle_mask))

    def nvmlDeviceGetComputeRunningProcesses(self, h: int) -> list[Any]:
        return self._gpu("nvmlDeviceGetComputeRunningProcesses", h,  # type: ignore[no-any-return]
                         lambda g: [SimpleNamespace(pid=pid, usedGpuMemory=mib * _MIB)
                                    for pid, mib in g.processes])

    def nvmlDeviceGetTotalEccErrors(self, h: int, kind: int, counter: int) -> int:
        return int(self._gpu("nvmlDeviceGetTotalEccErrors", h, lambda g: (
            g.ecc[0] if kind == NVML_MEMORY_ERROR_TYPE_CORRECTED else g.ecc[1])))

    def nvmlDeviceGetTotalEnergyConsumption(self, h: int) -> int:
        return int(self._gpu("nvmlDeviceGetTotalEnergyConsumption", h, lambda g: g.energy_j * 1000))

    def nvmlDeviceGetPcieThroughput(self, h: int, counter: int) -> int:
        return int(self._gpu("nvmlDeviceGetPcieThroughput", h, lambda g: (
            g.pcie_kbs[0] if counter == NVML_PCIE_UTIL_RX_BYTES else g.pcie_kbs[1])))
