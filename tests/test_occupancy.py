"""Occupancy on paper: the cockpit's calculator gives what CUDA's own calculator
(cuda_occupancy.h, run here without a GPU) gives for every GPU in the limits table, and the
attention kernel's numbers on an L4 and an H100 are the ones csrc/README.md states."""

from __future__ import annotations

import itertools
import shutil
import subprocess
from pathlib import Path

import pytest

from cockpit.hardware.limits import LIMITS, GpuLimits, arch_of, limits_for
from cockpit.hardware.occupancy import LIMITERS, occupancy

ORACLE = Path(__file__).parent / "fixtures" / "hardware" / "occupancy_oracle.cpp"
FACTOR_BITS = {"warps": 1, "registers": 2, "shared memory": 4, "blocks": 8}
BARRIERS = 16


@pytest.fixture(scope="module")
def oracle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("nvcc") is None:
        pytest.fail("nvcc is not on PATH: the CI machine has CUDA's nvcc; install the CUDA toolkit")
    exe = tmp_path_factory.mktemp("oracle") / "occupancy_oracle"
    subprocess.run(["nvcc", "-O1", "-o", str(exe), str(ORACLE)], check=True, capture_output=True,
                   timeout=300)
    return exe


def oracle_line(g: GpuLimits, threads: int, regs: int, static: int, dynamic: int,
                opt_in: bool) -> str:
    major, minor = divmod(int(g.arch.removeprefix("sm_")), 10)
    max_dynamic = dynamic if opt_in else g.smem_per_block_default - static
    return " ".join(map(str, (
        major, minor, g.max_threads_per_block, g.max_warps_per_sm * g.warp_size, g.regs_per_block,
        g.regs_per_sm, g.smem_per_block_default, g.smem_per_sm, g.smem_per_block_optin,
        g.smem_reserved_per_block, threads, regs, static, max_dynamic, dynamic)))


def test_the_calculator_matches_cudas_own_for_every_gpu_in_the_table(oracle: Path) -> None:
    grid = list(itertools.product(
        LIMITS.values(), (32, 96, 128, 192, 256, 384, 512, 1024), (0, 24, 32, 40, 64, 72, 96, 128, 168, 255),
        (0, 4096), (0, 1000, 16 * 1024, 32 * 1024, 48 * 1024, 80 * 1024, 96 * 1024, 99 * 1024,
                    160 * 1024, 200 * 1024, 227 * 1024, 228 * 1024), (True, False)))
    out = subprocess.run([str(oracle)], input="\n".join(oracle_line(*case) for case in grid) + "\n",
                         capture_output=True, text=True, check=True, timeout=120).stdout.split("\n")
    mismatches = []
    for (g, threads, regs, static, dynamic, opt_in), line in zip(grid, out, strict=False):
        blocks, factors = map(int, line.split())
        factors &= ~BARRIERS  # one barrier per block only ever ties with the block limit
        ours = occupancy(g, threads, regs, dynamic, static, opt_in)
        bits = sum(FACTOR_BITS[name] for name in ours.limiters)
        if ours.blocks_per_sm != blocks or (blocks and bits != factors):
            mismatches.append((g.arch, threads, regs, static, dynamic, opt_in, blocks, factors, ours))
    assert len(grid) > 20_000
    assert mismatches == []


def test_the_attention_kernels_on_an_l4_and_an_h100() -> None:
    l4, h100 = LIMITS["sm_89"], LIMITS["sm_90"]
    d64 = occupancy(l4, 256, 128, 32 * 1024)  # 2 blocks by __launch_bounds__(256, 2)
    assert (d64.blocks_per_sm, d64.warps_per_sm, d64.limiters) == (2, 16, ("registers",))
    assert round(d64.fraction, 3) == 0.333 and d64.smem_per_block == 33 * 1024
    d128 = occupancy(l4, 256, 255, 96 * 1024)  # one block, by registers and shared memory alike
    assert (d128.blocks_per_sm, d128.limiters) == (1, ("registers", "shared memory"))
    hopper = occupancy(h100, 256, 255, 96 * 1024)  # 228 KB would hold two; 255 regs allow one
    assert (hopper.blocks_per_sm, hopper.warps_per_sm, hopper.limiters) == (1, 8, ("registers",))
    assert hopper.fraction == 0.125


def test_a_block_that_cannot_launch_says_why() -> None:
    l4 = LIMITS["sm_89"]
    over = occupancy(l4, 256, 128, 100 * 1024)
    assert over.blocks_per_sm == 0 and over.limiters == ("shared memory",)
    assert over.why_not == "100 KB of shared memory per block; L4 (sm_89) allows 99 KB"
    no_opt_in = occupancy(l4, 256, 128, 64 * 1024, opt_in=False)
    assert no_opt_in.blocks_per_sm == 0
    assert no_opt_in.why_not == "64 KB of dynamic shared memory without the opt-in: the default allows 48 KB"
    assert occupancy(LIMITS["sm_90"], 256, 128, 100 * 1024).blocks_per_sm == 2  # Hopper holds it
    too_many = occupancy(l4, 1024, 255, 0)
    assert too_many.blocks_per_sm == 0 and too_many.limiters == ("registers",)
    assert "255 registers x 1024 threads" in too_many.why_not


def test_small_blocks_run_into_the_block_limit_and_big_ones_into_the_warp_slots() -> None:
    h100 = LIMITS["sm_90"]
    assert occupancy(h100, 32, 32, 0).limiters == ("blocks",)
    full = occupancy(h100, 1024, 32, 0)
    assert (full.blocks_per_sm, full.fraction, full.limiters) == (2, 1.0, ("warps", "registers"))
    assert set(LIMITERS) == set(FACTOR_BITS)


@pytest.mark.parametrize(("text", "arch"), [
    ("sm_90a", "sm_90"), ("9.0a", "sm_90"), ("9.0", "sm_90"), ("90", "sm_90"), ("8.9", "sm_89"),
    ("compute_89", "sm_89"), ("sm_100a", "sm_100"), ("12.0", "sm_120"), ("sm_89", "sm_89")])
def test_an_arch_is_read_in_every_spelling_the_tools_use(text: str, arch: str) -> None:
    assert arch_of(text) == arch


def test_an_unknown_arch_has_no_limits() -> None:
    assert limits_for("sm_75") is None and limits_for("gfx90a") is None
    assert limits_for("9.0a") is LIMITS["sm_90"] and LIMITS["sm_89"].label == "L4 (sm_89)"
