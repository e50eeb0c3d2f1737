"""The NVML samples a gate's probe took of the GPU it ran on (its result file's `gpu_samples`),
read back as telemetry snapshots: for the bench's validity verdict and the report's chart."""

from __future__ import annotations

from typing import Any

from cockpit.telemetry.sample import GpuProcess, GpuSample, GpuStatic, Snapshot


def probe_snapshots(samples: list[dict[str, Any]], gpu: GpuStatic | None = None) -> list[Snapshot]:
    """A probe's raw NVML samples as telemetry snapshots of the one GPU it watched."""
    gpu = gpu or GpuStatic(0, max_sm_clock_mhz=samples[0].get("max_sm_clock") if samples else None)
    return [Snapshot(s["t"], (GpuSample(gpu.index, s["t"], util_gpu=s.get("util"),
                                        sm_clock_mhz=s.get("sm_clock"), temp_c=s.get("temp"),
                                        power_w=s.get("power_w"), throttle_mask=s.get("throttle"),
                                        processes=tuple(GpuProcess(pid, None, mib)
                                                        for pid, mib in s.get("pids", []))),), (gpu,))
            for s in samples]
