"""The NVML samples a gate's probe took of the GPU it ran on (its result file's `gpu_samples`),
read back as telemetry snapshots: for the bench's validity verdict and the report's chart."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypedDict

from cockpit.telemetry.sample import GpuProcess, GpuSample, GpuStatic, Snapshot


class ProbeSample(TypedDict, total=False):
    """One NVML sample as the probe's watcher writes it (probes/gpu_watch.py)."""

    t: float
    util: int | None
    sm_clock: int | None
    max_sm_clock: int | None
    temp: int | None
    power_w: float | None
    throttle: int | None
    pids: list[tuple[int, int | None]]
    """(pid, MiB used) of each compute process on the GPU."""
    lost: bool
    """NVML said the GPU fell off the bus (the sample holds no values)."""


def probe_snapshots(samples: Sequence[ProbeSample], gpu: GpuStatic | None = None) -> list[Snapshot]:
    """A probe's raw NVML samples as telemetry snapshots of the one GPU it watched."""
    gpu = gpu or GpuStatic(0, max_sm_clock_mhz=samples[0].get("max_sm_clock") if samples else None)
    return [Snapshot(s["t"], (GpuSample(gpu.index, s["t"], util_gpu=s.get("util"),
                                        sm_clock_mhz=s.get("sm_clock"), temp_c=s.get("temp"),
                                        power_w=s.get("power_w"), throttle_mask=s.get("throttle"),
                                        processes=tuple(GpuProcess(pid, None, mib)
                                                        for pid, mib in s.get("pids", [])),
                                        lost=bool(s.get("lost"))),), (gpu,))
            for s in samples]
