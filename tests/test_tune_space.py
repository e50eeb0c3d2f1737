"""The space an engineer asks `cockpit tune` to search, held to a GPU's limits before anything
is compiled: on an L4 (from its published limits) and an H100/H200 (recorded), from a machine
with no GPU; and every way `[tune]` can be written wrong, named by its cockpit.toml line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cockpit.config import ConfigError, load_config
from cockpit.hardware.limits import LIMITS
from cockpit.tune.feasibility import check, register_cap, register_estimate
from cockpit.tune.plan import make_plan
from cockpit.tune.space import DEFAULTS, KernelParams, resolve_space
from cockpit.tune.target import Gpu, pick_gpus, resolve_target
from tests.no_gpu import no_gpu_env

REPO = Path(__file__).resolve().parent.parent
L4, H100 = LIMITS["sm_89"], LIMITS["sm_90"]


def test_the_hand_picked_configurations_pass_every_limit_on_an_l4_and_an_h100() -> None:
    for limits in (L4, H100):
        for head_dim, params in DEFAULTS.items():
            assert check(params, head_dim, limits, 0.125) is None
    assert DEFAULTS[64].smem_bytes(64) == 48 * 1024 and DEFAULTS[128].smem_bytes(128) == 48 * 1024


def test_shared_memory_is_counted_as_launched_with_its_stages_against_each_gpus_opt_in() -> None:
    double = KernelParams(128, 128, 8, 1, 2, True)
    assert double.smem_bytes(128) == (128 + 2 * 2 * 128) * 128 * 2 == 160 * 1024
    rejected = check(double, 128, L4, 0.125)
    assert rejected is not None and rejected.limit == "shared memory"
    assert rejected.text == "160 KB of shared memory per block; L4 (sm_89) allows 99 KB"
    assert check(double, 128, H100, 0.125) is None  # 227 KB per block on Hopper: one block of 8 warps per SM


def test_registers_are_a_lower_bound_against_what_launch_bounds_leave() -> None:
    # The defaults measured 255 and 236-237 registers (ptxas -v, sm_89 and sm_90): the estimate
    # stays under.
    assert register_estimate(DEFAULTS[64], 64) <= 255 and register_estimate(DEFAULTS[128], 128) <= 236
    assert register_cap(DEFAULTS[64], H100) == 255 and register_cap(DEFAULTS[128], H100) == 255
    two_rows = KernelParams(128, 128, 4, 1, 1, True)  # 32 rows per warp at D=128: 2 x (32+64+64) + 24
    rejected = check(two_rows, 128, H100, 0.125)
    assert rejected is not None and rejected.limit == "registers"
    assert rejected.text == "needs at least 344 registers per thread; 128 threads x 1 blocks/SM leave 255"


def test_tile_divisibility_and_the_occupancy_floor_name_their_numbers() -> None:
    odd = check(KernelParams(64, 64, 8, 1, 1, True), 64, H100, 0.125)
    assert odd is not None and odd.limit == "tile divisibility" and "8 per warp" in odd.text
    split = check(KernelParams(256, 16, 16, 1, 1, True), 64, H100, 0.125)
    assert split is not None and split.text == ("a 16-key tile is 128 16-byte copies, which 512 threads "
                                                "cannot split evenly")
    thin = check(KernelParams(64, 128, 2, 1, 2, True), 128, H100, 0.125)
    assert thin is not None and thin.limit in ("registers", "occupancy")
    low = check(KernelParams(64, 64, 4, 1, 2, True), 128, H100, 0.5)
    assert low is not None and low.limit == "occupancy" and "under the 50.0% floor" in low.text


def test_an_l4s_space_is_smaller_than_an_h100s_and_every_configuration_is_accounted_for() -> None:
    config = load_config(REPO)
    l4 = make_plan(config.tune, config.workload, resolve_target("8.9", {}, []))
    h100 = make_plan(config.tune, config.workload, resolve_target(None, {"TORCH_CUDA_ARCH_LIST": "9.0"}, []))
    for plan in (l4, h100):
        for space in plan.spaces:
            assert space.total == len(space.feasible) + len(space.rejected) == 960
            assert sum(space.rejected_by().values()) == len(space.rejected)
    assert len(l4.space(128).feasible) < len(h100.space(128).feasible)
    assert l4.space(128).rejected_by()["shared memory"] > h100.space(128).rejected_by().get("shared memory", 0)


def run_cli(*args: str, cwd: Path = REPO, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:

    full = dict(no_gpu_env(), **(env or {}))  # CI's machine, without a GPU, whatever this one has
    full.pop("TORCH_CUDA_ARCH_LIST", None) if env is None else None
    return subprocess.run([sys.executable, "-m", "cockpit", *args], capture_output=True, text=True, cwd=cwd,
                          env=full, timeout=120)


def test_a_dry_run_for_an_l4_prints_the_space_and_its_json_from_a_machine_without_a_gpu() -> None:
    text = run_cli("tune", "--dry-run", "--arch", "8.9")
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert lines[0].startswith("target: L4 (sm_89) (--arch 8.9); budget 15 min or 100 trials per head dim")
    assert any(line.startswith("D=128: 960 configurations, ") and "left to search" in line for line in lines)
    out = run_cli("tune", "--dry-run", "--json", env={"TORCH_CUDA_ARCH_LIST": "8.9"})
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["target"] == {"arch": "sm_89", "gpu": "L4", "source": "TORCH_CUDA_ARCH_LIST=8.9"}
    d128 = next(h for h in data["head_dims"] if h["head_dim"] == 128)
    assert d128["left"] + d128["rejected"] == d128["total"] and d128["rejected_by"]["shared memory"] > 0


def test_without_a_gpu_or_an_arch_the_search_says_how_to_name_one() -> None:
    out = run_cli("tune", "--dry-run", env={"TORCH_CUDA_ARCH_LIST": ""})
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.strip() == ("cockpit: no GPU here to tune for: name the target, e.g. cockpit tune "
                                  "--dry-run --arch 8.9 (an L4) or --arch 9.0 (H100/H200)")
    assert resolve_target("9.0a", {}, []).limits.arch == "sm_90"
    with pytest.raises(Exception, match="names several arches"):
        resolve_target(None, {"TORCH_CUDA_ARCH_LIST": "8.9;9.0+PTX"}, [])
    with pytest.raises(Exception, match="'sm_75' is not an arch cockpit has limits for"):
        resolve_target("7.5", {}, [])


def test_gpus_are_picked_by_nvidia_smi_index_or_uuid_never_by_cuda_ordinal() -> None:
    gpus = [Gpu(0, "GPU-aaaa-1111", "H200", "sm_90"), Gpu(1, "GPU-bbbb-2222", "H200", "sm_90")]
    assert pick_gpus(gpus, None, {}) == gpus
    assert pick_gpus(gpus, "1", {}) == [gpus[1]]
    assert pick_gpus(gpus, None, {"CUDA_VISIBLE_DEVICES": "GPU-bbbb"}) == [gpus[1]]
    with pytest.raises(Exception, match=r"--gpus: '7' names no GPU \(GPUs here: 0 \(GPU-aaaa-1111\), 1 "):
        pick_gpus(gpus, "7", {})


@pytest.mark.parametrize(("toml", "message"), [
    ("[tune.space]\nblock_k = [32]\n",
     "cockpit.toml:2: tune.space.block_k: unknown tunable (the kernel's tunables: block_m, block_n, warps, "
     "min_blocks, stages, o_smem, q_regs)"),
    ("[tune.space]\nblock_m = [64, 40]\n",
     "cockpit.toml:2: tune.space.block_m: 40 is not a value the kernel accepts for query rows per block "
     "(expected a multiple of 16 from 16 to 256)"),
    ("[tune.space]\nstages = [3]\n",
     "cockpit.toml:2: tune.space.stages: 3 is not a value the kernel accepts for K/V shared-memory buffers "
     "(2 = double buffered) (expected 1 or 2)"),
    ("[tune]\ntrials = 10\nseed_trials = 20\n",
     "cockpit.toml:3: tune.seed_trials: 20 seed configurations do not fit in trials = 10; lower seed_trials "
     "or raise trials"),
    ("[tune]\nbudget_min = 0\n", "cockpit.toml:2: tune.budget_min: 0 is not allowed (expected minutes > 0, at most a week)"),
])
def test_a_bad_tune_table_is_one_line_naming_its_cockpit_toml_line(tmp_path: Path, toml: str,
                                                                    message: str) -> None:
    (tmp_path / "cockpit.toml").write_text(toml)
    with pytest.raises(ConfigError) as err:
        resolve_space(load_config(tmp_path).tune)  # the knobs are the tuner's to judge, at `cockpit tune`
    assert str(err.value) == f"{tmp_path / 'cockpit.toml'}:{message.split(':', 1)[1]}"


def test_an_empty_space_or_a_budget_too_small_for_the_seed_names_the_line_when_the_target_is_known(
        tmp_path: Path) -> None:
    (tmp_path / "cockpit.toml").write_text("[tune]\nhead_dims = [128]\nbudget_min = 30\n\n[tune.space]\n"
                                           "block_m = [64]\nblock_n = [128]\nwarps = [2]\nstages = [2]\n")
    config = load_config(tmp_path)
    with pytest.raises(ConfigError) as err:
        make_plan(config.tune, config.workload, resolve_target("8.9", {}, []))
    assert str(err.value).startswith(f"{tmp_path / 'cockpit.toml'}:5: tune.space: no configuration for D=128 "
                                     "fits L4 (sm_89) (")
    (tmp_path / "cockpit.toml").write_text("[tune]\nbudget_min = 1\nseed_trials = 30\n")
    config = load_config(tmp_path)
    with pytest.raises(ConfigError) as err:
        make_plan(config.tune, config.workload, resolve_target("9.0", {}, []))
    assert str(err.value).startswith(f"{tmp_path / 'cockpit.toml'}:2: tune.budget_min: 1 min cannot hold the "
                                     "seed: 30 configurations x 2 head dims take at least ")


def test_trials_on_the_command_line_below_the_seed_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "cockpit.toml").write_text("[tune]\nseed_trials = 20\n")
    out = run_cli("--workspace", str(tmp_path), "tune", "--dry-run", "--arch", "9.0", "--trials", "5")
    assert out.returncode == 2
    assert out.stderr.strip().endswith("--trials 5 is fewer than the seed's 20 configurations "
                                       "(tune.seed_trials); lower seed_trials or raise --trials")


def test_a_search_on_an_h200_says_h200_not_the_first_card_of_its_arch() -> None:
    # The 2xH200 run's report said "H100 (sm_90)": the arch's limits are shared, the name is not.
    present = resolve_target(None, {}, [Gpu(0, "GPU-aaaa-1111", "H200", "sm_90")])
    assert present.label == "H200 (sm_90)" and present.limits.arch == "sm_90"
    assert resolve_target("9.0", {}, []).label == "H100 (sm_90)"
    assert resolve_target("8.9", {}, []).label == "L4 (sm_89)"
