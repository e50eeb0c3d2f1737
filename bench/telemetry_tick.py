"""What GPU telemetry costs: the sampler's tick, and each NVML call it makes.

    python bench/telemetry_tick.py [--ticks 1000] [--reps 1000] [--slow-reps 10] [--json-out FILE]

(a) open: `Nvml.open()` (loads libnvidia-ml, nvmlInit) and the static facts of every GPU.
(b) fast-lane tick: `Sampler.tick()` with the slow lane off, `--ticks` times after 10 untimed
    ticks: median / p99 / max µs per tick and per GPU (the sampler's own perf_counter figure).
(c) slow-lane tick: the same with ECC and energy read every tick, with and without PCIe.
(d) each raw pynvml call on GPU 0, `--reps` times (`--slow-reps` for the slow ones): median
    and p99 µs; NOT_SUPPORTED calls are listed as such. Also the `Nvml` wrapper's overhead on
    one cheap call, and `nvmlInit` + `nvmlShutdown` in a loop.
Needs a GPU and its driver; without them it prints the reason and exits 2. Run it from the
repository root with cockpit installed (or PYTHONPATH=.).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cockpit.clock import SystemClock
from cockpit.telemetry.nvml import Nvml
from cockpit.telemetry.sampler import Sampler


def stats_us(samples_s: list[float]) -> dict[str, float]:
    us = sorted(s * 1e6 for s in samples_s)
    p99 = us[min(len(us) - 1, round(0.99 * (len(us) - 1)))]
    return {"n": len(us), "median_us": round(statistics.median(us), 2), "p99_us": round(p99, 2),
            "max_us": round(us[-1], 2)}


def time_call(fn: Callable[[], Any], reps: int) -> dict[str, Any]:
    try:
        fn()
    except Exception as exc:  # the call's own error is the result
        return {"error": f"{type(exc).__name__}: {exc}"}
    samples = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return stats_us(samples)


def tick_costs(ticks: int, slow_every_s: float, pcie: bool) -> dict[str, Any]:
    sampler = Sampler(Nvml(), SystemClock(), slow_every_s=slow_every_s, pcie=pcie)
    for _ in range(10):
        sampler.tick()
    costs = []
    for _ in range(ticks):
        snap = sampler.tick()
        costs.append(snap.tick_us / 1e6)
    gpus = max(1, len(sampler.gpus))
    result = stats_us(costs)
    result["per_gpu_median_us"] = round(result["median_us"] / gpus, 2)
    result["per_gpu_p99_us"] = round(result["p99_us"] / gpus, 2)
    sampler.close()
    return result


def raw_calls(reps: int, slow_reps: int) -> dict[str, Any]:
    import pynvml as nv

    nv.nvmlInit()
    h = nv.nvmlDeviceGetHandleByIndex(0)
    fast: dict[str, Callable[[], Any]] = {
        "utilization rates": lambda: nv.nvmlDeviceGetUtilizationRates(h),
        "memory info": lambda: nv.nvmlDeviceGetMemoryInfo(h),
        "temperature": lambda: nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU),
        "power usage": lambda: nv.nvmlDeviceGetPowerUsage(h),
        "enforced power limit": lambda: nv.nvmlDeviceGetEnforcedPowerLimit(h),
        "clock SM": lambda: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM),
        "clock MEM": lambda: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_MEM),
        "P-state": lambda: nv.nvmlDeviceGetPerformanceState(h),
        "clock-event reasons": lambda: nv.nvmlDeviceGetCurrentClocksEventReasons(h),
        "compute processes": lambda: nv.nvmlDeviceGetComputeRunningProcesses(h),
        "fan speed": lambda: nv.nvmlDeviceGetFanSpeed(h),
    }
    slow: dict[str, Callable[[], Any]] = {
        "max clock SM": lambda: nv.nvmlDeviceGetMaxClockInfo(h, nv.NVML_CLOCK_SM),
        "max clock MEM": lambda: nv.nvmlDeviceGetMaxClockInfo(h, nv.NVML_CLOCK_MEM),
        "total energy": lambda: nv.nvmlDeviceGetTotalEnergyConsumption(h),
        "ECC volatile total": lambda: nv.nvmlDeviceGetTotalEccErrors(
            h, nv.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, nv.NVML_VOLATILE_ECC),
        "PCIe throughput rx": lambda: nv.nvmlDeviceGetPcieThroughput(h, nv.NVML_PCIE_UTIL_RX_BYTES),
        "name": lambda: nv.nvmlDeviceGetName(h),
        "power management limit": lambda: nv.nvmlDeviceGetPowerManagementLimit(h),
        "slowdown temperature": lambda: nv.nvmlDeviceGetTemperatureThreshold(
            h, nv.NVML_TEMPERATURE_THRESHOLD_SLOWDOWN),
    }
    out = {name: time_call(fn, reps) for name, fn in fast.items()}
    out.update({name: time_call(fn, slow_reps) for name, fn in slow.items()})
    wrapper = Nvml()
    wrapper.open()
    out["Nvml.temperature_c (wrapper)"] = time_call(lambda: wrapper.temperature_c(0), reps)
    wrapper.close()
    nv.nvmlShutdown()
    out["nvmlInit+nvmlShutdown"] = time_call(lambda: (nv.nvmlInit(), nv.nvmlShutdown()), slow_reps)
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ticks", type=int, default=1000)
    p.add_argument("--reps", type=int, default=1000)
    p.add_argument("--slow-reps", type=int, default=10)
    p.add_argument("--json-out", type=Path)
    args = p.parse_args()

    start = time.perf_counter()
    nvml = Nvml()
    reason = nvml.open()
    opened_s = time.perf_counter() - start
    if reason is not None:
        print(f"telemetry_tick: {reason}", file=sys.stderr)
        return 2
    sampler = Sampler(nvml, SystemClock())
    start = time.perf_counter()
    sampler.open()
    statics_s = time.perf_counter() - start
    gpus = sampler.gpus
    sampler.close()

    result: dict[str, Any] = {
        "machine": f"{platform.node()} {platform.machine()} python {platform.python_version()}",
        "gpus": [f"{g.index}: {g.name}, driver {g.driver_version}, CUDA {g.cuda_driver_version}, "
                 f"max SM {g.max_sm_clock_mhz} MHz" for g in gpus],
        "open_ms": round(opened_s * 1e3, 2),
        "statics_ms": round(statics_s * 1e3, 2),
        "fast_tick": tick_costs(args.ticks, float("inf"), pcie=False),
        "slow_tick": tick_costs(args.slow_reps, 0.0, pcie=False),
        "slow_tick_with_pcie": tick_costs(args.slow_reps, 0.0, pcie=True),
        "calls": raw_calls(args.reps, args.slow_reps),
    }
    print(render(result))
    if args.json_out:
        args.json_out.write_text(json.dumps(result, indent=1) + "\n")
    return 0


def render(r: dict[str, Any]) -> str:
    lines = [f"machine: {r['machine']}", *(f"gpu {g}" for g in r["gpus"]),
             f"open (load NVML + nvmlInit): {r['open_ms']} ms; "
             f"static facts of all GPUs: {r['statics_ms']} ms",
             "", "| tick | n | median µs | p99 µs | max µs | median µs/GPU | p99 µs/GPU |",
             "|---|---|---|---|---|---|---|"]
    for name in ("fast_tick", "slow_tick", "slow_tick_with_pcie"):
        t = r[name]
        lines.append(f"| {name} | {t['n']} | {t['median_us']} | {t['p99_us']} | {t['max_us']} | "
                     f"{t['per_gpu_median_us']} | {t['per_gpu_p99_us']} |")
    lines += ["", "| NVML call (GPU 0) | n | median µs | p99 µs | max µs |", "|---|---|---|---|---|"]
    for name, c in r["calls"].items():
        if "error" in c:
            lines.append(f"| {name} | — | {c['error']} | | |")
        else:
            lines.append(f"| {name} | {c['n']} | {c['median_us']} | {c['p99_us']} | {c['max_us']} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
