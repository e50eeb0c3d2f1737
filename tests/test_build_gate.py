"""The Build gate without a GPU: the kernel compiles for the L4 and the H100 with nvcc, and what
ptxas says about it is read correctly; the probe refuses to build into a stale lock."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cockpit.gates.build import judge_build, resource_warnings
from cockpit.gates.build_log import KernelResources, parse_errors, parse_ptxas

REPO = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).parent / "fixtures" / "build"
PROBE = REPO / "cockpit" / "probes" / "build_probe.py"


def nvcc(source: Path, arch: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    if shutil.which("nvcc") is None:
        pytest.fail("nvcc is not on PATH: the CI machine has CUDA's nvcc; install the CUDA toolkit")
    return subprocess.run(
        ["nvcc", "-std=c++17", "-O3", "-Xptxas=-v", "-lineinfo", "--use_fast_math",
         f"-arch={arch}", "-c", str(source), "-o", str(tmp_path / f"{arch}.o")],
        capture_output=True, text=True, timeout=900)


@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
def test_the_attention_kernel_compiles_with_no_spills(arch: str, tmp_path: Path) -> None:
    out = nvcc(REPO / "csrc" / "attention.cu", arch, tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    kernels = parse_ptxas((out.stdout + out.stderr).splitlines())
    assert kernels, "ptxas -v printed no kernel"
    assert {k.arch for k in kernels} == {arch}
    for k in kernels:
        assert 0 < k.registers <= 255
        assert k.spill_stores == k.spill_loads == 0, f"{k.name} spills on {arch}"
    assert resource_warnings(kernels) == []


def test_too_much_shared_memory_is_named_with_the_kernel(tmp_path: Path) -> None:
    out = nvcc(FIXTURES / "too_much_shared.cu", "sm_89", tmp_path)
    assert out.returncode != 0
    lines = out.stderr.splitlines()
    [error] = [e for e in parse_errors(lines) if e.kind == "ptxas"]
    assert "'_Z3bigPf' uses too much shared data (0xcb20 bytes, 0xc000 max)" in error.message
    smem = {k.name: k.smem for k in parse_ptxas(lines)}
    assert smem == {"_Z3bigPf": 52000, "_Z9attn_likeILi128EEvPKfPfi": 32768,
                    "_Z9attn_likeILi64EEvPKfPfi": 16384}


def test_spills_and_shared_memory_over_the_limit_are_warnings() -> None:
    kernels = [KernelResources("_Z1kv", "sm_89", 255, 110 * 1024, 64, 64, 32),
               KernelResources("_Z1jv", "sm_90", 96, 110 * 1024, 0, 0, 0)]
    warnings = resource_warnings(kernels)
    assert len(warnings) == 2  # the sm_90 kernel fits in the H100's 227 KB
    assert "spills 96 bytes" in warnings[0]
    assert "110 KB smem, over sm_89's 99 KB per block" in warnings[1]


def test_a_probe_that_could_not_run_is_an_error_not_a_failure() -> None:
    verdict = judge_build(["cockpit-build: no GPU found to build for; set TORCH_CUDA_ARCH_LIST"], 2, {})
    assert verdict.status == "error"
    assert "TORCH_CUDA_ARCH_LIST" in verdict.summary


def probe(ws: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(PROBE), "--workspace", str(ws), "--out",
                           str(ws / "result.json")], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})


def test_the_probe_reports_a_stale_lock_and_never_deletes_it(tmp_path: Path) -> None:
    shutil.copytree(REPO / "csrc", tmp_path / "csrc")
    lock = tmp_path / "build" / "cockpit_attn" / "lock"
    lock.parent.mkdir(parents=True)
    lock.touch()
    old = time.time() - 2 * 3600
    os.utime(lock, (old, old))
    out = probe(tmp_path, {"TORCH_CUDA_ARCH_LIST": "8.9"})
    assert out.returncode == 1
    assert f"{lock} (120 min old); if no build is running, delete it: rm {lock}" in out.stdout
    assert lock.exists()


def test_the_probe_needs_sources_and_a_target_arch(tmp_path: Path) -> None:
    out = probe(tmp_path)
    assert out.returncode == 2 and "no csrc/*.cu or csrc/*.cpp" in out.stdout
    shutil.copytree(REPO / "csrc", tmp_path / "csrc")
    if shutil.which("nvidia-smi") is None:
        out = probe(tmp_path, {"TORCH_CUDA_ARCH_LIST": ""})
        assert out.returncode == 2 and "set TORCH_CUDA_ARCH_LIST" in out.stdout
