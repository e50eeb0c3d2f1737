"""The correctness path of the attention probe, on the CPU with small tensors: a correct
implementation passes, one that leaves elements unwritten or computes the wrong thing fails,
and the first failing config is named."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from cockpit.gates.attention import judge_correctness
from cockpit.probes import attention_probe as ap

CONFIGS = [
    {"B": 1, "H": 2, "S": 65, "D": 64, "dtype": "bf16", "causal": True},
    {"B": 1, "H": 2, "S": 32, "D": 64, "dtype": "bf16", "causal": False},
    {"B": 2, "H": 2, "S": 127, "D": 128, "dtype": "bf16", "causal": False},
]
TOL = {"bf16": 1e-2}


def sdpa_into(q, k, v, causal, out):  # type: ignore[no-untyped-def]
    out.copy_(F.scaled_dot_product_attention(q, k, v, is_causal=causal))


def test_a_correct_kernel_passes_every_config_smallest_first() -> None:
    rows, ok = ap.correctness(sdpa_into, CONFIGS, "cpu", TOL)
    assert ok
    assert [r["S"] for r in rows] == [32, 65, 127]
    assert all(r["rel_l2"] < 1e-2 and r["nonfinite"] == 0 for r in rows)
    verdict = judge_correctness({"rows": rows}, len(CONFIGS))
    assert verdict.status == "pass" and verdict.summary.startswith("all 3/3 configs correct")


def test_unwritten_output_fails_through_the_poison() -> None:
    def half(q, k, v, causal, out):  # type: ignore[no-untyped-def]
        s = q.shape[-2]
        out[..., : s // 2, :] = F.scaled_dot_product_attention(q, k, v, is_causal=causal)[..., : s // 2, :]

    rows, ok = ap.correctness(half, CONFIGS, "cpu", TOL)
    assert not ok and len(rows) == 1  # stops at the first (smallest) config
    assert rows[0]["nonfinite"] == 1 * 2 * 16 * 64  # the rows it never wrote are still NaN
    verdict = judge_correctness({"rows": rows}, len(CONFIGS))
    assert verdict.status == "fail"
    assert verdict.summary.startswith("FAILS at B1 H2 S32 D64 bf16 full: 2048 NaN/Inf")


def test_a_wrong_result_fails_and_names_its_config() -> None:
    def no_causal_mask(q, k, v, causal, out):  # type: ignore[no-untyped-def]
        out.copy_(F.scaled_dot_product_attention(q, k, v, is_causal=False))

    rows, ok = ap.correctness(no_causal_mask, CONFIGS, "cpu", TOL)
    assert not ok
    assert rows[-1]["config"] == "B1 H2 S65 D64 bf16 causal" and rows[-1]["rel_l2"] > 0.1
    assert [r["ok"] for r in rows] == [True, False]


def test_the_chunked_reference_is_exact_attention() -> None:
    q, k, v = ap.make_inputs({"B": 1, "H": 1, "S": 300, "D": 64, "dtype": "fp32", "causal": True},
                             "cpu", seed=1)
    for causal in (False, True):
        expected = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        got = ap.reference(q, k, v, causal, chunk=128)
        assert torch.allclose(got, expected, atol=1e-5)


def test_flops_and_percentiles() -> None:
    cfg = {"B": 4, "H": 16, "S": 1024, "D": 64, "dtype": "fp16", "causal": False}
    assert ap.flops(cfg) == 4 * 4 * 16 * 1024**2 * 64
    assert ap.flops({**cfg, "causal": True}) == ap.flops(cfg) / 2
    assert ap.percentile([1, 2, 3, 4, 5], 0.5) == 3
    assert ap.percentile([1, 2, 3, 4, 5], 0.2) == pytest.approx(1.8)


# The bench's timing plan: every implementation timed in blocks at its own steady clock ---------


def test_each_implementation_is_timed_in_blocks_after_settling_at_its_own_clock() -> None:
    # An H200 at its power cap: cuDNN's clock keeps falling for ~100 ms after a lighter kernel,
    # so each block starts with 100 ms of untimed calls (flush included in the call time).
    call_ms = {"ours": 2.0, "sdpa": 0.9, "flash": 1.6}
    plan = ap.block_plan(call_ms, n=30, rounds=2, settle_ms=100.0, config_index=0)
    assert plan == [("ours", 50, 15), ("sdpa", 112, 15), ("flash", 63, 15),
                    ("flash", 0, 15), ("sdpa", 112, 15), ("ours", 50, 15)]
    # every implementation gets all its timed calls, in two blocks each
    for name in call_ms:
        assert sum(t for n, _, t in plan if n == name) == 30
        assert sum(1 for n, _, _ in plan if n == name) == 2


def test_the_order_alternates_from_config_to_config_and_tiny_kernels_settle_bounded() -> None:
    call_ms = {"ours": 0.06, "sdpa": 0.055}
    first = [n for n, _, _ in ap.block_plan(call_ms, 31, 2, 100.0, config_index=0)]
    second = [n for n, _, _ in ap.block_plan(call_ms, 31, 2, 100.0, config_index=1)]
    assert first == ["ours", "sdpa", "sdpa", "ours"] and second == ["sdpa", "ours", "ours", "sdpa"]
    plan = ap.block_plan({"tiny": 0.0}, 31, 1, 100.0, 0, max_settle_calls=5000)
    assert plan == [("tiny", 5000, 31)]  # a call that times as 0 ms cannot make settling endless
    assert ap.block_plan(call_ms, 3, 1, 0.0, 0) == [("ours", 0, 3), ("sdpa", 0, 3)]  # settle off


# Ragged sizes: where tiled kernels break ------------------------------------------------------


def whole_tiles_only(tile: int):  # type: ignore[no-untyped-def]
    """A kernel with the classic bug: it writes only the query rows of whole `tile`-row tiles."""
    def run(q, k, v, causal, out):  # type: ignore[no-untyped-def]
        s = q.shape[-2] // tile * tile
        out[..., :s, :] = F.scaled_dot_product_attention(q, k, v, is_causal=causal)[..., :s, :]
    return run


def test_a_kernel_that_drops_the_last_partial_tile_passes_the_round_sizes_and_fails_a_ragged_one() -> None:
    from cockpit.config import Workload

    w = Workload(batch=1, heads=2, head_dims=(64,), seq_lens=(64, 128), dtypes=("bf16",), causal=(True,),
                 ragged_seq_lens=(1, 17, 65))
    rows, ok = ap.correctness(whole_tiles_only(64), w.configs(), "cpu", TOL)
    assert ok and [r["S"] for r in rows] == [64, 128]
    rows, ok = ap.correctness(whole_tiles_only(64), w.correctness_configs(), "cpu", TOL)
    assert not ok
    assert rows[-1]["config"] == "B3 H5 S1 D64 bf16 causal"  # the smallest ragged config, first
    assert rows[-1]["nonfinite"] == 3 * 5 * 1 * 64  # the row it never wrote is still NaN


def test_a_correct_kernel_passes_the_ragged_sizes_with_odd_batch_and_heads() -> None:
    from cockpit.config import Workload

    w = Workload(head_dims=(64,), seq_lens=(), dtypes=("bf16",), ragged_seq_lens=(1, 17, 65, 127))
    rows, ok = ap.correctness(sdpa_into, w.correctness_configs(), "cpu", TOL)
    assert ok and len(rows) == 8
    assert {(r["B"], r["H"]) for r in rows} == {(3, 5)} and sorted({r["S"] for r in rows}) == [1, 17, 65, 127]
