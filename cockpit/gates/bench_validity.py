"""The bench gate's validity verdict: were ours and the baseline measured under the same
conditions, and were those conditions clean? From the probe's NVML samples of the GPU it ran on
(named by UUID) and the span of each timed block.

Suspect when the window was not clean (`telemetry.validity`: a foreign process on that GPU, a
lost GPU, a watch that never saw it busy, a thermal or HW slowdown beyond its share) or when ours
and SDPA (or FLASH) ran at SM clocks further apart than `clock_difference` that the power cap
does not explain (`telemetry.block_clocks`). The power cap and the clock each implementation ran
at are always shown. `[thresholds] validity = "strict"` keeps the older rule: any clock event
makes the bench suspect.
"""

from __future__ import annotations

from typing import Any

from cockpit.config import Thresholds
from cockpit.telemetry.block_clocks import (
    Block,
    compare_clocks,
    config_clocks,
    impl_clocks,
    samples_in_blocks,
)
from cockpit.telemetry.probe_samples import probe_snapshots
from cockpit.telemetry.sample import GpuStatic
from cockpit.telemetry.validity import judge_window

LEGACY_BASELINES = ("sdpa", "flash")
"""A result from before workloads (the attention kernel against SDPA): whose clocks must match ours."""


def compared_with(data: dict[str, Any]) -> tuple[str, ...]:
    """The references whose clocks must match ours: those the probe says every speedup is stated
    against (the baseline and the other required references), or SDPA and FLASH for an older result."""
    compared = data.get("compared")
    if isinstance(compared, list) and all(isinstance(c, str) for c in compared):
        return tuple(compared)
    return LEGACY_BASELINES
STRICT_POWER_CAP_HINT = ('this card sits at its power cap under load: validity = "comparable" (the '
                         'default) accepts that and still checks that ours and the baseline ran at '
                         'comparable clocks; or add "power cap" to tolerated_clock_events')


def probe_gpu(data: dict[str, Any]) -> GpuStatic:
    """The GPU the probe ran on, as NVML knows it (a probe from before UUIDs: GPU 0, no UUID)."""
    gpu = data.get("gpu") or {}
    samples = data.get("gpu_samples") or [{}]
    index = gpu.get("nvml_index")
    return GpuStatic(int(index) if isinstance(index, int) else 0, name=gpu.get("name") or data.get("device"),
                     uuid=gpu.get("nvml_uuid") or gpu.get("uuid"), pci_bus_id=gpu.get("pci_bus_id"),
                     max_sm_clock_mhz=gpu.get("max_sm_clock") or samples[0].get("max_sm_clock"))


def probe_blocks(data: dict[str, Any]) -> list[Block]:
    """The timed blocks the probe recorded (none from a probe older than block spans)."""
    return [Block(row["config"], b["impl"], float(b["t0"]), float(b["t1"]))
            for row in data.get("rows", []) for b in row.get("blocks", [])]


def judge_probe_window(data: dict[str, Any], thresholds: Thresholds | None = None) -> dict[str, Any]:
    """The verdict on one bench run, JSON-ready: valid, reasons, notes, the GPU, the power cap, the
    clock of each implementation and of ours against each baseline."""
    thresholds = thresholds or Thresholds()
    rules = thresholds.validity_rules()
    gpu = probe_gpu(data)
    out: dict[str, Any] = {"mode": rules.mode, "gpu": {"index": gpu.index, "uuid": gpu.uuid,
                                                      "name": gpu.name, "pci_bus_id": gpu.pci_bus_id}}
    snapshots = probe_snapshots(data.get("gpu_samples") or [], gpu)
    if not snapshots:
        why = data.get("gpu_watch_error") or "no NVML samples"
        return {**out, "valid": False, "checked": False, "verdict": "unwatched",
                "reasons": [f"the GPU was not watched ({why})"], "notes": [], "evidence": {}}
    samples = [snap.samples[0] for snap in snapshots]
    window = judge_window(snapshots, float(data["started"]), float(data["finished"]),
                          own_pids={int(data["pid"])}, rules=rules,
                          gpus={gpu.uuid} if gpu.uuid else None)
    reasons, notes = list(window.reasons), list(window.notes)
    inside = samples_in_blocks(probe_blocks(data), samples)
    comparisons = []
    if inside:
        cap_explains = rules.mode == "comparable" or "power cap" in rules.tolerate
        implemented = {impl for _, impl in inside}
        for baseline in (b for b in compared_with(data) if b in implemented):
            c = compare_clocks(inside, baseline, rules.clock_difference, cap_explains)
            (notes if c.comparable else reasons).append(c.line(rules.clock_difference))
            comparisons.append({**c.as_json(), "line": c.line(rules.clock_difference)})
    else:
        notes.append("clocks per implementation not recorded (a probe from before timed block spans)")
    cap = next((t for t in window.evidence.get("throttle", []) if t["reason"] == "power cap"), None)
    valid = not reasons
    out.update(
        valid=valid, checked=window.checked, reasons=reasons, notes=notes,
        verdict=("comparable" if rules.mode == "comparable" else "valid") if valid else "suspect",
        power_cap=None if cap is None else {"seconds": cap["seconds"], "fraction": cap["fraction"]},
        clocks={impl: c.as_json() for impl, c in impl_clocks(inside).items()},
        config_clocks=config_clocks(inside), comparisons=comparisons, evidence=window.evidence)
    if rules.mode == "strict" and cap is not None and not cap["tolerated"]:
        out["hint"] = STRICT_POWER_CAP_HINT
    return out
