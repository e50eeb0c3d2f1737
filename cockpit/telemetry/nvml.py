"""The one boundary to NVML (the `pynvml` module of nvidia-ml-py). Nothing here raises.

Every read returns a value or `None` ("n/a"):
- NOT_SUPPORTED (fan speed on data-center parts, ECC on consumer cards) or a driver without the
  function gives `None`, and the call is not made again for that GPU;
- GPU_IS_LOST marks the GPU lost: every later read of it gives `None` without calling NVML;
- any other error gives `None` and is reported once per (GPU, field, error) in `problems`.

pynvml is imported by `open()`, never at import time, so the UI's first frame does not load it.
Tests hand `Nvml` a fake module with the same function names (`cockpit.telemetry.fake`).
"""

from __future__ import annotations

import importlib
from typing import Any

from cockpit.telemetry.sample import NvmlProblem

# NVML's return codes and enum values (nvml.h), named as in pynvml; fixed by NVML's ABI.
NVML_ERROR_NO_PERMISSION = 4
NVML_ERROR_NOT_SUPPORTED = 3
NVML_ERROR_NOT_FOUND = 6
NVML_ERROR_DRIVER_NOT_LOADED = 9
NVML_ERROR_LIBRARY_NOT_FOUND = 12
NVML_ERROR_FUNCTION_NOT_FOUND = 13
NVML_ERROR_GPU_IS_LOST = 15
NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18
NVML_CLOCK_SM = 1
NVML_CLOCK_MEM = 2
NVML_TEMPERATURE_GPU = 0
NVML_TEMPERATURE_THRESHOLD_SLOWDOWN = 1
NVML_PCIE_UTIL_TX_BYTES = 0
NVML_PCIE_UTIL_RX_BYTES = 1
NVML_MEMORY_ERROR_TYPE_CORRECTED = 0
NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1
NVML_VOLATILE_ECC = 0
_PSTATE_UNKNOWN = 32
_MIB = 1 << 20

_OPEN_REASONS = {
    NVML_ERROR_LIBRARY_NOT_FOUND: "NVML library not found (no NVIDIA driver on this machine)",
    NVML_ERROR_DRIVER_NOT_LOADED: "NVIDIA driver not loaded (nvidia-smi fails too; load it or reboot)",
    NVML_ERROR_NO_PERMISSION: "no permission to open NVML (check access to /dev/nvidia*)",
    NVML_ERROR_LIB_RM_VERSION_MISMATCH: "NVML and the kernel driver differ in version (reboot after a "
                                        "driver update)",
}
_THROTTLE_FUNCTIONS = (("throttle reasons", "nvmlDeviceGetCurrentClocksEventReasons"),
                       ("throttle reasons (old API)", "nvmlDeviceGetCurrentClocksThrottleReasons"))


class Nvml:
    """NVML for one process: `open()` once (~10 ms), then cheap reads by GPU index."""

    def __init__(self, lib: Any = None) -> None:
        self._lib: Any = lib
        self._error: type[Exception] = Exception
        self._opened = False
        self._reason: str | None = None
        self._handles: list[Any] = []
        self._lost: set[int] = set()
        self._unsupported: set[tuple[int | None, str]] = set()
        self._reported: set[tuple[int | None, str, object]] = set()
        self._problems: list[NvmlProblem] = []

    # Opening ---------------------------------------------------------------------------------

    def open(self) -> str | None:
        """Start NVML and take a handle per GPU; returns None when ready, else why not (one line)."""
        if self._opened or self._reason is not None:
            return self._reason
        try:
            lib = self._lib if self._lib is not None else importlib.import_module("pynvml")
        except ImportError:
            self._reason = "pynvml is not installed (pip install nvidia-ml-py)"
            return self._reason
        self._lib = lib
        self._error = lib.NVMLError
        try:
            lib.nvmlInit()
        except lib.NVMLError as exc:
            code: int = getattr(exc, "value", -1)
            self._reason = _OPEN_REASONS.get(code, f"NVML failed to start: {exc} (check nvidia-smi)")
            return self._reason
        except Exception as exc:  # a broken install must not take the cockpit down
            self._reason = f"NVML failed to start: {type(exc).__name__}: {exc} (check nvidia-smi)"
            return self._reason
        self._opened = True
        count = self._call(None, "device count", lib.nvmlDeviceGetCount) or 0
        self._handles = [self._handle(index) for index in range(count)]
        if not self._handles:
            self.close()
            self._reason = "NVML sees no GPU on this machine (check nvidia-smi)"
        return self._reason

    def _handle(self, index: int) -> Any:
        try:
            return self._lib.nvmlDeviceGetHandleByIndex(index)
        except self._error as exc:
            if getattr(exc, "value", None) == NVML_ERROR_GPU_IS_LOST:
                self._lost.add(index)
            else:
                self._report(index, "handle", exc)
        return None

    def close(self) -> None:
        if self._opened:
            self._opened = False
            self._call(None, "shutdown", self._lib.nvmlShutdown)

    @property
    def available(self) -> bool:
        return self._opened

    @property
    def reason(self) -> str | None:
        return self._reason

    @property
    def problems(self) -> tuple[NvmlProblem, ...]:
        """Every problem reported so far, each once, oldest first."""
        return tuple(self._problems)

    def device_count(self) -> int:
        return len(self._handles)

    def is_lost(self, index: int) -> bool:
        """The GPU fell off the bus (NVML_ERROR_GPU_IS_LOST); it needs a reset or a reboot."""
        return index in self._lost

    # The one place NVML is called ------------------------------------------------------------

    def _call(self, index: int | None, field: str, fn: Any, *args: Any) -> Any:
        if (index is not None and index in self._lost) or (index, field) in self._unsupported:
            return None
        try:
            return fn(*args)
        except self._error as exc:
            code = getattr(exc, "value", None)
            if code in (NVML_ERROR_NOT_SUPPORTED, NVML_ERROR_FUNCTION_NOT_FOUND):
                self._unsupported.add((index, field))  # a driver without the function can't support it
            elif code == NVML_ERROR_GPU_IS_LOST and index is not None:
                self._lost.add(index)
            else:
                self._report(index, field, exc)
        except Exception as exc:  # ctypes or decoding trouble: n/a, reported, never raised
            self._report(index, field, exc)
        return None

    def _device(self, index: int, field: str, name: str, *args: Any) -> Any:
        handle = self._handles[index] if 0 <= index < len(self._handles) else None
        fn = getattr(self._lib, name, None)
        if handle is None or fn is None:
            return None
        return self._call(index, field, fn, handle, *args)

    def _report(self, index: int | None, field: str, exc: BaseException) -> None:
        code = getattr(exc, "value", None)
        key = (index, field, code if isinstance(code, int) else f"{type(exc).__name__}: {exc}")
        if key in self._reported:
            return
        self._reported.add(key)
        text = str(exc) or type(exc).__name__
        if isinstance(code, int):
            text = f"{text} (NVML error {code})"
        self._problems.append(NvmlProblem(index, field, text))

    # System ----------------------------------------------------------------------------------

    def driver_version(self) -> str | None:
        return _text(self._call(None, "driver version", self._lib.nvmlSystemGetDriverVersion))

    def cuda_driver_version(self) -> str | None:
        """The newest CUDA the driver supports, as "13.0"."""
        v = self._call(None, "CUDA driver version", self._lib.nvmlSystemGetCudaDriverVersion_v2)
        return f"{v // 1000}.{v % 1000 // 10}" if isinstance(v, int) else None

    # Static, per GPU -------------------------------------------------------------------------

    def name(self, index: int) -> str | None:
        return _text(self._device(index, "name", "nvmlDeviceGetName"))

    def uuid(self, index: int) -> str | None:
        return _text(self._device(index, "uuid", "nvmlDeviceGetUUID"))

    def pci_bus_id(self, index: int) -> str | None:
        """"00000000:1B:00.0": the GPU's place on the bus, which no enumeration order changes."""
        info = self._device(index, "PCI info", "nvmlDeviceGetPciInfo")
        return _text(getattr(info, "busId", None)) if info is not None else None

    def compute_capability(self, index: int) -> tuple[int, int] | None:
        cc = self._device(index, "compute capability", "nvmlDeviceGetCudaComputeCapability")
        return (int(cc[0]), int(cc[1])) if cc is not None else None

    def memory_total_mib(self, index: int) -> int | None:
        info = self._device(index, "memory", "nvmlDeviceGetMemoryInfo")
        return int(info.total) // _MIB if info is not None else None

    def max_sm_clock_mhz(self, index: int) -> int | None:
        """~1.4 ms a call: read once."""
        return _int(self._device(index, "max SM clock", "nvmlDeviceGetMaxClockInfo", NVML_CLOCK_SM))

    def max_mem_clock_mhz(self, index: int) -> int | None:
        return _int(self._device(index, "max memory clock", "nvmlDeviceGetMaxClockInfo", NVML_CLOCK_MEM))

    def power_limit_w(self, index: int) -> float | None:
        return _watts(self._device(index, "power limit", "nvmlDeviceGetPowerManagementLimit"))

    def slowdown_temp_c(self, index: int) -> int | None:
        return _int(self._device(index, "slowdown temperature", "nvmlDeviceGetTemperatureThreshold",
                                 NVML_TEMPERATURE_THRESHOLD_SLOWDOWN))

    def persistence_mode(self, index: int) -> bool | None:
        mode = self._device(index, "persistence mode", "nvmlDeviceGetPersistenceMode")
        return bool(mode) if mode is not None else None

    def mig_mode(self, index: int) -> bool | None:
        modes = self._device(index, "MIG mode", "nvmlDeviceGetMigMode")
        return bool(modes[0]) if modes is not None else None

    # Fast lane: ~1-8 µs each -----------------------------------------------------------------

    def utilization(self, index: int) -> tuple[int, int] | None:
        """(GPU %, memory %) over NVML's last sample period."""
        rates = self._device(index, "utilization", "nvmlDeviceGetUtilizationRates")
        return (int(rates.gpu), int(rates.memory)) if rates is not None else None

    def memory_used_mib(self, index: int) -> int | None:
        info = self._device(index, "memory", "nvmlDeviceGetMemoryInfo")
        return int(info.used) // _MIB if info is not None else None

    def temperature_c(self, index: int) -> int | None:
        return _int(self._device(index, "temperature", "nvmlDeviceGetTemperature", NVML_TEMPERATURE_GPU))

    def power_w(self, index: int) -> float | None:
        return _watts(self._device(index, "power", "nvmlDeviceGetPowerUsage"))

    def enforced_power_limit_w(self, index: int) -> float | None:
        return _watts(self._device(index, "enforced power limit", "nvmlDeviceGetEnforcedPowerLimit"))

    def sm_clock_mhz(self, index: int) -> int | None:
        return _int(self._device(index, "SM clock", "nvmlDeviceGetClockInfo", NVML_CLOCK_SM))

    def mem_clock_mhz(self, index: int) -> int | None:
        return _int(self._device(index, "memory clock", "nvmlDeviceGetClockInfo", NVML_CLOCK_MEM))

    def pstate(self, index: int) -> int | None:
        p = _int(self._device(index, "P-state", "nvmlDeviceGetPerformanceState"))
        return None if p == _PSTATE_UNKNOWN else p

    def throttle_mask(self, index: int) -> int | None:
        """The clock-event reasons bitmask (drivers before 535 only know the "throttle" name)."""
        for field, name in _THROTTLE_FUNCTIONS:
            if hasattr(self._lib, name) and (index, field) not in self._unsupported:
                mask = self._device(index, field, name)
                if mask is not None or (index, field) not in self._unsupported:
                    return _int(mask)
        return None

    def compute_processes(self, index: int) -> tuple[tuple[int, int | None], ...] | None:
        """(pid, used MiB or None) of each compute process on the GPU."""
        procs = self._device(index, "processes", "nvmlDeviceGetComputeRunningProcesses")
        if procs is None:
            return None
        return tuple((int(p.pid), int(p.usedGpuMemory) // _MIB if p.usedGpuMemory is not None else None)
                     for p in procs)

    # Slow lane -------------------------------------------------------------------------------

    def ecc_volatile(self, index: int) -> tuple[int | None, int | None]:
        """(corrected, uncorrected) ECC errors since the driver loaded."""
        return (
            _int(self._device(index, "ECC corrected", "nvmlDeviceGetTotalEccErrors",
                              NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC)),
            _int(self._device(index, "ECC uncorrected", "nvmlDeviceGetTotalEccErrors",
                              NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC)),
        )

    def energy_j(self, index: int) -> float | None:
        """Energy since the driver loaded (~3 ms a call)."""
        mj = self._device(index, "energy", "nvmlDeviceGetTotalEnergyConsumption")
        return int(mj) / 1000.0 if mj is not None else None

    def pcie_kbs(self, index: int) -> tuple[int | None, int | None]:
        """(rx, tx) KB/s over NVML's 20 ms window: each call blocks ~21 ms."""
        return (
            _int(self._device(index, "PCIe rx", "nvmlDeviceGetPcieThroughput", NVML_PCIE_UTIL_RX_BYTES)),
            _int(self._device(index, "PCIe tx", "nvmlDeviceGetPcieThroughput", NVML_PCIE_UTIL_TX_BYTES)),
        )


def _int(value: Any) -> int | None:
    return int(value) if value is not None else None


def _watts(milliwatts: Any) -> float | None:
    return int(milliwatts) / 1000.0 if milliwatts is not None else None


def _text(value: Any) -> str | None:
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value) if value is not None else None
