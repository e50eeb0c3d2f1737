"""Backward and full passes (issue 35, item 2): a workload that declares modes=("forward",
"backward", "full") gets every gradient that an input requires checked against the oracle's
autograd, each named in the failure line, and is timed in each mode, the rows carrying it. The
candidates here are torch code on CPU tensors: a row layer norm (x, weight, bias) as a
torch.autograd.Function whose backward is written out (dx, dw, db), a planted one whose dx is
scaled by 1.1, one that returns no gradient for the weight, and one with no backward at all."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
import torch

from cockpit.gates.correctness.gate import judge_correctness
from cockpit.gates.correctness.result import read_checked
from cockpit.probes.workload.check import ROUNDS, correctness
from cockpit.workload.spec import Reference, Workload, axes, rel_l2

EPS = 1e-5


def _stats(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    mean = x.mean(-1, keepdim=True)
    rstd = ((x - mean).pow(2).mean(-1, keepdim=True) + EPS).rsqrt()
    return mean, rstd


class LayerNorm(torch.autograd.Function):
    """y = (x - mean) * rstd * w + b; the backward as Triton's tutorial writes it."""

    dx_scale = 1.0
    dw_none = False

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        mean, rstd = _stats(x)
        xhat = (x - mean) * rstd
        ctx.save_for_backward(xhat, rstd, w)
        return xhat * w + b

    @classmethod
    def backward(cls, ctx: Any, dy: torch.Tensor) -> tuple[Any, ...]:  # type: ignore[override]
        xhat, rstd, w = ctx.saved_tensors
        wdy = w * dy
        c1 = (xhat * wdy).mean(-1, keepdim=True)
        c2 = wdy.mean(-1, keepdim=True)
        dx = (wdy - (xhat * c1 + c2)) * rstd * cls.dx_scale
        dw = None if cls.dw_none else (dy * xhat).sum(0)
        return dx, dw, dy.sum(0)


class ScaledDx(LayerNorm):
    dx_scale = 1.1


class NoDw(LayerNorm):
    dw_none = True


def candidate(fn: type[LayerNorm]) -> Any:
    def ours(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, out: torch.Tensor | None = None) -> Any:
        y = fn.apply(x, weight, bias)
        return y if out is None else out.copy_(y)
    return ours


def no_backward(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, out: Any = None) -> Any:
    with torch.no_grad():
        return candidate(LayerNorm)(x, weight, bias, out)


def oracle(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.layer_norm(x.double(), (x.shape[-1],), weight.double(), bias.double(), EPS)


def eager(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), weight, bias, EPS)


def make_inputs(seed: int, /, M: int, N: int) -> tuple[torch.Tensor, ...]:
    gen = torch.Generator().manual_seed(seed)
    return (torch.randn(M, N, generator=gen) * 2 + 1, 1 + 0.1 * torch.randn(N, generator=gen),
            0.1 * torch.randn(N, generator=gen))


def workload(ours: Any, **kw: Any) -> Workload:
    base: dict[str, Any] = dict(
        name="layer-norm", candidates={"ours": ours},
        references=(Reference("fp64", oracle, oracle=True), Reference("torch.layer_norm", eager, baseline=True)),
        make_inputs=make_inputs, make_output=lambda x, *_, **__: torch.empty_like(x),
        test_grid=axes(M=[3, 17], N=[31, 64]), bench_grid=axes(M=[64], N=[256]),
        check=rel_l2(1e-5), dtype_key=None, modes=("forward", "backward", "full"), grad_inputs=(0, 1, 2))
    return Workload(**{**base, **kw})


def run(w: Workload) -> tuple[list[dict[str, Any]], bool, str]:
    lines: list[str] = []
    rows, ok = correctness(w, w.correctness_grid(), lambda s: {}, lines.append)
    planned = len(w.correctness_grid()) * len(w.candidates) * (2 if w.grad_modes else 1)
    return rows, ok, judge_correctness(read_checked({"rows": rows, "planned": planned})).summary


def test_a_right_backward_passes_every_gradient_on_every_shape() -> None:
    rows, ok, summary = run(workload(candidate(LayerNorm)))
    assert ok, summary
    grad_rows = [r for r in rows if r.get("mode") == "backward"]
    assert len(grad_rows) == len(rows) // 2 == 5
    assert grad_rows[0]["config"] == "M=3 N=31 backward" and grad_rows[0]["rounds"] == ROUNDS
    assert [gr["input"] for gr in grad_rows[0]["grads"]] == ["input #0 (x)", "input #1 (weight)",
                                                             "input #2 (bias)"]
    assert all(gr["rel_l2"] < 1e-5 for r in grad_rows for gr in r["grads"])
    assert summary.startswith(f"all 10/10 checks correct on {ROUNDS} rounds")


def test_a_backward_that_scales_dx_fails_naming_the_gradient() -> None:
    rows, ok, summary = run(workload(candidate(ScaledDx)))
    assert not ok
    assert rows[-1]["mode"] == "backward" and rows[-1]["config"] == "M=3 N=31 backward"
    assert summary.startswith("FAILS at M=3 N=31 backward: grad of input #0 (x): rel L2 1.00e-01 > 1e-05")


def test_a_gradient_that_is_none_fails_in_one_line_naming_the_input() -> None:
    _, ok, summary = run(workload(candidate(NoDw)))
    assert not ok
    assert summary.startswith("FAILS at M=3 N=31 backward: grad of input #1 (weight) is None: its backward "
                              "returned no gradient for an input that requires grad")


def test_an_output_autograd_does_not_track_fails_saying_so() -> None:
    _, ok, summary = run(workload(no_backward))
    assert not ok and "its output does not require grad" in summary


def test_inputs_made_with_requires_grad_need_no_grad_inputs_and_forward_only_is_unchanged() -> None:
    def made(seed: int, /, M: int, N: int) -> tuple[torch.Tensor, ...]:
        x, w, b = make_inputs(seed, M=M, N=N)
        return x.requires_grad_(True), w, b

    rows, ok, _ = run(workload(candidate(ScaledDx), make_inputs=made, grad_inputs=()))
    assert not ok and rows[-1]["what"].startswith("grad of input #0 (x)")
    rows, ok, summary = run(workload(candidate(ScaledDx), modes=("forward",)))
    assert ok and all("mode" not in r for r in rows) and summary.startswith("all 5/5 checks correct")


def test_a_backward_mode_with_no_input_that_requires_grad_is_one_line() -> None:
    with pytest.raises(ValueError, match="declares modes backward, full but no input requires grad"):
        run(workload(candidate(LayerNorm), grad_inputs=()))


def test_modes_are_checked_when_declared() -> None:
    with pytest.raises(ValueError, match="modes="):
        workload(candidate(LayerNorm), modes=("forwards",))
    with pytest.raises(ValueError, match="grad_inputs="):
        workload(candidate(LayerNorm), grad_inputs=(-1,))
    w = workload(candidate(LayerNorm))
    assert w.grad_modes == ("backward", "full") and w.mode_name({"M": 1}, "full") == "M=1 full"


# --- timing ---------------------------------------------------------------------------------------

def bench_rows(w: Workload, calls: dict[str, int] | None = None) -> tuple[list[dict[str, Any]], list[str]]:
    from cockpit.probes.workload.timing import bench, implementations

    lines: list[str] = []
    rows = bench(w, implementations(w, lambda s: {}), reps=5, warmup=1, input_sets=2, say=lines.append,
                 budget_s=0.02, settle_ms=0.0, rounds=1, modes=w.modes)
    return rows, lines


def test_each_mode_is_timed_in_a_row_of_its_own_that_carries_it(cpu_events: None) -> None:
    rows, lines = bench_rows(workload(candidate(LayerNorm), bytes=lambda M, N: 8.0 * M * N,
                                      backward_bytes=lambda M, N: 12.0 * M * N))
    assert [(r["config"], r["mode"]) for r in rows] == [("M=64 N=256", "forward"), ("M=64 N=256 backward", "backward"),
                                                       ("M=64 N=256 full", "full")]
    assert [r["bytes"] for r in rows] == [8.0 * 64 * 256, 12.0 * 64 * 256, 20.0 * 64 * 256]
    for row in rows:
        assert set(row["impl"]) == {"ours", "torch.layer_norm"} and row["impl"]["ours"]["median_ms"] > 0
        assert row["speedup_vs_torch.layer_norm"] > 0
    assert [line.split("]")[0] for line in lines if line.startswith("[")] == ["[1/3", "[2/3", "[3/3"]


def test_backward_times_the_backward_alone_with_gradients_cleared_and_full_both(cpu_events: None) -> None:
    counts = {"forward": 0, "backward": 0}
    seen: list[Any] = []

    class Counted(LayerNorm):
        @staticmethod
        def forward(ctx: Any, x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
            counts["forward"] += 1
            return LayerNorm.forward(ctx, x, w, b)

        @staticmethod
        def backward(ctx: Any, dy: torch.Tensor) -> tuple[Any, ...]:  # type: ignore[override]
            counts["backward"] += 1
            seen.append(dy)
            return LayerNorm.backward(ctx, dy)

    w = workload(candidate(Counted), references=(Reference("fp64", oracle, oracle=True),
                                                  Reference("torch.layer_norm", eager, baseline=True)),
                 modes=("backward",))
    rows, _ = bench_rows(w)
    assert rows[0]["config"] == "M=64 N=256 backward"
    # the forwards: one per input set (2 at first; the batch path may rotate more), untimed
    assert 2 <= counts["forward"] <= 64 and counts["backward"] > 10 * counts["forward"]
    assert all(dy.shape == (64, 256) for dy in seen)
    counts.update(forward=0, backward=0)
    rows, _ = bench_rows(replace(w, modes=("full",)))
    # every timed call is a forward and its backward; one forward per set seeded its gradient
    primed = counts["forward"] - counts["backward"]
    assert counts["backward"] > 10 and 2 <= primed <= 64


def test_a_forward_only_workload_times_as_before_with_no_mode_key(cpu_events: None) -> None:
    rows, lines = bench_rows(workload(candidate(LayerNorm), modes=("forward",)))
    assert [r["config"] for r in rows] == ["M=64 N=256"] and "mode" not in rows[0]
    assert lines[-1].startswith("[1/1] M=64 N=256")


def test_an_implementation_without_a_backward_crashes_the_bench_naming_it(cpu_events: None) -> None:
    from cockpit.probes.workload.timing import BenchCrash

    with pytest.raises(BenchCrash) as crash:
        bench_rows(workload(no_backward))
    assert crash.value.config == "M=64 N=256 backward" and crash.value.impl == "ours"
    assert "its output does not require grad" in crash.value.error
    assert [r["config"] for r in crash.value.rows] == ["M=64 N=256"]


# --- the bench gate's headline and the typed result -------------------------------------------------

def _gate_row(config: str, mode: str | None, ours_ms: float, ref_ms: float) -> dict[str, Any]:
    row: dict[str, Any] = {"config": config, "impl": {"ours": {"median_ms": ours_ms},
                                                      "torch.layer_norm": {"median_ms": ref_ms}},
                           "speedup_vs_torch.layer_norm": ref_ms / ours_ms}
    if mode is not None:
        row["mode"] = mode
    return row


def test_the_bench_headline_names_the_modes_side_by_side_and_the_result_reads_them() -> None:
    from cockpit.config import Config
    from cockpit.gates.bench.gate import judge_bench
    from cockpit.gates.bench.measured import read_measured
    from cockpit.gates.bench.result import BenchResult

    rows = [_gate_row(f"N={n}{'' if m == 'forward' else ' ' + m}", m, 1.0, s * (1 + n / 1e5))
            for n in (1024, 4096) for m, s in (("forward", 1.57), ("backward", 1.21), ("full", 1.30))]
    data = {"rows": rows, "baseline": "torch.layer_norm", "labels": {"ours": "ours",
            "torch.layer_norm": "torch.layer_norm"}, "workload": "layernorm-triton"}
    verdict = judge_bench(read_measured(data), None, None, Config().thresholds, "b.json")
    assert "over 6 configs (forward 1.61x, backward 1.24x, full 1.33x)" in verdict.summary
    read = BenchResult.from_json(verdict.result.to_json())
    assert read is not None and read.modes_words() == "forward 1.61x, backward 1.24x, full 1.33x"
    assert [r.mode for r in read.rows] == ["forward", "backward", "full"] * 2
    again = BenchResult.from_json(read.to_json())
    assert again is not None and again.modes == read.modes


def test_a_forward_only_bench_says_no_modes_and_its_result_has_none() -> None:
    from cockpit.config import Config
    from cockpit.gates.bench.gate import judge_bench
    from cockpit.gates.bench.measured import read_measured
    from cockpit.gates.bench.result import BenchResult

    data = {"rows": [_gate_row("N=1024", None, 1.0, 1.5)], "baseline": "torch.layer_norm", "workload": "w"}
    verdict = judge_bench(read_measured(data), None, None, Config().thresholds, "b.json")
    assert verdict.summary.startswith("1.50x") and "forward" not in verdict.summary
    assert "modes" not in verdict.result.to_json()
    read = BenchResult.from_json(verdict.result.to_json())
    assert read is not None and read.modes == {} and read.rows[0].mode == "forward" and read.modes_words() == ""


def test_a_gradient_the_oracle_gives_as_zero_is_held_to_the_seeded_gradients_scale() -> None:
    """A layer norm's dx on rows of one element is 0; the H200's Triton kernel gave 9.6e-08 and
    2.2e-06 (fp32): relative errors of 1e+23 that mean nothing."""
    from cockpit.probes.workload.grad_round import _zero_gradient

    stats = {"ok": False, "max_abs": 9.6e-8, "rel_l2": 9.6e22, "nonfinite": 0, "tolerance": 1e-5, "what": ""}
    dy = [torch.tensor([[3.0], [-1.0]])]
    kept = _zero_gradient(stats, torch.zeros(2, 1), dy, 1e-5)
    assert kept["ok"] and kept["rel_l2"] is None and "max |Δ| 9.60e-08 within 0.0032" in kept["what"]
    worse = _zero_gradient({**stats, "max_abs": 1e-1}, torch.zeros(2, 1), dy, 1e-5)
    assert not worse["ok"] and worse["what"].startswith("the oracle's gradient is 0 everywhere; max |Δ| 1.00e-01 "
                                                        "> 0.0032 (sqrt of the tolerance)")
    assert _zero_gradient(stats, torch.ones(2, 1), dy, 1e-5) is stats  # a real gradient: the relative error


def test_workload_show_says_the_modes_and_whose_gradients() -> None:
    from cockpit.cli.workload import describe_lines
    from cockpit.probes.workload_load import manifest_json
    from cockpit.workload.manifest import manifest_from_json

    lines = describe_lines(manifest_from_json(manifest_json(workload(candidate(LayerNorm)), "wl.py")))
    assert "modes      forward, backward, full (gradients of input #0, #1, #2 and any made with requires_grad)" \
        in lines
    forward_only = replace(workload(candidate(LayerNorm)), modes=("forward",))
    assert not any(line.startswith("modes") for line in describe_lines(
        manifest_from_json(manifest_json(forward_only, "wl.py"))))
