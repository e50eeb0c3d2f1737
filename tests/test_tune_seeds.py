"""Where a search starts: from the L4's D=128 tile on an H100, the tile one step away (BN64, the
known 1.20x winner) is among the first configurations measured; the session's profile orders the
neighbours; tiles other archs kept come right after the current one, where this GPU allows them."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from cockpit.analysis.bottleneck import verdict
from cockpit.analysis.ncu import parse_ncu_csv
from cockpit.hardware.limits import limits_for
from cockpit.session import events
from cockpit.session.journal import JournalWriter
from cockpit.tune.feasibility import check
from cockpit.tune.header import keep, render, write_header
from cockpit.tune.seeds import kept_tiles, neighbours, profile_hints, profile_moves, seed_order
from cockpit.tune.space import DEFAULT_SPACE, DEFAULTS, KernelParams, configurations
from cockpit.tune.study import choices

NCU = Path(__file__).parent / "fixtures" / "gpu" / "ncu"
H100_WINNER = KernelParams(128, 64, 4, 1, 1, True, q_regs=False)  # 1.20x the L4's tile on an H100


def space(arch: str, head_dim: int = 128) -> tuple[list[KernelParams], dict]:  # type: ignore[type-arg]
    feasible = [p for p in configurations(DEFAULT_SPACE)
                if check(p, head_dim, limits_for(arch), 0.125) is None]  # type: ignore[arg-type]
    return feasible, choices(DEFAULT_SPACE, DEFAULTS[head_dim])


def recorded_verdict(name: str) -> dict:  # type: ignore[type-arg]
    return asdict(verdict(parse_ncu_csv((NCU / f"{name}.csv").read_text()).launches[0]))


def test_from_the_l4_tile_on_an_h100_the_known_winner_is_measured_second() -> None:
    feasible, options = space("sm_90")
    seeds, how = seed_order(feasible, options, DEFAULTS[128], 20)
    assert seeds[0] == DEFAULTS[128] and seeds[1] == H100_WINNER
    assert len(seeds) == len(set(seeds)) == 20 and set(seeds) <= set(feasible)
    near = neighbours(DEFAULTS[128], options, feasible)
    assert all(sum(getattr(p, k) != getattr(DEFAULTS[128], k) for k in asdict(p)) <= 2 for p in near)
    assert 1 < len(set(seeds) - set(near)) < 20  # the Latin hypercube still spans the space
    assert how.startswith("the current configuration, 9 neighbours, then Latin hypercube")


def test_the_profile_orders_the_neighbours() -> None:
    """The recorded H100 profile of the D=128 kernel: memory-bound with L1 leading ("larger tiles")
    and occupancy limited by registers and shared memory."""
    moves = profile_moves(recorded_verdict("ours-d128"))
    assert moves[:2] == [("block_n", +1), ("block_m", +1)]
    assert ("min_blocks", +1) in moves and ("block_n", -1) in moves and ("stages", -1) in moves
    registers_only = profile_moves(recorded_verdict("ours-d64"))
    assert ("min_blocks", +1) in registers_only and ("block_n", -1) not in registers_only
    latency = {"bottleneck": "latency", "recommendation": "the dominant stall: ...", "notes": []}
    assert profile_moves(latency)[0] == ("stages", +1)
    feasible, options = space("sm_90")
    seeds, how = seed_order(feasible, options, DEFAULTS[128], 20, moves=[("stages", +1)])
    assert seeds[1] == KernelParams(128, 32, 4, 1, 2, True, q_regs=False) and seeds[2] == H100_WINNER
    assert "stages+ first, from the profile" in how
    assert profile_moves(None) == profile_moves({}) == []


def test_tiles_other_archs_kept_come_first_where_this_gpu_allows_them(tmp_path: Path) -> None:
    csrc = tmp_path / "csrc"
    csrc.mkdir()
    hopper_only = KernelParams(128, 128, 4, 1, 2, True, q_regs=False)  # 160 KB per block
    write_header(csrc, render(keep(csrc, "sm_90", {128: hopper_only, 64: DEFAULTS[64]}, {}, 227 * 1024)))
    assert kept_tiles(csrc, "sm_90") == {}
    kept = kept_tiles(csrc, "sm_89")[128]
    assert kept == [hopper_only]
    feasible, options = space("sm_89")
    seeds, _ = seed_order(feasible, options, DEFAULTS[128], 12, kept)
    assert hopper_only not in seeds  # more than an L4's 99 KB: never measured there
    write_header(csrc, render(keep(csrc, "sm_90", {128: H100_WINNER}, {}, 227 * 1024)))
    assert H100_WINNER not in feasible  # one 64 KB block per SM on an L4: under the occupancy floor
    a100 = KernelParams(64, 64, 4, 2, 1, True, q_regs=False)
    write_header(csrc, render(keep(csrc, "sm_80", {128: a100}, {}, 163 * 1024)))
    assert kept_tiles(csrc, "sm_89")[128] == [H100_WINNER, a100]
    seeds, how = seed_order(feasible, options, DEFAULTS[128], 12, kept_tiles(csrc, "sm_89")[128])
    assert seeds[:2] == [DEFAULTS[128], a100] and "1 kept on other archs" in how


def test_the_sessions_latest_profile_is_read_from_its_journal(tmp_path: Path) -> None:
    journal = tmp_path / "sessions" / "s1" / "journal.jsonl"
    journal.parent.mkdir(parents=True)
    writer = JournalWriter(journal)
    writer.append(events.session_started(1.0, "s1", "tune", "optimize", (), 0.0))
    assert profile_hints(journal, tmp_path) == {}
    result = {"shape": "B4 H16 S4096 D128 fp16 full",
              "kernels": [{"name": "attn_fwd_kernel", "verdict": recorded_verdict("ours-d128")}]}
    writer.append(events.gate_started(2.0, "r1", "profile", ("ncu",), "logs/r1.log", 123))
    writer.append(events.gate_finished(3.0, "r1", "profile", "pass", "memory-bound", 1.0, 0, "logs/r1.log",
                                       result))
    hints = profile_hints(journal, tmp_path)
    assert list(hints) == [128] and hints[128][0] == ("block_n", +1)
