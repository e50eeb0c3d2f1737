"""One tune engine for every workload: what the attention search had that every workload now gets.
A rule asks whether a block fits the target GPU; a relinked variant rebuilds only its .cu objects and
imports under a name of its own; the seed starts next to the current values, the profile's moves first."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cockpit.hardware.limits import limits_for
from cockpit.probes.relink import prepare, with_defines
from cockpit.tune.header import render
from cockpit.tune.seeds import findings, neighbours, profile_moves, seed_order
from cockpit.workload.builds import Extension
from cockpit.workload.resources import fits
from cockpit.workload.tuned import KnobDecl, Winner


def limits(arch: str) -> dict[str, object]:
    from dataclasses import asdict

    found = limits_for(arch)
    assert found is not None
    return {**asdict(found), "occupancy_floor": 0.125}


def test_a_block_is_judged_against_the_target_gpu_and_without_one_only_the_rule_speaks() -> None:
    # the H100's D=128 attention tile: 64 KB of shared memory, 128 threads
    assert fits(limits("sm_90"), threads=128, smem=64 * 1024, registers=200) is None
    # on an L4 the same tile leaves one block per SM: 4 warps of 48 slots is under the floor
    said = fits(limits("sm_89"), threads=128, smem=64 * 1024, registers=200)
    assert said is not None and "under the 12.5% floor" in said
    assert "allows 227 KB" in str(fits(limits("sm_90"), threads=128, smem=272 * 1024))
    assert "leave 255" in str(fits(limits("sm_90"), threads=64, smem=0, registers=280))
    assert fits({}, threads=4096, smem=10**9) is None  # described without a GPU


NINJA = """ninja_required_version = 1.3
cxx = c++
nvcc = /usr/local/cuda/bin/nvcc
cflags = -DTORCH_EXTENSION_NAME=cockpit_attn -O3
cuda_cflags = -DTORCH_EXTENSION_NAME=cockpit_attn --expt-relaxed-constexpr
cuda_post_cflags = -O3 -Xptxas=-v -DCOCKPIT_ATTN_D128_BN=32 -std=c++17
"""


def test_a_relinked_variant_changes_only_nvccs_flags_and_keeps_the_bases_objects(tmp_path: Path) -> None:
    out = with_defines(NINJA, ["-DCOCKPIT_ATTN_D128_BN=64", "-DCOCKPIT_ATTN_D128_BM=128"])
    assert "cflags = -DTORCH_EXTENSION_NAME=cockpit_attn -O3" in out  # the binding's command is unchanged
    assert "cuda_post_cflags = -O3 -Xptxas=-v -std=c++17 -DCOCKPIT_ATTN_D128_BN=64 -DCOCKPIT_ATTN_D128_BM=128" in out
    assert "BN=32" not in out
    with pytest.raises(ValueError, match="not torch's cpp_extension build"):
        with_defines("cflags = -O3\n", ["-DX=1"])
    base, variant = tmp_path / "base", tmp_path / "v1"
    base.mkdir()
    (base / "build.ninja").write_text(NINJA)
    for name in ("binding.o", "attention.cuda.o", ".ninja_log", ".ninja_deps", "cockpit_attn.so"):
        (base / name).write_text(name)
        os.utime(base / name, (1_700_000_000, 1_700_000_000))
    prepare(base, variant, ["-DCOCKPIT_ATTN_D128_BN=64"])
    assert sorted(p.name for p in variant.iterdir()) == [
        ".ninja_deps", ".ninja_log", "attention.cuda.o", "binding.o", "build.ninja"]
    assert (variant / "binding.o").stat().st_mtime == 1_700_000_000  # ninja trusts it: not rebuilt


def test_relinked_variants_share_the_module_name_but_never_the_import_name(tmp_path: Path) -> None:
    base = Extension("cockpit_attn", ("csrc/attention.cu", "csrc/binding.cpp"), variant_build="relink")
    a, b = base.with_flags("aa", ["-DX=1"]), base.with_flags("bb", ["-DX=2"])
    assert a.module_name == b.module_name == "cockpit_attn"  # PyInit_cockpit_attn: the binding is not rebuilt
    assert (a.import_name, b.import_name) == ("cockpit_attn_vaa.cockpit_attn", "cockpit_attn_vbb.cockpit_attn")
    assert a.build_dir(tmp_path) == tmp_path / "build" / "tune" / "cockpit_attn_vaa"
    rebuilt = Extension("k", ("k.cu",)).with_flags("aa", ["-DX=1"])
    assert rebuilt.module_name == rebuilt.import_name == "k_vaa"


OPTIONS = {"block_m": (64, 128, 256), "block_n": (16, 32, 64, 128), "warps": (2, 4, 8)}
NAMES = list(OPTIONS)


def allowed() -> list[tuple[int, int, int]]:
    """16 or 32 rows a warp, as the attention kernel asks."""
    return [(m, n, w) for m in OPTIONS["block_m"] for n in OPTIONS["block_n"] for w in OPTIONS["warps"]
            if m / w in (16, 32)]


def test_the_seed_starts_next_to_the_current_values_and_a_step_takes_another_knob_along() -> None:
    current = (128, 32, 4)
    near = neighbours(current, OPTIONS, NAMES, allowed())
    assert near[:2] == [(256, 32, 8), (64, 32, 4)]  # 256 rows need warps along; 64 over 4 is 16 a warp
    assert (128, 64, 4) in near and (128, 16, 4) in near
    verdict = {"bottleneck": "latency", "recommendation": "larger tiles: more work per block",
               "notes": ["occupancy limited by shared memory (2 blocks/SM)"]}
    said = findings(verdict)
    assert {"latency", "larger tiles", "limited by shared memory"} <= set(said)
    moves = profile_moves({"block_n": {"larger tiles": +1}, "warps": {"latency": +1}}, said)
    assert moves == [("warps", 1), ("block_n", 1)]
    seeds, how = seed_order(allowed(), OPTIONS, NAMES, current, 6, kept_elsewhere=[(128, 128, 4)], moves=moves)
    assert seeds[0] == current and seeds[1] == (128, 128, 4)  # another arch's winner next
    assert seeds[2] in ((128, 32, 8), (256, 32, 8)) and (128, 64, 4) in seeds  # the profile's moves first
    assert "1 kept on other archs" in how and "from the profile" in how


def test_the_tuned_header_lists_every_archs_defines_as_an_x_macro() -> None:
    knobs = [KnobDecl("block_n", "define", "COCKPIT_ATTN_D{D}_BN", None),
             KnobDecl("o_smem", "define", "COCKPIT_ATTN_D{D}_O_SMEM", None),
             KnobDecl("num_warps", "kwarg", "num_warps", 4)]
    text = render(knobs, [Winner("sm_90", {"D": 128}, {"block_n": 64, "o_smem": True, "num_warps": 8}, "tune-1", "1.19x"),
                          Winner("sm_89", {"D": 64}, {"block_n": 32, "o_smem": False}, "tune-2", "1.02x")],
                  "workloads/attention/attention.tuned.json")
    assert "X(90, COCKPIT_ATTN_D128_BN, 64)" in text and "X(90, COCKPIT_ATTN_D128_O_SMEM, 1)" in text
    assert "X(89, COCKPIT_ATTN_D64_BN, 32)" in text and text.index("X(89") < text.index("X(90")
    assert "num_warps" not in text  # a kwarg reaches the candidate, not the compiler


def test_group_picks_the_groups_a_search_runs_and_a_wrong_one_is_one_line() -> None:
    from cockpit.errors import CockpitError
    from cockpit.tune.space import Group, picked

    found = [Group({"D": 64}, (), ()), Group({"D": 128}, (), ())]
    assert picked(found, None) == found
    assert picked(found, ["D=128"]) == [found[1]]
    with pytest.raises(CockpitError, match=r"--group D=96: no group of shapes has it \(the groups: D=64, D=128\)"):
        picked(found, ["D=96"])


def test_the_attention_examples_rule_keeps_the_h100_tile_and_refuses_it_on_an_l4() -> None:
    """The shipped example's own rule, through the contract: the H100's kept D=128 tile (BM128 BN64,
    64 KB) runs on an H100; on an L4 it leaves one block per SM, under the occupancy floor."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "attention_example", Path(__file__).resolve().parent.parent / "workloads" / "attention" / "attention.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    tile = {"block_m": 128, "block_n": 64, "warps": 4, "min_blocks": 1, "stages": 1, "o_smem": True,
            "q_regs": False}
    assert module.tile_rule(tile, limits("sm_90"), {"D": 128}) is None
    assert "floor" in str(module.tile_rule(tile, limits("sm_89"), {"D": 128}))
    assert module.tile_rule(module.HAND_PICKED[128], limits("sm_89"), {"D": 128}) is None  # the L4's own
    assert "per warp" in str(module.tile_rule({**tile, "warps": 8, "block_m": 64}, limits("sm_90"), {"D": 128}))


def tiled_workload(defaults: object = None) -> object:
    from cockpit.workload import Knob, Reference, Workload, axes

    def rule(k: dict[str, int], lim: dict[str, object], group: dict[str, int]) -> str | None:
        smem = k["tile"] * group["D"] * 2
        return fits(lim, threads=256, smem=smem)

    return Workload(
        name="tiled", candidates={"ours": lambda x: x}, references=(Reference("ref", lambda x: x, baseline=True),),
        make_inputs=lambda seed, **s: (), test_grid=axes(D=[64, 128]), bench_grid=axes(D=[64, 128], S=[1, 2]),
        knobs=(Knob("tile", (256, 512, 1024), macro="TILE_D{D}"),), rule=rule, keep_per=("D",),
        knob_defaults=defaults or (lambda D: {"tile": 256 if D == 128 else 512}), tune_grid=axes(D=[64, 128], S=[4]))


def test_a_rule_is_told_its_group_and_each_group_gets_its_own_space_and_start() -> None:
    from cockpit.probes.workload_load import manifest_json, space

    said = space(tiled_workload(), limits("sm_89"))  # type: ignore[arg-type]
    by_group = {str(g["key"]): g for g in said["groups"]}
    # a 1024-wide tile of D=128 is 256 KB: over the L4's 99 KB; at D=64 it is 128 KB, over too
    assert by_group["{'D': 64}"]["feasible"] == [[256], [512]]
    assert by_group["{'D': 128}"]["feasible"] == [[256]]
    manifest = manifest_json(tiled_workload(), "w.py", {})  # type: ignore[arg-type]
    assert manifest["knob_defaults"] == [{"group": {"D": 64}, "knobs": {"tile": 512}},
                                         {"group": {"D": 128}, "knobs": {"tile": 256}}]
    assert [r["shape"] for r in manifest["tune_grid"] or []] == [{"D": 64, "S": 4}, {"D": 128, "S": 4}]


def test_knob_defaults_that_raise_are_one_line_naming_the_workload_and_group() -> None:
    from cockpit.probes.workload_load import WorkloadLoadError, manifest_json

    with pytest.raises(WorkloadLoadError, match=r"^tiled: knob_defaults raised on \{'D': 64\}: KeyError: 64$"):
        manifest_json(tiled_workload(lambda D: {128: {"tile": 256}}[D]), "w.py", {})  # type: ignore[arg-type]
