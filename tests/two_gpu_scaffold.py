"""TEST SCAFFOLDING, until a real 2×H200 recording exists (tests/fixtures/gpu/capture_multigpu.sh
makes one): a two-GPU box assembled from the one real single-H200 recording of a load
(tests/fixtures/telemetry/loaded-h200.jsonl).

GPU 0 is that recording as it is (the load, pid 445, is the bench's own process); GPU 1 is the
same recording again with its process renumbered to pid 7001 ("train.py", somebody else's
training job). The two UUIDs are made up here and are not the recorded card's. Everything else
(clocks, power, the power cap, utilization) is what the H200 did.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from cockpit.telemetry.recording import Recording, read_recording
from cockpit.telemetry.sample import GpuProcess, Snapshot

LOADED = read_recording(Path(__file__).parent / "fixtures" / "telemetry" / "loaded-h200.jsonl")
OURS_UUID = "GPU-5ca1f01d-0000-4000-8000-000000000000"
THEIRS_UUID = "GPU-5ca1f01d-0001-4000-8000-000000000001"
OUR_PID, THEIR_PID = 445, 7001
LOAD_T0, LOAD_T1 = 1795303191.641, 1795303221.648  # the load ran then (capture.log)


def two_gpu_box() -> Recording:
    """The scaffold box: GPU 0 (OURS_UUID) runs our load, GPU 1 (THEIRS_UUID) someone else's."""
    (gpu,) = LOADED.gpus
    gpus = (replace(gpu, index=0, uuid=OURS_UUID), replace(gpu, index=1, uuid=THEIRS_UUID))
    snapshots = []
    for snap in LOADED.snapshots:
        (ours,) = snap.samples
        theirs = replace(ours, index=1, processes=tuple(
            GpuProcess(THEIR_PID, "train.py", p.used_mib, (1,)) for p in ours.processes))
        snapshots.append(Snapshot(snap.t, (ours, theirs), gpus, snap.tick_us, slow=snap.slow))
    return Recording(Path("two-gpu-scaffold.jsonl"), gpus, tuple(snapshots))
