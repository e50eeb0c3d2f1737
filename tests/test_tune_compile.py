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
from cockpit.tune.header import keep, read_current, render, write_header
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


def test_a_kept_winner_is_its_archs_tile_and_the_l4_build_keeps_its_own(toolchain, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The H100's winner (160 KB per block: Hopper only) goes into the header for sm_90: an sm_90
    build takes it, an sm_89 build of the same checkout keeps the L4's tile (and still compiles
    under the L4's 99 KB), a later L4 keep leaves the H100's entry alone."""
    import subprocess

    csrc = tmp_path / "csrc"
    shutil.copytree(CSRC, csrc)
    (csrc / "tuned_config.h").unlink(missing_ok=True)  # a checkout before any tune kept a tile
    assert read_current(csrc, "sm_90") == DEFAULTS
    winner = KernelParams(128, 128, 8, 1, 2, True)
    header = write_header(csrc, render(keep(csrc, "sm_90", {128: winner}, {128: "1.12x"}, 232448)))
    assert read_current(csrc, "sm_90") == {64: DEFAULTS[64], 128: winner}
    assert read_current(csrc, "sm_89") == read_current(csrc) == DEFAULTS
    assert "160 KB per block: more than an L4 allows" in header.read_text()

    def build(*flags: str) -> Path:
        out = tmp_path / f"lib{len(list(tmp_path.glob('lib*.so')))}.so"
        done = subprocess.run([toolchain.nvcc, "-std=c++17", "-O0", "-shared", "-Xcompiler", "-fPIC", *flags,
                               str(csrc / "attention.cu"), "-o", str(out)], capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
        return out

    h100 = build("-arch=sm_90")
    assert library_config(h100, 128)["stages"] == 2 and library_config(h100, 128)["smem_bytes"] == 160 * 1024
    l4 = build("-arch=sm_89")
    assert library_config(l4, 128)["block_n"] == DEFAULTS[128].block_n and library_config(l4, 128)["smem_bytes"] == 48 * 1024
    both = build("-gencode=arch=compute_89,code=sm_89", "-gencode=arch=compute_90,code=sm_90")
    assert library_config(both, 128)["block_n"] == DEFAULTS[128].block_n  # host and devices agree
    l4_winner = KernelParams(64, 64, 2, 2, 1, False)
    write_header(csrc, render(keep(csrc, "sm_89", {128: l4_winner}, {}, 99 * 1024)))
    assert read_current(csrc, "sm_89")[128] == l4_winner and read_current(csrc, "sm_90")[128] == winner
    assert library_config(build("-arch=sm_89"), 128)["block_n"] == 64
    assert library_config(build("-arch=sm_90", "-DCOCKPIT_ATTN_D128_BN=32", "-DCOCKPIT_ATTN_D128_STAGES=1"),
                          128)["block_n"] == 32  # the command line still wins


def test_a_header_from_before_the_table_reads_as_every_archs_and_is_rewritten_as_one(tmp_path: Path) -> None:
    csrc = tmp_path / "csrc"
    csrc.mkdir()
    (csrc / "tuned_config.h").write_text("#pragma once\n#ifndef COCKPIT_ATTN_D128_BN\n#define COCKPIT_ATTN_D128_BN 64\n"
                                         "#endif\n")
    old = KernelParams(**{**DEFAULTS[128].as_dict(), "block_n": 64})
    assert read_current(csrc, "sm_90")[128] == read_current(csrc, "sm_89")[128] == old
    text = render(keep(csrc, "sm_90", {64: DEFAULTS[64]}, {}, 232448))
    assert "#define COCKPIT_ATTN_D128_BN" not in text and "/* every arch D=128: BM128 BN64" in text
    write_header(csrc, text)
    assert read_current(csrc, "sm_89")[128] == old and read_current(csrc, "sm_90")[64] == DEFAULTS[64]
