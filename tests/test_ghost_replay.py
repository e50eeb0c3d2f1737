"""Ghost replay: a candidate whose answer does not change when its kernel is replaced by a no-op
never ran its kernel (a fast path never taken), and the correctness gate says so in its own line;
a candidate that computes through its kernel passes; a workload with no kernel of its own is said
to have none, never passed. Run on CPU tensors: an extension here is a module object whose
functions compute with torch, and Triton is a stand-in with Triton's launch (`JITFunction.run`)."""

from __future__ import annotations

import dataclasses
import sys
import types
from collections.abc import Iterator
from typing import Any

import pytest
import torch

from cockpit.gates.correctness.gate import judge_correctness
from cockpit.gates.correctness.result import read_checked
from cockpit.probes import guarded
from cockpit.probes.workload.ghost import NO_KERNEL, UNCHANGED, ghost_replay, no_launch
from cockpit.probes.workload_probe import check_all
from cockpit.workload.guards import OFF_ENV
from cockpit.workload.spec import Extension, NoBuild, Reference, TritonJit, Workload, axes, rel_l2

KERNELS = types.ModuleType("fake_softmax_ext")


def _forward(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    return out.copy_(torch.softmax(x, -1))


KERNELS.forward = _forward  # type: ignore[attr-defined]


class Built(Extension):
    """An extension already built: its module is KERNELS."""

    def load(self) -> Any:
        return KERNELS


KERNEL = Built("fake_softmax_ext", sources=())


def through_kernel(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    return KERNEL.load().forward(x, out)  # type: ignore[no-any-return]


def fast_path_never_taken(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    if x.dtype == torch.float16:  # the kernel's path: never, for float32 inputs
        return KERNEL.load().forward(x, out)  # type: ignore[no-any-return]
    return out.copy_(torch.softmax(x, -1))


def workload(ours: Any, build: Any) -> Workload:
    return Workload(
        name="softmax", candidates={"ours": ours}, build=build,
        references=(Reference("fp64", lambda x: torch.softmax(x.double(), -1), oracle=True),),
        make_inputs=lambda seed, M, N: (torch.randn(M, N, generator=torch.Generator().manual_seed(seed)),),
        make_output=lambda x, **_: torch.empty_like(x), test_grid=axes(M=[2, 8], N=[64]), bench_grid=(),
        check=rel_l2(1e-5), dtype_key=None)


@pytest.fixture(autouse=True)
def every_guard_on() -> Iterator[None]:
    guarded.start({})
    yield
    guarded.start({})


def replay(w: Workload) -> tuple[list[Any], list[str]]:
    lines: list[str] = []
    return ghost_replay(w, lambda shape: {}, lines.append), lines


def test_a_candidate_that_computes_through_its_extension_changes_when_the_kernel_is_a_no_op() -> None:
    failed, lines = replay(workload(through_kernel, KERNEL))
    assert failed == []
    assert lines == ["ghost replay: ours on M=2 N=64: its output changes when its kernel is a no-op"]
    assert KERNELS.forward is _forward  # the module's own function again once the replay is over


def test_a_fast_path_never_taken_fails_the_correctness_gate_in_its_own_line() -> None:
    result: dict[str, Any] = {}
    ok = check_all(workload(fast_path_never_taken, KERNEL), lambda shape: {}, result)
    assert not ok and result["ok"] is False
    summary = judge_correctness(read_checked(result)).summary
    assert summary.startswith(f"FAILS at M=2 N=64 ghost replay: {UNCHANGED}")
    assert "its output does not change when its kernel is a no-op" in summary


def test_a_plain_torch_candidate_to_compare_with_is_said_not_to_call_the_kernel_and_not_failed() -> None:
    w = workload(through_kernel, KERNEL)
    w = dataclasses.replace(w, candidates={"ours": through_kernel,
                                           "eager": lambda x, out: out.copy_(torch.softmax(x, -1))})
    failed, lines = replay(w)
    assert failed == []
    assert lines[-1] == ("ghost replay: eager on M=2 N=64: calls none of the workload's kernels (one to compare "
                         "with?): not checked")
    w = dataclasses.replace(w, candidates={"ours": fast_path_never_taken, "eager": through_kernel})
    failed, _ = replay(w)  # the first candidate, the one the workload is about, fails all the same
    assert [row["candidate"] for row in failed] == ["ours"]


def test_a_workload_with_no_kernel_of_its_own_is_said_to_have_none_and_is_not_passed_by_the_replay() -> None:
    failed, lines = replay(workload(fast_path_never_taken, NoBuild()))
    assert failed == [] and lines == [f"{NO_KERNEL} (a callable workload): not checked"]


def test_the_replay_turned_off_says_so() -> None:
    guarded.start({OFF_ENV: "ghost-replay"})
    failed, lines = replay(workload(fast_path_never_taken, KERNEL))
    assert failed == [] and lines == ["ghost replay: turned off (COCKPIT_GUARDS_OFF): not checked"]


class Launcher:
    """Triton's launch as a stand-in: `kernel[grid](...)` calls `run`, which computes."""

    def __getitem__(self, grid: Any) -> Any:
        return lambda *args, **kwargs: self.run(*args, grid=grid, **kwargs)

    def run(self, x: torch.Tensor, out: torch.Tensor, grid: Any = None) -> None:
        out.copy_(torch.softmax(x, -1))


def test_no_launch_makes_a_triton_style_launch_do_nothing_for_the_length_of_the_with() -> None:
    x, out = torch.ones(2, 4), torch.zeros(2, 4)
    with no_launch(Launcher):
        Launcher()[(2,)](x, out)
    assert bool((out == 0).all())
    Launcher()[(2,)](x, out)
    assert bool((out == 0.25).all())


@pytest.fixture
def fake_triton(monkeypatch: pytest.MonkeyPatch) -> type[Launcher]:
    """`triton.runtime.jit.JITFunction` is the stand-in (Triton need not be installed)."""
    jit = types.ModuleType("triton.runtime.jit")
    jit.JITFunction = Launcher  # type: ignore[attr-defined]
    for name, module in (("triton", types.ModuleType("triton")), ("triton.runtime",
                                                                   types.ModuleType("triton.runtime")),
                         ("triton.runtime.jit", jit)):
        monkeypatch.setitem(sys.modules, name, module)
    return Launcher


def test_a_triton_candidate_is_replayed_with_its_launch_silenced(fake_triton: type[Launcher]) -> None:
    kernel = fake_triton()

    def launches(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
        kernel[(x.shape[0],)](x, out)
        return out

    def never_launches(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
        return out.copy_(torch.softmax(x, -1))

    assert replay(workload(launches, TritonJit()))[0] == []
    failed, lines = replay(workload(never_launches, TritonJit()))
    assert [row["what"] for row in failed] == [UNCHANGED]
    assert lines == [f"FAIL ghost replay: ours on M=2 N=64: {UNCHANGED}"]
    assert "run" in vars(fake_triton)  # the launch is its own again
