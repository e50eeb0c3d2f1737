"""Each cheat the field's catalogues document is caught as itself, in a line that names it, and
passes again when its guard is turned off (the cheat catalogue's mutation test does that through
COCKPIT_GUARDS_OFF): an output that is its input or a view of it, a tensor subclass computing on
read, the reference's freed buffer returned, an output element never written, the op done in a
lower precision (and a check loose enough to pass it), the baseline called as the candidate, the
timer or the cockpit's own checks replaced, shapes hard-coded for the bench. On CPU tensors: the
logic is the gate's; the same planted kernels on a GPU are the catalogue's."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
import torch

from cockpit.gates.correctness.gate import judge_correctness
from cockpit.gates.correctness.result import read_checked
from cockpit.probes import guarded, guards_identity
from cockpit.probes.workload import calls
from cockpit.probes.workload.check import checked_shapes, correctness
from cockpit.workload.spec import Reference, Workload, allclose, axes, rel_l2

ORACLE_OUTPUTS: list[torch.Tensor] = []


def twice(x: torch.Tensor) -> torch.Tensor:
    out = 2 * x.double()
    ORACLE_OUTPUTS[:] = [out]  # what the allocator would hand the next empty_like of its size
    return out


def honest(x: torch.Tensor) -> torch.Tensor:
    return x + x


def workload(candidates: dict[str, Any], **kw: Any) -> Workload:
    base: dict[str, Any] = dict(
        name="y=2x", candidates=candidates, references=(Reference("fp64", twice, oracle=True),),
        make_inputs=lambda seed, n: (torch.randn(n, generator=torch.Generator().manual_seed(seed)),),
        test_grid=axes(n=[16, 1000]), bench_grid=(), check=rel_l2(1e-5), dtype_key=None)
    return Workload(**{**base, **kw})


def run(w: Workload, shapes: list[Any] | None = None) -> tuple[list[dict[str, Any]], bool, str, str]:
    """(rows, ok, the verdict's summary, its status)."""
    notes: list[str] = []
    grid = shapes if shapes is not None else w.correctness_grid()
    rows, ok = correctness(w, grid, lambda s: {}, lambda line: None, notes=notes)
    verdict = judge_correctness(read_checked({"rows": rows, "planned": len(grid) * len(w.candidates),
                                              "warnings": notes}))
    return rows, ok, verdict.summary, verdict.status


@pytest.fixture
def turn_off(monkeypatch: pytest.MonkeyPatch) -> Any:
    def off(*names: str) -> None:
        monkeypatch.setattr(guarded, "_off", frozenset(names))
    return off


def test_an_honest_kernel_passes_with_every_guard_on() -> None:
    _, ok, summary, status = run(workload({"ours": honest}))
    assert ok and status == "pass" and summary.startswith("all 2/2 checks correct")


# --- output-not-input ---------------------------------------------------------------------------

def copy_op(x: torch.Tensor) -> torch.Tensor:
    return x.double().clone()


def returns_a_view(x: torch.Tensor) -> torch.Tensor:
    return x.view(-1)


def test_an_input_returned_as_the_output_fails_as_an_alias(turn_off: Any) -> None:
    w = workload({"ours": returns_a_view}, references=(Reference("copy", copy_op, oracle=True),))
    _, ok, summary, _ = run(w)
    assert not ok and summary.startswith("FAILS at n=16: returns its input #0 (x) (a view or alias) instead "
                                         "of an output")
    turn_off("output-not-input")
    assert run(w)[1]


def test_a_workload_that_hands_the_output_in_with_the_inputs_may_return_it() -> None:
    def fill(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
        return out.copy_(2 * x)

    def oracle(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
        return 2 * x.double()

    w = workload({"ours": fill}, references=(Reference("fp64", oracle, oracle=True),), output_in_inputs=True,
                 make_inputs=lambda seed, n: (torch.randn(n, generator=torch.Generator().manual_seed(seed)),
                                              torch.empty(n)))
    assert run(w)[1]


# --- plain-tensor -------------------------------------------------------------------------------

class Lazy(torch.Tensor):
    """A proxy output: a tensor subclass (one that computes when read looks the same from outside)."""


def returns_a_subclass(x: torch.Tensor) -> torch.Tensor:
    return (2 * x).as_subclass(Lazy)


def test_a_tensor_subclass_fails_as_a_lazy_or_proxy_output(turn_off: Any) -> None:
    _, ok, summary, _ = run(workload({"ours": returns_a_subclass}))
    assert not ok and summary.startswith("FAILS at n=16: returns a Lazy, not a torch.Tensor: a lazy or proxy "
                                         "output")
    turn_off("plain-tensor")
    assert run(workload({"ours": returns_a_subclass}))[1]


# --- poisoned-reference, poisoned-output --------------------------------------------------------

def lands_on_the_references_buffer(x: torch.Tensor) -> torch.Tensor:
    """torch.empty_like as the caching allocator serves it: the block the oracle's answer just freed
    (the oracle keeps a handle on it here, so the reuse is certain on a CPU)."""
    return ORACLE_OUTPUTS[0].view_as(ORACLE_OUTPUTS[0])


def test_memory_the_candidate_never_wrote_is_the_references_poisoned_buffer(turn_off: Any) -> None:
    _, ok, summary, _ = run(workload({"ours": lands_on_the_references_buffer}))
    assert not ok and summary.startswith("FAILS at n=16: returns memory it never wrote (NaN from the "
                                         "reference's poisoned freed buffer): 16 of 16 elements")
    turn_off("poisoned-reference")
    assert run(workload({"ours": lands_on_the_references_buffer}))[1]


def writes_half(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    out[: len(out) // 2] = 2 * x[: len(x) // 2]
    return out


def test_an_output_element_never_written_still_holds_the_output_buffers_nan(turn_off: Any) -> None:
    # the buffer is handed over holding the answer (stale memory of an earlier call): only the
    # poison tells the unwritten half
    w = workload({"ours": writes_half}, make_output=lambda x, **_: 2 * x)
    _, ok, summary, _ = run(w)
    assert not ok and summary.startswith("FAILS at n=16: leaves 8 of 16 output elements unwritten: they "
                                         "still hold the NaN the output buffer was poisoned with (stale memory)")
    turn_off("poisoned-output")
    assert run(w)[1]


def test_the_poisons_are_told_from_a_nan_the_kernel_computed() -> None:
    def divides_by_zero(x: torch.Tensor) -> torch.Tensor:
        return 2 * x + torch.zeros_like(x) / torch.zeros_like(x)

    _, ok, summary, _ = run(workload({"ours": divides_by_zero}))
    assert not ok and summary.startswith("FAILS at n=16: 16 NaN/Inf")


# --- precision-floor ----------------------------------------------------------------------------

def in_bf16(x: torch.Tensor) -> torch.Tensor:
    return (2 * x.bfloat16()).float()


def test_a_candidate_that_computes_in_bf16_is_named(turn_off: Any) -> None:
    _, ok, summary, _ = run(workload({"ours": in_bf16}))
    assert not ok and summary.startswith("FAILS at n=16: matches the op done in bf16 (rel L2 0.0e+00 to it): "
                                         "computed in a lower precision?")
    turn_off("precision-floor")
    _, ok, summary, _ = run(workload({"ours": in_bf16}))
    assert not ok and "lower precision" not in summary


def test_a_check_that_passes_the_op_done_in_bf16_is_said_too_loose_and_a_bf16_candidate_still_named(
        turn_off: Any) -> None:
    _, ok, summary, status = run(workload({"ours": honest}, check=rel_l2(1e-2)))
    assert ok and status == "warn"
    assert "; the check passes the op done wholly in bf16: a downcast candidate would pass; tighten check= " \
           "(rel L2" in summary
    _, ok, summary, _ = run(workload({"ours": in_bf16}, check=rel_l2(1e-2)))
    assert not ok and "is as large as the op done wholly in bf16" in summary
    assert "which the check passes: computed in a lower precision?" in summary
    turn_off("precision-floor")
    _, ok, summary, status = run(workload({"ours": in_bf16}, check=rel_l2(1e-2)))
    assert ok and status == "pass" and "bf16" not in summary


def test_an_oracle_that_cannot_run_on_rounded_inputs_says_the_precision_floor_could_not_run() -> None:
    def picky(x: torch.Tensor) -> torch.Tensor:
        if bool((x == x.bfloat16().float()).all()):
            raise ValueError("inputs look rounded")
        return 2 * x.double()

    _, ok, summary, status = run(workload({"ours": honest}, references=(Reference("fp64", picky, oracle=True),)))
    assert ok and status == "warn"
    assert summary.endswith("; precision-floor could not run: the oracle fp64 on inputs rounded to bf16 raised "
                            "ValueError: inputs look rounded")


def test_an_fp64_workload_is_held_to_fp32_and_integers_to_nothing() -> None:
    w = workload({"ours": lambda x: 2 * x}, check=allclose(atol=1e-3, rtol=0.0),
                 make_inputs=lambda seed, n: (torch.randn(n, dtype=torch.float64,
                                                          generator=torch.Generator().manual_seed(seed)),))
    assert "op done wholly in fp32" in run(w)[2]
    ints = workload({"ours": lambda x: 2 * x}, check=rel_l2(1e-2),
                    make_inputs=lambda seed, n: (torch.arange(n) + seed,))
    assert run(ints)[3] == "pass"


# --- is-reference -------------------------------------------------------------------------------

def baseline(x: torch.Tensor) -> torch.Tensor:
    return 2 * x


def test_the_baseline_called_as_the_candidate_is_flagged(turn_off: Any) -> None:
    refs = (Reference("fp64", twice, oracle=True), Reference("eager", baseline, baseline=True))
    _, ok, summary, status = run(workload({"ours": lambda x: 2 * x, "mine": honest}, references=refs))
    assert ok and status == "warn"
    assert summary.endswith("; is this the reference? ours gives the baseline's bits with the baseline's "
                            "kernels")
    assert "mine gives" not in summary  # the same bits by another kernel (add, not mul): its own work
    turn_off("is-reference")
    assert run(workload({"ours": lambda x: 2 * x}, references=refs))[3] == "pass"


def test_a_baseline_that_raises_says_the_check_could_not_run() -> None:
    def broken(x: torch.Tensor) -> torch.Tensor:
        raise RuntimeError("no such backend")

    refs = (Reference("fp64", twice, oracle=True), Reference("eager", broken, baseline=True))
    _, ok, summary, status = run(workload({"ours": honest}, references=refs))
    assert ok and status == "warn"
    assert "is-reference could not run for ours against the baseline eager: RuntimeError: no such backend" \
           in summary


# --- timer-intact, evaluator-intact -------------------------------------------------------------

@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """Whatever a cheat replaces is put back after the test (a guard turned off leaves it replaced)."""
    monkeypatch.setattr(torch.cuda.Event, "elapsed_time", torch.cuda.Event.elapsed_time)
    monkeypatch.setattr(calls, "compare", calls.compare)
    monkeypatch.setattr(calls, "constant_output", calls.constant_output)
    monkeypatch.setattr(time, "perf_counter", time.perf_counter)
    monkeypatch.setattr(guards_identity, "_taken", None)
    return monkeypatch


def patches_the_timer(x: torch.Tensor) -> torch.Tensor:
    torch.cuda.Event.elapsed_time = lambda self, end: 0.001  # type: ignore[method-assign]
    return 2 * x


def test_a_timer_patched_during_the_call_fails_and_is_put_back(held: pytest.MonkeyPatch, turn_off: Any) -> None:
    real = torch.cuda.Event.elapsed_time
    rows, ok, summary, _ = run(workload({"ours": patches_the_timer, "honest": honest}))
    assert not ok and summary.startswith("FAILS at n=16: replaced torch.cuda.Event.elapsed_time during "
                                         "its call: a timer patch")
    assert torch.cuda.Event.elapsed_time is real  # put back: the next candidate runs under the real timer
    assert all(r["ok"] for r in rows if r["candidate"] == "honest")
    turn_off("timer-intact")
    assert run(workload({"ours": patches_the_timer}))[1]


def passes_everything(x: torch.Tensor) -> torch.Tensor:
    calls.compare = lambda out, ref, *a: {"ok": True, "max_abs": 0.0, "rel_l2": 0.0, "nonfinite": 0,
                                          "tolerance": 1.0, "what": ""}
    calls.constant_output = lambda out, ref: None
    return torch.zeros_like(x)


def test_the_cockpits_check_replaced_during_the_call_is_evaluator_tampering(held: pytest.MonkeyPatch,
                                                                            turn_off: Any) -> None:
    _, ok, summary, _ = run(workload({"ours": passes_everything}))
    assert not ok and summary.startswith("FAILS at n=16: replaced the cockpit's check calls.compare during its "
                                         "call: evaluator tampering")
    turn_off("evaluator-intact")
    assert run(workload({"ours": passes_everything}))[1]


def test_a_timer_patched_when_the_workload_was_imported_fails_every_candidate(held: pytest.MonkeyPatch) -> None:
    before = guards_identity.snapshot()
    held.setattr(time, "perf_counter", lambda: 0.0)
    notes: list[str] = []
    w = workload({"ours": honest, "mine": honest})
    rows, ok = correctness(w, w.correctness_grid(), lambda s: {}, lambda line: None, notes=notes, identity=before)
    assert not ok and [r["candidate"] for r in rows] == ["ours", "mine"]
    assert rows[0]["what"] == "replaced time.perf_counter when the workload was imported: a timer patch"


def test_the_probe_holds_the_timer_as_it_was_before_the_workload_is_imported(
        held: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from cockpit.probes import workload_probe

    real = time.perf_counter
    (tmp_path / "wl.py").write_text(
        "import time\ntime.perf_counter = lambda: 0.0\n"
        "from cockpit.workload.spec import Workload, Reference\n"
        "WORKLOAD = Workload(name='w', candidates={'ours': abs}, references=(Reference('o', abs, oracle=True),),\n"
        "                    make_inputs=lambda seed, n: (1,), test_grid=({'n': 1},), bench_grid=())\n")
    workload_probe.main(["correctness", "--workspace", str(tmp_path), "--workload", "wl.py"])
    taken = guards_identity.taken()
    assert taken is not None
    assert {h.said: h.obj for h in taken.held}["time.perf_counter"] is real


# --- test-grid ----------------------------------------------------------------------------------

def right_at_the_bench_shapes(x: torch.Tensor) -> torch.Tensor:
    return 2 * x if x.numel() in (4096, 65536) else x.clone()


def test_a_kernel_right_only_at_the_bench_shapes_is_said_hard_coded(turn_off: Any) -> None:
    w = workload({"ours": right_at_the_bench_shapes}, bench_grid=axes(n=[4096, 16384, 65536]))
    _, ok, summary, _ = run(w, checked_shapes(w))
    assert not ok and summary.startswith("FAILS at n=16: rel L2 5.00e-01 > 1e-05, yet right at the bench grid's "
                                         "shapes (n=4096, n=65536): shapes hard-coded for the bench?")
    turn_off("test-grid")
    assert [w.shape_name(s) for s in checked_shapes(w)] == ["n=4096", "n=65536"]
    assert run(w, checked_shapes(w))[1]


# --- the verdict with guards off ----------------------------------------------------------------

def test_a_verdict_with_guards_off_says_so_and_is_not_a_pass() -> None:
    rows, _ = correctness(workload({"ours": honest}), [{"n": 16}], lambda s: {}, lambda line: None)
    verdict = judge_correctness(read_checked({"rows": rows, "guards_off": ["fresh-rounds", "timer-intact"]}))
    assert verdict.status == "warn"
    assert verdict.summary.endswith("; checks turned off (COCKPIT_GUARDS_OFF): fresh-rounds, timer-intact: "
                                    "this verdict is not a pass")
    again = judge_correctness(read_checked(verdict.result.to_json()))  # type: ignore[union-attr]
    assert again.status == "warn" and again.summary == verdict.summary


def test_the_bench_holds_each_timed_block_to_the_probes_snapshot(held: pytest.MonkeyPatch) -> None:
    real = time.perf_counter
    guards_identity.start()
    assert guards_identity.held_intact("during a timed block") is None
    time.perf_counter = lambda: 0.0
    assert guards_identity.held_intact("during a timed block") == ("replaced time.perf_counter during a timed "
                                                                   "block: a timer patch")
    assert time.perf_counter is real


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32, torch.float16, torch.bfloat16, torch.complex64])
def test_each_poison_is_a_nan_told_apart_by_its_signature(dtype: torch.dtype) -> None:
    from cockpit.probes.workload.poison import poison, poisoned

    out, ref = torch.zeros(6, dtype=dtype), torch.zeros(6, dtype=dtype)
    poison(out, "output")
    poison((ref,), "reference")
    assert bool(torch.isnan(out).all()) and bool(torch.isnan(ref).all())
    assert poisoned(out, "output") == 6 and poisoned(out, "reference") == 0
    assert poisoned(ref, "reference") == 6
    assert poisoned(torch.full((6,), float("nan"), dtype=dtype), "output") == 0  # torch's own NaN


def test_the_gate_pane_lists_the_warnings_and_the_checks_turned_off() -> None:
    from cockpit.gates.correctness.view import correctness_view

    read = read_checked({"rows": [], "warnings": ["is this the reference? ours gives the baseline's bits with "
                                                  "the baseline's kernels"], "guards_off": ["test-grid"]})
    facts = {(f.label, f.value) for f in correctness_view(read).facts}
    assert ("checks off", "test-grid") in facts
    assert ("warning", "is this the reference? ours gives the baseline's bits with the baseline's kernels") in facts


def test_a_loose_check_is_said_once_for_the_workload_not_once_a_shape() -> None:
    w = workload({"ours": honest}, check=rel_l2(1e-2), test_grid=axes(n=[16, 32, 64]))
    _, ok, summary, status = run(w)
    assert ok and status == "warn"
    assert summary.count("the check passes the op done wholly in bf16") == 1
