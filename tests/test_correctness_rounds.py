"""Correctness catches what the field's leaderboards learned to reject: a result cached per shape or
per pointer (stale on fresh inputs), an input written in place (pinned on the kernel that wrote it,
not the next one), an answer that changes from run to run, and an all-zeros output that a loose
tolerance would pass. The honest kernel passes all of it. These run the probe's own check on CPU
tensors: the logic is the gate's; the same planted faults on real CUDA kernels are the GPU visit's."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from cockpit.gates.correctness.gate import judge_correctness
from cockpit.gates.correctness.result import read_checked
from cockpit.probes import guarded
from cockpit.probes.gpumode import NOT_SIZES
from cockpit.probes.workload.check import ROUNDS, correctness
from cockpit.workload.spec import Reference, Workload, allclose, axes, rel_l2


def twice(x: torch.Tensor) -> torch.Tensor:
    return 2 * x.double()


def honest(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    return out.copy_(2 * x)


_BY_SHAPE: dict[tuple[int, ...], torch.Tensor] = {}
_BY_POINTER: dict[tuple[int, tuple[int, ...]], torch.Tensor] = {}


def cached_per_shape(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    key = tuple(x.shape)
    if key not in _BY_SHAPE:
        _BY_SHAPE[key] = 2 * x
    return out.copy_(_BY_SHAPE[key])


def cached_per_pointer(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    """Kept by pointer with the shape beside it: by the pointer alone, a freed pointer the allocator
    hands to a tensor of another shape gives back the other shape's answer (a flaky test)."""
    key = (x.data_ptr(), tuple(x.shape))
    if key not in _BY_POINTER:
        _BY_POINTER[key] = 2 * x
    return out.copy_(_BY_POINTER[key])


_LAST: list[torch.Tensor] = []


def replays_the_last_call(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    """The last call's answer again whenever the shape is the last call's."""
    if not (_LAST and _LAST[0].shape == x.shape):
        _LAST[:] = [2 * x]
    return out.copy_(_LAST[0])


def scales_its_input(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    out.copy_(2 * x)
    x.mul_(1.5)
    return out


def racy(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    return out.copy_(2 * x + torch.rand_like(x) * 1e-6)


def zeros(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    return out.zero_()


def workload(candidates: dict[str, Any], **kw: Any) -> Workload:
    base: dict[str, Any] = dict(
        name="y=2x", candidates=candidates, references=(Reference("fp64", twice, oracle=True),),
        make_inputs=lambda seed, n: (torch.randn(n, generator=torch.Generator().manual_seed(seed)),),
        make_output=lambda x, **_: torch.empty_like(x), test_grid=axes(n=[16, 1000]), bench_grid=(),
        check=rel_l2(1e-5), dtype_key=None)
    return Workload(**{**base, **kw})


def run(w: Workload) -> tuple[list[dict[str, Any]], bool, str]:
    rows, ok = correctness(w, w.correctness_grid(), lambda s: {}, lambda line: None)
    verdict = judge_correctness(read_checked({"rows": rows, "planned": len(w.correctness_grid()) * len(w.candidates)}))
    return rows, ok, verdict.summary


def test_an_honest_kernel_passes_every_round_bit_for_bit_the_same_on_a_repeat() -> None:
    rows, ok, summary = run(workload({"ours": honest}))
    assert ok and all(r["rounds"] == ROUNDS and r["deterministic"] is True for r in rows)
    assert summary.startswith(f"all 2/2 checks correct on {ROUNDS} rounds of fresh inputs, each repeat bit "
                              "for bit the same; worst rel L2")


@pytest.mark.parametrize(("cheat", "kept"), [(cached_per_shape, "a result kept per shape"),
                                             (cached_per_pointer, "a result kept per input pointer"),
                                             (replays_the_last_call, "the last call's answer replayed")])
def test_a_result_kept_from_an_earlier_call_is_named_by_what_it_was_kept_by(cheat: Any, kept: str) -> None:
    _BY_SHAPE.clear()
    _BY_POINTER.clear()
    _LAST.clear()
    rows, ok, summary = run(workload({"ours": cheat}))
    assert not ok and rows[-1]["rounds"] == 2
    assert summary.startswith(f"FAILS at n=16: returns round 1's answer on round 2's inputs: {kept}")


def test_with_one_shape_a_result_kept_per_shape_is_not_told_from_a_replay() -> None:
    _BY_SHAPE.clear()
    _, ok, summary = run(workload({"ours": cached_per_shape}, test_grid=axes(n=[16])))
    assert not ok and "a result kept per shape (or the last call's answer replayed)" in summary


def test_a_wrong_later_round_that_is_no_earlier_answer_is_said_as_a_result_kept_from_an_earlier_call() -> None:
    calls: list[int] = []

    def drifts(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
        calls.append(1)
        return out.copy_(2 * x * (1.0 if len(calls) <= 2 else 1.01))

    _, ok, summary = run(workload({"ours": drifts}))
    assert not ok and "fails on fresh inputs in round 2 of 3 after passing round 1" in summary
    assert "a result kept from an earlier call?" in summary


@pytest.mark.parametrize("cheat", [cached_per_shape, cached_per_pointer, replays_the_last_call])
def test_with_fresh_rounds_off_a_kept_result_passes(cheat: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    _BY_SHAPE.clear()
    _BY_POINTER.clear()
    _LAST.clear()
    monkeypatch.setattr(guarded, "_off", frozenset({"fresh-rounds"}))
    rows, ok, _ = run(workload({"ours": cheat}))
    assert ok and all(r["rounds"] == 1 for r in rows)


def test_an_input_written_in_place_is_pinned_on_the_kernel_that_wrote_it() -> None:
    rows, ok, summary = run(workload({"scaler": scales_its_input, "honest": honest}))
    assert not ok and [r["candidate"] for r in rows if not r["ok"]] == ["scaler"]
    assert summary.startswith("FAILS at scaler n=16: changed its input #0 in place")
    # the honest kernel, checked first, is never blamed for the other one's write
    rows, ok, _ = run(workload({"honest": honest, "scaler": scales_its_input}))
    assert not ok and all(r["ok"] for r in rows if r["candidate"] == "honest")


def test_with_inputs_unchanged_off_an_input_written_in_place_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(guarded, "_off", frozenset({"inputs-unchanged"}))
    _, ok, _ = run(workload({"scaler": scales_its_input}))
    assert ok


def test_every_failing_candidate_is_reported_and_the_others_go_on() -> None:
    _BY_SHAPE.clear()
    rows, ok, summary = run(workload({"zeros": zeros, "honest": honest, "racy": racy,
                                      "cached": cached_per_shape}))
    failing = {r["candidate"]: r["config"] for r in rows if not r["ok"]}
    assert not ok and failing == {"zeros": "n=16", "racy": "n=16", "cached": "n=16"}
    assert [r["config"] for r in rows if r["candidate"] == "honest"] == ["n=16", "n=1000"]
    assert summary.startswith("FAILS at zeros n=16: ")
    assert "; racy n=16: differs from itself on the same inputs" in summary
    assert "; cached n=16: returns round 1's answer on round 2's inputs: a result kept per shape" in summary
    assert summary.endswith("; 2 other checks passed")
    assert rows.count(rows[0]) == 1 and len([r for r in rows if r["candidate"] == "zeros"]) == 1


def test_an_answer_that_changes_from_run_to_run_fails_unless_the_workload_declares_atomics() -> None:
    rows, ok, summary = run(workload({"ours": racy}))
    assert not ok and "differs from itself on the same inputs by max |Δ|" in summary
    rows, ok, summary = run(workload({"ours": racy}, atomics=True))
    assert ok and all(r["deterministic"] is False for r in rows)
    assert "repeats differ by up to" in summary


def test_with_same_bits_on_repeat_off_a_race_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(guarded, "_off", frozenset({"same-bits-on-repeat"}))
    rows, ok, _ = run(workload({"ours": racy}))
    assert ok and all("deterministic" not in r for r in rows)


def test_all_zeros_fails_even_where_the_tolerance_would_pass_it() -> None:
    loose = allclose(atol=10.0, rtol=0.0)  # a third party's tolerance loose enough to pass zeros
    rows, ok, summary = run(workload({"ours": zeros}, check=loose))
    assert not ok
    assert "returned all zeros where the reference is not constant" in summary
    assert rows[-1]["max_abs"] is not None  # the numbers are still there
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(guarded, "_off", frozenset({"not-constant"}))
        _, ok, _ = run(workload({"ours": zeros}, check=loose))
    assert ok


def test_a_custom_check_keeps_max_abs_and_rel_l2_beside_its_own_verdict() -> None:
    from cockpit.workload.spec import custom

    verdict = custom(lambda out, ref, shape, inputs: (True, "own check: ok"))
    rows, ok, _ = run(workload({"ours": honest}, check=verdict))
    assert ok and rows[0]["rel_l2"] == 0.0 and rows[0]["max_abs"] == 0.0


def test_a_gpumode_shapes_seed_never_makes_it_larger() -> None:
    shapes = ({"size": 1638400, "seed": 5}, {"size": 52428800, "seed": 1}, {"size": 26214400, "seed": 13})
    w = workload({"ours": honest}, bench_grid=shapes, not_sizes=NOT_SIZES)
    ordered = w.smallest_first(shapes)
    assert [s["size"] for s in ordered] == [1638400, 26214400, 52428800]
    checked = [s for s in w.correctness_grid() if "size" in s]
    assert [s["size"] for s in checked] == [1638400, 52428800]  # the bench grid's smallest and largest
    matmul = ({"m": 128, "n": 64, "k": 64, "seed": 1}, {"m": 64, "n": 64, "k": 64, "seed": 4242})
    assert [s["m"] for s in workload({}, not_sizes=NOT_SIZES).smallest_first(matmul)] == [64, 128]


def test_a_check_function_that_raises_is_named_as_the_workloads_not_the_kernels() -> None:
    from cockpit.workload.spec import custom

    def broken(out: Any, ref: Any, shape: Any, inputs: Any) -> tuple[bool, str]:
        raise KeyError("tolerance")

    _, ok, summary = run(workload({"ours": honest}, check=custom(broken)))
    assert not ok
    assert summary.startswith("FAILS at n=16: the workload's check raised KeyError: 'tolerance' (fix "
                              "check=custom(...) in y=2x's module")
