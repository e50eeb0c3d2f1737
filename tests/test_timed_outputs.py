"""The timed calls are the checked calls (issue 46): every timed call reads and writes windows of
its own in a shifting pool, a sample of each block's calls and its last are checked against the
oracle after the block, and a kernel right while checked and wrong while timed fails the bench in
its own line. On CPU tensors: the pool, the draw, the check and the bench engine itself (its CUDA
events on the host's clock); the gate from probe files that carry what the probe writes."""

from __future__ import annotations

import gzip
import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch

from cockpit.config import Config
from cockpit.gates.bench.gate import BenchGate
from cockpit.gates.bench.result import BenchResult
from cockpit.gates.gate import GateContext, Verdict
from cockpit.probes import guarded
from cockpit.probes.workload.check import correctness
from cockpit.probes.workload.shifting import SLOT_BYTES, Outputs, shift_inputs, shift_output
from cockpit.probes.workload.timed_check import (
    SAMPLES,
    Oracle,
    TimedCalls,
    TimedWrong,
    output_pools,
    timed_calls,
)
from cockpit.workload.guards import off_line
from cockpit.workload.result_wire import BenchRowJson
from cockpit.workload.spec import Reference, Workload, axes, rel_l2

COMPARABLE = Path(__file__).parent / "fixtures" / "gpu" / "comparable" / "probe-bench.json.gz"


def softmax_inputs(seed: int, /, M: int, N: int) -> tuple[torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    return (torch.randn(M, N, generator=gen),)


def honest(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    return out.copy_(torch.softmax(x, -1))


def softmax_workload(ours: Any, **kw: Any) -> Workload:
    base: dict[str, Any] = dict(
        name="softmax", candidates={"ours": ours},
        references=(Reference("fp64", lambda x: torch.softmax(x.double(), -1), oracle=True),
                    Reference("torch.softmax", lambda x: torch.softmax(x, -1), baseline=True)),
        make_inputs=softmax_inputs, make_output=lambda x, **_: torch.empty_like(x),
        test_grid=axes(M=[4], N=[64]), bench_grid=axes(M=[64], N=[256]), check=rel_l2(1e-5))
    return Workload(**{**base, **kw})


class RightForEight:
    """The planted kernel of issue 46: right for its first 8 calls per shape, then fast and 1 % wrong."""

    def __init__(self) -> None:
        self.calls: dict[tuple[int, ...], int] = {}

    def __call__(self, x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
        n = self.calls[tuple(x.shape)] = self.calls.get(tuple(x.shape), 0) + 1
        y = torch.softmax(x, -1)
        return out.copy_(y if n <= 8 else y * 1.01)


class CachedPerPointer:
    """A cheat: the answer kept per input pointer and handed back whenever that pointer comes again."""

    def __init__(self) -> None:
        self.seen: dict[int, torch.Tensor] = {}

    def __call__(self, x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
        if x.data_ptr() not in self.seen:
            self.seen[x.data_ptr()] = torch.softmax(x, -1)
        return out.copy_(self.seen[x.data_ptr()])


@pytest.fixture
def guards_off(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Turn guards off as COCKPIT_GUARDS_OFF does, for one test."""
    def off(*names: str) -> None:
        monkeypatch.setattr(guarded, "_off", frozenset(names))
    yield off


def timed(w: Workload, fn: Any, slots: int = 8, sets: int = 2) -> TimedCalls:
    """One candidate's timed calls on two input sets of the bench shape, checked."""
    shape = w.bench_grid[0]
    inputs = [w.make_inputs(10 + k, **shape) for k in range(sets)]
    assert w.make_output is not None
    return TimedCalls("ours", lambda i, out: fn(*i, out), [shift_inputs(i, slots) for i in inputs],
                      [shift_output(w.make_output(*i, **shape), slots, own=True) for i in inputs],
                      Oracle(w, shape, w.shape_name(shape)), poison=True)


def block(calls: TimedCalls, n: int) -> None:
    calls.begin(n)
    for i in range(n):
        calls(i % len(calls.sets))
    calls.end()


# --- the shifting pool ------------------------------------------------------------------------------

def test_every_call_on_a_set_reads_and_writes_windows_of_its_own_256_bytes_apart() -> None:
    x = torch.randn(64, 256)
    shifted = shift_inputs((x,), 16)
    out = shift_output(torch.empty_like(x), 16, own=True)
    pointers = [s[0].data_ptr() for s in shifted.inputs]
    assert len(set(pointers)) == 16 and len({o.data_ptr() for o in out.outs}) == 16
    assert {b - a for a, b in itertools.pairwise(pointers)} == {SLOT_BYTES}
    assert all(s[0].shape == x.shape and s[0].is_contiguous() for s in shifted.inputs)
    # the keep slot lies past every window: no call that writes a window touches it
    last_end = out.outs[-1].data_ptr() + x.numel() * 4
    assert out.keepable and out.keep.data_ptr() >= last_end
    assert (out.keep.data_ptr() - out.outs[0].data_ptr()) % SLOT_BYTES == 0  # the same kind of pointer
    assert bool(out.keep.isnan().all()) and bool(out.outs[3].isnan().all())  # poisoned: its own


def test_each_window_holds_the_tensors_values_rotated_and_a_refresh_changes_every_one() -> None:
    x = torch.arange(4096, dtype=torch.float32).reshape(64, 64)
    shifted = shift_inputs((x,), 8)
    step = SLOT_BYTES // 4
    for j, (window,) in enumerate(shifted.inputs):
        assert torch.equal(window.reshape(-1), x.reshape(-1).roll(-j * step))
    before = [w.clone() for (w,) in shifted.inputs]
    shifted.refresh()
    for (window,), old in zip(shifted.inputs, before, strict=True):
        assert not torch.equal(window, old)  # the same pointer, other values
        assert torch.equal(window.reshape(-1).sort().values, x.reshape(-1).sort().values)  # rotated


def test_no_timed_call_reads_a_window_read_before_while_its_values_stayed_and_rotation_waits_until_then(
        ) -> None:
    """The pool's values change before a block would read some window a second time (untimed
    settling and eager calls counted), and not before: a rotation is copies on the GPU, and one
    every block cost the attention grid 4 s."""
    w = softmax_workload(honest)
    calls = timed(w, honest, slots=8, sets=2)
    reads: list[tuple[int, int, int, bool]] = []  # set, pointer, values' generation, timed
    pointer_set = {s.inputs[j][0].data_ptr(): k for k, s in enumerate(calls.sets) for j in range(8)}

    def watched(inputs: Any, out: torch.Tensor) -> torch.Tensor:
        k = pointer_set[inputs[0].data_ptr()]
        reads.append((k, inputs[0].data_ptr(), calls.sets[k].generation, calls.in_block >= 0))
        return honest(inputs[0], out)

    calls.run = watched
    rng = iter([3, 0, 1, 5, 0, 2, 4, 1, 0, 3] * 3)
    for _ in range(30):
        for i in range(next(rng)):  # a block's settling (or the eager batch before it), untimed
            calls(i % 2)
        block(calls, 4)
    for n, read in enumerate(reads):
        if read[3]:
            assert read[:3] not in {r[:3] for r in reads[:n]}, f"call {n} read a window it read before"
    generations = calls.sets[0].generation + calls.sets[1].generation
    assert 0 < generations < 30  # rotated when needed, not before every block


def test_a_candidates_calls_on_every_set_write_one_pool_a_window_each_as_a_reference_writes_one_block(
        ) -> None:
    """A reference that allocates its output each call gets the same block back from the caching
    allocator, so its writes stay in L2; a candidate's outputs in a pool per input set spread over
    every set, past the L2 the sets outgrow, and on an H200 the same softmax read 0.87x itself. Its
    calls on all the sets write one pool now: a window of its own each call in a block, within
    one output plus 256 B a call."""
    w = softmax_workload(honest)
    shape = w.bench_grid[0]
    inputs = [w.make_inputs(10 + k, **shape) for k in range(6)]
    bufs = [w.make_output(*i, **shape) for i in inputs]  # type: ignore[misc]
    found = timed_calls(w, shape, "M=64 N=256", {"ours": lambda i, out: honest(*i, out)}, inputs, bufs,
                        {"ours"}, calls_per_block=48)
    calls = found["ours"]
    assert len({id(o) for o in calls.outs}) == 1
    written: list[int] = []

    def watched(inputs: Any, out: torch.Tensor) -> torch.Tensor:
        written.append(out.data_ptr())
        return honest(inputs[0], out)

    calls.run = watched
    keep = calls.outs[0].keep.data_ptr()
    size = 64 * 256 * 4
    for _ in range(5):
        written.clear()
        block(calls, 48)
        windows = [p for p in written if p != keep]
        assert len(set(windows)) == len(windows) == 48 - SAMPLES  # no window twice in a block
        assert max(windows) + size - min(windows) <= size + 48 * SLOT_BYTES
    assert calls.checked == 5 * (SAMPLES + 1)


def test_an_output_a_window_cannot_hold_whole_keeps_a_pool_per_set() -> None:
    bufs = [(torch.empty(8), torch.empty(8, 8).t()) for _ in range(3)]
    outs = output_pools(bufs, 4, 12, own=True)
    assert len({id(o) for o in outs}) == 3 and not any(o.keepable for o in outs)
    assert len({id(o) for o in output_pools([torch.empty(8)] * 3, 1, 12, own=True)}) == 3  # pool off


def test_integer_strided_and_gradient_inputs_and_non_tensors_stay_as_they_are() -> None:
    idx, strided = torch.arange(10), torch.randn(8, 8).t()
    grad = torch.randn(4, requires_grad=True)
    x = torch.randn(16)
    shifted = shift_inputs((x, idx, strided, grad, 3, {"x": x, "scale": 0.5}), 4)
    for window in shifted.inputs:
        assert window[1] is idx and window[2] is strided and window[3] is grad and window[4] == 3
        assert window[5]["x"] is window[0] and window[5]["scale"] == 0.5  # a tensor met twice: one pool
    assert len({w[0].data_ptr() for w in shifted.inputs} - {x.data_ptr()}) == 4


def test_an_output_with_a_tensor_the_pool_leaves_as_it_is_has_no_keep_slot() -> None:
    out = shift_output((torch.empty(8), torch.empty(8, 8).t()), 4, own=True)
    assert not out.keepable
    assert shift_output(None, 4, own=True).keepable  # no buffer: the returned tensors are kept


# --- the draw and the check ---------------------------------------------------------------------------

def test_sampled_calls_write_the_keep_slot_and_the_draw_changes_block_to_block() -> None:
    w = softmax_workload(honest)
    calls = timed(w, honest)
    keep = {o.keep.data_ptr() for o in calls.outs}
    written: list[int] = []

    def watched(inputs: Any, out: torch.Tensor) -> torch.Tensor:
        written.append(out.data_ptr())
        return honest(inputs[0], out)

    calls.run = watched
    draws = []
    for _ in range(20):
        written.clear()
        block(calls, 12)
        draws.append(tuple(n for n, p in enumerate(written) if p in keep))
    assert all(1 <= len(d) <= SAMPLES for d in draws)
    assert len(set(draws)) > 1  # drawn from secrets, never the same calls every block
    assert calls.checked >= 20 * 2 and calls.check_s > 0  # the samples and the last, every block


def test_a_timed_call_that_is_wrong_fails_in_its_own_line_naming_the_call_and_the_shape() -> None:
    w = softmax_workload(honest)
    calls = timed(w, honest)
    block(calls, 10)  # calls 1-10: right
    calls.run = lambda i, out: out.copy_(torch.softmax(*i, -1) * 1.01)
    with pytest.raises(TimedWrong) as wrong:
        block(calls, 10)
    assert wrong.value.line.startswith("right when checked, wrong when timed (call ")
    assert " of shape M=64 N=256): rel L2 1.00e-02 > 1e-05" in wrong.value.line
    assert 11 <= wrong.value.call <= 20
    assert wrong.value.as_json()["impl"] == "ours"


def test_a_result_kept_per_pointer_is_wrong_on_a_later_sampled_call() -> None:
    w = softmax_workload(honest)
    cheat = CachedPerPointer()
    calls = timed(w, cheat, slots=4)
    with pytest.raises(TimedWrong):  # the windows come back, their values never do
        for _ in range(10):
            block(calls, 8)


def test_without_the_shifting_pool_a_result_kept_per_pointer_passes(guards_off: Any) -> None:
    guards_off("shifting-pool")
    w = softmax_workload(honest)
    calls = timed(w, CachedPerPointer(), slots=1)
    for _ in range(10):
        block(calls, 8)  # the same pointer and the same values every time: the cache is right
    assert calls.checked >= 10


def test_an_answer_written_into_the_inputs_is_checked_at_each_sets_last_call() -> None:
    def into_data(data: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        x, out = data
        return out.copy_(torch.softmax(x, -1))

    def oracle(data: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        return torch.softmax(data[0].double(), -1)

    w = softmax_workload(into_data, references=(Reference("fp64", oracle, oracle=True),),
                         make_output=None, output_in_inputs=True)
    sets = [((torch.randn(8, 64), torch.empty(8, 64)),) for _ in range(3)]
    calls = TimedCalls("ours", lambda i, out: into_data(*i), [shift_inputs(s, 8) for s in sets],
                       [Outputs([None] * 8, None, False) for _ in sets], Oracle(w, {"M": 8, "N": 64}, "M=8"))
    block(calls, 9)
    assert calls.checked == SAMPLES + 1  # last calls on SAMPLES + 1 sets: nothing wrote their windows after


# --- the bench engine on the host's clock -------------------------------------------------------------

def bench(w: Workload) -> tuple[list[BenchRowJson], list[str]]:
    from cockpit.probes.workload.timing import bench, implementations

    lines: list[str] = []
    rows = bench(w, implementations(w, lambda s: {}), reps=5, warmup=1, input_sets=2, say=lines.append,
                 budget_s=0.02, settle_ms=0.0, rounds=1)
    return rows, lines


def test_the_planted_kernel_passes_correctness_and_fails_the_bench_in_its_own_line(cpu_events: None) -> None:
    cheat = RightForEight()
    w = softmax_workload(cheat)
    _, ok = correctness(w, w.correctness_grid(), lambda s: {}, lambda line: None)
    assert ok  # 3 rounds and a repeat: 4 calls per shape, all right
    with pytest.raises(TimedWrong) as wrong:
        bench(w)
    # its 9th call on the shape, the 5th of this bench (correctness made 4): warm-up calls count too
    assert wrong.value.config == "M=64 N=256" and wrong.value.call >= 5
    assert "right when checked, wrong when timed" in str(wrong.value)


def test_with_the_timed_outputs_check_off_the_planted_kernel_passes_the_bench(cpu_events: None,
                                                                             guards_off: Any) -> None:
    guards_off("timed-outputs")
    rows, _ = bench(softmax_workload(RightForEight()))
    assert [r["config"] for r in rows] == ["M=64 N=256"] and rows[0]["checked"] == 0


def test_an_honest_candidate_passes_and_its_rows_and_log_say_what_checking_cost(cpu_events: None) -> None:
    rows, lines = bench(softmax_workload(honest))
    assert rows[0]["checked"] >= 1 and 0 < rows[0]["check_s"] < 5  # a sample a block and its last (the same call at times)
    assert f"{rows[0]['checked']} timed outputs checked in " in lines[-1]


# --- tune trials ----------------------------------------------------------------------------------------

def test_a_configuration_that_writes_nothing_fails_its_check_and_its_timed_trial(cpu_events: None) -> None:
    from cockpit.probes.workload.tune_serve import Server
    from cockpit.workload.probe_wire import ConfigJson
    from cockpit.workload.spec import Knob
    from cockpit.workload.tuned import KnobDecl, Tuned

    def ours(x: torch.Tensor, out: torch.Tensor, SKIP: bool = False) -> torch.Tensor:
        return out if SKIP else honest(x, out)

    w = softmax_workload(ours, knobs=(Knob("SKIP", (False, True), via="kwarg"),))
    server = Server(w, Tuned((KnobDecl("SKIP", "kwarg", "SKIP", False),), (), "sm_90"), {"reps": 5, "warmup": 1, "input_sets": 2,
                                                    "settle_ms": 0.0, "rounds": 1}, lambda line: None)
    shapes = [dict(w.bench_grid[0])]
    right: ConfigJson = {"knobs": {"SKIP": False}, "variant": None}
    skips: ConfigJson = {"knobs": {"SKIP": True}, "variant": None}
    assert server.check(right, shapes)["ok"]
    assert not server.check(skips, shapes)["ok"]  # its fresh output is NaN
    assert server.handle({"op": "time", "config": right, "shapes": shapes})
    with pytest.raises(TimedWrong) as wrong:  # no other trial's answer waits in its output
        server.handle({"op": "time", "config": skips, "shapes": shapes})
    assert "NaN" in wrong.value.what
    # a confirmation interleaves configurations: the one that writes nothing has outputs of its own
    with pytest.raises(TimedWrong) as shared:
        server.rows({"good": server.bind(right), "skips": server.bind(skips)}, shapes, False)
    assert shared.value.impl == "skips"


# --- the gate -------------------------------------------------------------------------------------------

def gate(tmp_path: Path, **extra: Any) -> Verdict:
    """The bench gate on an H100 bench a probe wrote on a clean window, ours twice as fast (a pass)."""
    data = json.loads(gzip.decompress(COMPARABLE.read_bytes()))
    for row in data["rows"]:
        ours = row["impl"]["ours"]
        ours["median_ms"] /= 2
        ours["ci_ms"] = [v / 2 for v in ours.get("ci_ms", [])]
        for key in [k for k in row if k.startswith("speedup_vs_") and not k.endswith("_ci")]:
            row[key] *= 2
            row.pop(key + "_ci", None)
    for row in data["rows"]:
        if "records" in extra:
            row["impl"]["ours"]["records"] = extra["records"]
    data.update({k: v for k, v in extra.items() if k != "records"})
    ctx = GateContext(tmp_path, tmp_path / "s", "002-bench", config=Config())
    ctx.result_path.parent.mkdir(parents=True, exist_ok=True)
    ctx.result_path.write_text(json.dumps(data))
    return BenchGate().verdict(ctx, 1 if "caught" in extra else 0, [])


def test_the_bench_gate_fails_a_candidate_wrong_when_timed_with_that_line_first(tmp_path: Path) -> None:
    verdict = gate(tmp_path, ok=False, caught={"config": "B2 H16 S4096 D128 bf16", "impl": "ours",
                                              "guard": "timed-outputs",
                                              "line": "right when checked, wrong when timed (call 57 of shape "
                                                      "B2 H16 S4096 D128 bf16): rel L2 1.00e-02 > 1e-05"})
    assert verdict.status == "fail"
    assert verdict.summary.splitlines()[0] == ("ours: right when checked, wrong when timed (call 57 of shape "
                                               "B2 H16 S4096 D128 bf16): rel L2 1.00e-02 > 1e-05")
    assert isinstance(verdict.result, BenchResult) and verdict.result.keep is not None
    assert verdict.result.keep.action == "revert"


def test_a_bench_with_guards_off_says_so_first_and_never_passes(tmp_path: Path) -> None:
    honest_run = gate(tmp_path)
    assert honest_run.status == "pass"
    verdict = gate(tmp_path, guards_off=["shifting-pool", "timed-outputs"])
    assert verdict.status != "pass"
    line = off_line(frozenset({"shifting-pool", "timed-outputs"}))
    assert line is not None and verdict.summary.startswith(line)


def test_a_bench_whose_timed_outputs_no_oracle_could_check_says_so_and_never_passes(tmp_path: Path) -> None:
    verdict = gate(tmp_path, timed_unchecked="the workload declares no oracle (Reference(..., oracle=True))")
    assert verdict.status == "warn"
    assert verdict.summary.endswith("; timed outputs not checked: the workload declares no oracle "
                                    "(Reference(..., oracle=True))")


def test_a_namedtuple_of_inputs_keeps_its_fields_in_every_window() -> None:
    from collections import namedtuple

    Data = namedtuple("Data", "x scale")
    shifted = shift_inputs((Data(torch.randn(64), 2.0),), 4)
    assert all(isinstance(w[0], Data) and w[0].scale == 2.0 for w in shifted.inputs)


def test_the_bench_pane_says_what_its_checks_did_and_cost_and_why_an_audit_did_not_run() -> None:
    from cockpit.gates.bench.checks import checks_line

    rows = [{"checked": 9, "check_s": 0.25, "impl": {
                "ours": {"median_ms": 0.1, "records": {"kernels_per_call": 2.0, "busy_us": 9.0, "timer_us": 12.0,
                                                       "audit_s": 0.4}},
                "torch.softmax": {"median_ms": 0.05}}},
            {"checked": 3, "check_s": 0.05, "impl": {
                "ours": {"median_ms": 0.2, "records": {"kernels_per_call": 2.0, "busy_us": 19.0, "timer_us": 22.0,
                                                       "audit_s": 0.3}}}}]
    assert checks_line(rows) == ("12 timed outputs checked against the oracle (0.3 s); kernel records audited on 2 "
                                 "candidate configs: the timer saw all their work (0.7 s)")
    assert checks_line([{"impl": {"ours": {"records": {"error": "no CUDA device: no kernel-records audit"}}}}]) == \
        "no CUDA device: no kernel-records audit"
    assert checks_line([{"impl": {"ours": {"median_ms": 0.1}}}]) is None  # a bench from before the checks


def test_a_bench_whose_kernel_records_could_not_be_read_says_so_and_never_passes(tmp_path: Path) -> None:
    why = "the profiler recorded no GPU work (a torch without CUPTI?): no kernel-records audit"
    assert gate(tmp_path, records={"kernels_per_call": 1.0, "busy_us": 5.0, "timer_us": 6.0}).status == "pass"
    verdict = gate(tmp_path, records={"error": why})
    assert verdict.status == "warn" and verdict.summary.endswith(f"; {why}")
