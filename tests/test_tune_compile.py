"""Compiling configurations as the search does, with the real nvcc (CI has it, no GPU): each
one alone into a small library with a C entry, for sm_89 and sm_90, cached under its content so
nothing compiles twice, and a killed compile leaves nothing that stops the next one."""

from __future__ import annotations

import ctypes
import shutil
from pathlib import Path

import pytest

from cockpit.hardware.limits import LIMITS
from cockpit.tune.compile import CompilePool, compile_config, content_key, find_toolchain
from cockpit.tune.feasibility import after_compile, register_estimate
from cockpit.tune.header import read_current, render, write_header
from cockpit.tune.space import DEFAULTS, KernelParams

REPO = Path(__file__).resolve().parent.parent
CSRC = REPO / "csrc"
FIELDS = ("block_m", "block_n", "warps", "min_blocks", "stages", "o_smem", "smem_bytes", "threads", "q_regs")


@pytest.fixture(scope="module")
def toolchain():  # type: ignore[no-untyped-def]
    if shutil.which("nvcc") is None:
        pytest.fail("nvcc is not on PATH: the CI machine has CUDA's nvcc; install the CUDA toolkit")
    return find_toolchain()


def library_config(path: Path, head_dim: int) -> dict[str, int]:
    lib = ctypes.CDLL(str(path))
    values = (ctypes.c_int * len(FIELDS))()
    assert lib.cockpit_attn_kernel_config(head_dim, values, len(FIELDS)) == len(FIELDS)
    return dict(zip(FIELDS, list(values), strict=True))


@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
def test_each_configuration_compiles_alone_into_its_own_library_and_says_what_it_is(
        toolchain, tmp_path: Path, arch: str) -> None:  # type: ignore[no-untyped-def]
    limits = LIMITS[arch]
    configs = [(DEFAULTS[64], 64), (KernelParams(128, 64, 4, 1, 2, False), 64),
               (KernelParams(64, 64, 4, 2, 1, True), 128), (KernelParams(128, 32, 4, 1, 1, True, False), 128)]
    for params, head_dim in configs:
        built = compile_config(toolchain, CSRC, tmp_path, params, head_dim, arch, limits.smem_per_block_optin)
        assert built.library is not None and built.library.exists(), built.error
        assert not built.cached and 0 < built.seconds < 60
        assert len(built.kernels) == 4 and {k.arch for k in built.kernels} == {arch}  # fp16/bf16 x causal
        assert library_config(built.library, head_dim) == {
            "block_m": params.block_m, "block_n": params.block_n, "warps": params.warps,
            "min_blocks": params.min_blocks, "stages": params.stages, "o_smem": int(params.o_smem),
            "smem_bytes": params.smem_bytes(head_dim), "threads": params.threads, "q_regs": int(params.q_regs)}
        assert min(k.registers for k in built.kernels) >= register_estimate(params, head_dim) - 16
    default = compile_config(toolchain, CSRC, tmp_path, DEFAULTS[64], 64, arch, limits.smem_per_block_optin)
    assert default.cached and default.seconds == 0 and len(default.kernels) == 4
    assert after_compile(DEFAULTS[64], 64, limits, 0.125, list(default.kernels)) is None  # no spills


def test_a_spilling_configuration_is_rejected_after_ptxas_says_so(toolchain, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # The D=64 default with two K/V stages: 32 rows per warp, Q and two K/V tiles in flight.
    params = KernelParams(128, 128, 4, 2, 2, False, q_regs=False)
    built = compile_config(toolchain, CSRC, tmp_path, params, 64, "sm_90", LIMITS["sm_90"].smem_per_block_optin)
    rejection = after_compile(params, 64, LIMITS["sm_90"], 0.125, list(built.kernels))
    assert rejection is not None and rejection.limit == "spills"
    assert rejection.text.startswith("ptxas spills ") and "(255 registers)" in rejection.text


def test_the_cache_key_follows_the_source_the_flags_and_the_config_and_a_killed_compile_leaves_no_lock(
        toolchain, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    csrc = tmp_path / "csrc"
    shutil.copytree(CSRC, csrc)
    key = content_key(csrc, toolchain, DEFAULTS[64], 64, "sm_90", 232448)
    assert key != content_key(csrc, toolchain, DEFAULTS[64], 64, "sm_89", 232448)
    assert key != content_key(csrc, toolchain, DEFAULTS[128], 64, "sm_90", 232448)
    (csrc / "attention.cu").write_text((csrc / "attention.cu").read_text() + "\n// edited\n")
    assert key != content_key(csrc, toolchain, DEFAULTS[64], 64, "sm_90", 232448)
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / f".{key}.abc.so.tmp").write_bytes(b"half a library from a killed run")
    pool = CompilePool(lambda p, d: compile_config(toolchain, csrc, cache, p, d, "sm_90", 232448), workers=2)
    first, again = pool.submit(DEFAULTS[64], 64), pool.submit(DEFAULTS[64], 64)
    assert first is again  # asked twice, compiled once
    built = first.result(timeout=300)
    assert built.library is not None and not built.cached and pool.queued == 0
    pool.close()
    assert sorted(p.name for p in cache.iterdir() if not p.name.startswith(".")) == sorted(
        [f"{built.key}.so", f"{built.key}.ptxas.txt"])


def test_a_kept_winner_is_a_header_the_kernel_builds_with(toolchain, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    csrc = tmp_path / "csrc"
    shutil.copytree(CSRC, csrc)
    assert read_current(csrc) == DEFAULTS
    winner = KernelParams(128, 128, 8, 1, 2, True)  # 160 KB per block: Hopper only
    header = write_header(csrc, render({64: DEFAULTS[64], 128: winner}, {128: "1.12x"}, 232448))
    assert read_current(csrc) == {64: DEFAULTS[64], 128: winner}
    assert "not on an L4" in header.read_text() and "#define COCKPIT_ATTN_MAX_SMEM 232448" in header.read_text()
    out = tmp_path / "lib.so"
    import subprocess

    build = subprocess.run([toolchain.nvcc, "-std=c++17", "-O3", "-shared", "-Xcompiler", "-fPIC", "-arch=sm_90",
                            str(csrc / "attention.cu"), "-o", str(out)], capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stderr[-2000:]
    assert library_config(out, 128)["stages"] == 2 and library_config(out, 128)["smem_bytes"] == 160 * 1024
