"""The 2×H200 recording (tests/fixtures/gpu/multigpu, capture_multigpu.sh on a lent box): a
foreign matmul load on physical GPU 1 the whole time; the bench gate pinned to GPU 1 by UUID,
to GPU 0 by PCI bus id, and run with CUDA_VISIBLE_DEVICES=1. Each probe's own NVML samples are
judged again by today's code: the GPU it ran on is found by UUID, never by ordinal."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path
from typing import Any

import pytest

from cockpit.gates.bench.validity_rules import judge_probe_window

HERE = Path(__file__).parent / "fixtures" / "gpu" / "multigpu"
GPU0 = "GPU-6cee6002-d251-df96-ed51-99a6dcf12352"
GPU1 = "GPU-ef6c65f7-659d-3b71-fb21-1a8c114586fa"


def probe(run: str) -> dict[str, Any]:
    with tarfile.open(HERE / "probes.tar.gz") as tar:
        member = tar.extractfile(f"results/{run}.json")
        assert member is not None
        return json.load(io.TextIOWrapper(member, encoding="utf-8"))


def gate(name: str) -> dict[str, Any]:
    return json.loads((HERE / name).read_text())


@pytest.mark.parametrize(("run", "recorded", "uuid"), [
    ("004-bench", "bench-gpu1.json", GPU1),      # pinned to GPU 1 by its UUID
    ("006-bench", "bench-visible1.json", GPU1),  # CUDA_VISIBLE_DEVICES=1: cuda:0 is NVML's GPU 1
])
def test_the_bench_on_the_loaded_gpu_is_suspect_for_the_foreign_process(run: str, recorded: str, uuid: str) -> None:
    data = probe(run)
    assert data["gpu"]["nvml_uuid"] == uuid
    verdict = judge_probe_window(data)
    assert not verdict["valid"]
    assert any("GPU 1 (GPU-ef6c65f7)" in r and "is not ours" in r for r in verdict["reasons"])
    assert "SUSPECT" in gate(recorded)["summary"]


def test_the_bench_on_the_other_gpu_stays_comparable_while_gpu_1_is_loaded() -> None:
    data = probe("005-bench")  # pinned to GPU 0 by PCI bus id
    assert data["gpu"]["nvml_uuid"] == GPU0
    verdict = judge_probe_window(data)
    assert verdict["valid"], verdict["reasons"]
    assert verdict["evidence"]["foreign"] == []
    assert "comparable" in gate("bench-gpu0.json")["summary"]


def test_the_env_gate_maps_cuda_ordinals_to_nvml_gpus() -> None:
    def mapping(name: str) -> dict[str, Any]:
        return next(c for c in gate(name)["result"]["checks"] if c["name"] == "gpu_mapping")

    plain, visible1 = mapping("env.json"), mapping("env-visible1.json")
    assert plain["status"] == "pass" and "cuda:1 → NVML 1 GPU-ef6c65f7" in plain["value"]
    assert visible1["status"] == "warn" and "cuda:0 → NVML 1 GPU-ef6c65f7" in visible1["value"]
