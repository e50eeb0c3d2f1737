"""The workload contract: what a kernel engineer declares so every gate can run their kernel.

A workload module (`workloads/NAME.py`, named by `[workload] module` in cockpit.toml) builds one
`Workload` and names it `WORKLOAD`. The gates import it only in their child Python (the one with
the user's CUDA torch); the cockpit itself reads what it declares as a `Manifest` (no torch).

    from cockpit.workload import Extension, Knob, Profile, Reference, Workload, axes, rel_l2

    KERNEL = Extension("my_softmax", sources=("csrc/softmax.cu", "csrc/binding.cpp"))

    def ours(x, out):                     # a candidate: the inputs, then the output buffer
        return KERNEL.load().forward(x, out)

    WORKLOAD = Workload(
        name="row-softmax",
        build=KERNEL,
        candidates={"ours": ours},
        references=(Reference("fp64", lambda x: torch.softmax(x.double(), -1), oracle=True),  # never timed
                    Reference("torch.softmax", lambda x: torch.softmax(x, -1), baseline=True)),
        make_inputs=make_inputs,          # (seed, **shape) -> tuple of tensors on the GPU
        make_output=make_output,          # (*inputs, **shape) -> the buffer the candidate fills
        test_grid=axes(M=[1, 7, 333], N=[1, 31, 1000, 4097], dtype=["fp16", "bf16"]),
        bench_grid=axes(M=[4096], N=[1024, 4096, 16384], dtype=["fp16", "bf16"]),
        check=rel_l2(1e-2),
        flops=lambda M, N, **_: 5 * M * N,
        bytes=lambda M, N, dtype: 2 * M * N * (2 if dtype != "fp32" else 4),
        dtype_key="dtype",
        profile=Profile(kernel=r"softmax", shape={"M": 4096, "N": 4096, "dtype": "fp16"}),
        knobs=(Knob("ROWS", (1, 2, 4, 8), words="{} row(s) per block"),), rule=lambda k, limits: None,
        keep_per=("N",), group_words={"N": "rows of {}"},   # words: how a pull request reads a setting
    )

Backward and full passes (Liger's benchmark modes): a workload whose candidates are
differentiable (a `torch.autograd.Function` around the forward and backward kernels) declares

    WORKLOAD = Workload(..., modes=("forward", "backward", "full"), grad_inputs=(0,))

and correctness and the bench run it in each mode. The inputs that require grad are those
`make_inputs` returns with `requires_grad=True`, and those `grad_inputs` names by index. In
`backward` and `full` the candidates and the references are called without the output buffer
(`fn(*inputs, **knobs)`: autograd must own the output it differentiates; a candidate that takes
one in forward writes `def ours(x, out=None)`), and the backward is seeded with `grad_output`:
by default random normal values like the output, from a fixed seed, the same values for every
candidate, the timed references and the oracle. Correctness compares the gradient of every input
that requires grad with the oracle's autograd (the oracle on float32 copies of 16-bit inputs, so
its gradients are not rounded to the input dtype) by `grad_check` (default: `check`). The bench
times `forward` as the call, `backward` alone (the backward of a forward done untimed before,
retain_graph, each input's `.grad` set to None before each call, as `triton.testing.do_bench(fn,
grad_to_none=...)` does), and `full` as forward + backward; each mode is a row of its own
("M=4096 N=1024 fp16 backward"), and the headline names the modes side by side. Rates for the
backward come from `backward_flops` / `backward_bytes` (full: forward + backward).

Everything here is plain Python with no torch import, so the cockpit can check a declaration
and a test can build one without a GPU.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from cockpit.workload.builds import (
    Build,
    Extension,
    Inline,
    NoBuild,
    TritonJit,
    use_variant,
    workspace_root,
)

__all__ = [
    "MODES", "Build", "Check", "Extension", "Inline", "Knob", "KnobValue", "NoBuild", "Profile", "Reference",
    "Shape", "TritonJit", "Workload", "allclose", "axes", "custom", "exact", "rel_l2", "shape_name",
    "use_variant", "workspace_root",
]

Shape = Mapping[str, Any]
"""One point of a grid: axis name -> value, e.g. {"M": 4096, "N": 1024, "dtype": "fp16"}."""
KnobValue = int | bool | str
MODES = ("forward", "backward", "full")
"""What a workload can be checked and timed in: the call; the backward alone (of a forward done
untimed before); forward + backward."""
GRAD_MODES = ("backward", "full")


def axes(**values: Sequence[Any]) -> tuple[dict[str, Any], ...]:
    """Named axes whose product is the grid (nvbench's model), first axis slowest:
    `axes(M=[1, 4096], dtype=["fp16", "bf16"])` is four shapes."""
    names = list(values)
    for name, vals in values.items():
        if isinstance(vals, (str, bytes)) or not isinstance(vals, Sequence) or not vals:
            raise ValueError(f"axis {name!r} needs a non-empty list of values, not {vals!r}")
    return tuple(dict(zip(names, combo, strict=True)) for combo in itertools.product(*values.values()))


# --- what is run and compared ------------------------------------------------------------------

@dataclass(frozen=True)
class Reference:
    """Something the candidates are compared with: `fn(*inputs)` returns its output.

    `oracle`: the exact answer correctness compares against (float32/float64), never timed.
    `baseline`: the timed reference the speedup is stated against ("0.81x vs torch.softmax").
    `optional`: may be missing on a box (a backend that does not run there): skipped, said."""

    name: str
    fn: Callable[..., Any]
    oracle: bool = False
    baseline: bool = False
    optional: bool = False
    build: Extension | None = None
    """What the build gate builds for it besides the workload's own build: an earlier version of
    your kernel, `KERNEL.at("HEAD")`, so "did my change help" is measured side by side."""


@dataclass(frozen=True)
class Check:
    """How a candidate's output is judged against the oracle's.

    `rel_l2` (default): ||out - ref|| / ||ref|| <= tolerance; a kernel returning zeros scores 1.0
    and fails. `allclose`: |out - ref| <= atol + rtol*|ref| everywhere. `exact`: equal.
    `custom`: `fn(out, ref, shape, inputs) -> (ok, what)` decides (GPU MODE's
    `check_implementation` sees the inputs too). Tolerances may differ per dtype."""

    kind: Literal["rel_l2", "allclose", "exact", "custom"]
    tolerance: Mapping[str, float] = field(default_factory=dict)
    """dtype -> tolerance (rel_l2) or rtol (allclose); "*" for any dtype."""
    atol: Mapping[str, float] = field(default_factory=dict)
    fn: Callable[..., tuple[bool, str]] | None = None

    def tolerance_for(self, dtype: str | None) -> float:
        return self.tolerance.get(dtype or "*", self.tolerance.get("*", 1e-2))

    def atol_for(self, dtype: str | None) -> float:
        return self.atol.get(dtype or "*", self.atol.get("*", 0.0))


def rel_l2(tolerance: float | Mapping[str, float] = 1e-2) -> Check:
    return Check("rel_l2", _per_dtype(tolerance))


def allclose(atol: float | Mapping[str, float], rtol: float | Mapping[str, float]) -> Check:
    return Check("allclose", _per_dtype(rtol), _per_dtype(atol))


def exact() -> Check:
    return Check("exact")


def custom(fn: Callable[..., tuple[bool, str]]) -> Check:
    return Check("custom", fn=fn)


def _per_dtype(value: float | Mapping[str, float]) -> dict[str, float]:
    return dict(value) if isinstance(value, Mapping) else {"*": float(value)}


PROFILE_EVERY_KERNEL = ""
"""A profile's kernel regex that names none: every kernel of the candidate's one call is profiled
(the profile probe runs ncu over that call's range only)."""


@dataclass(frozen=True)
class Profile:
    """What the profile gate runs under ncu: one shape, kernels whose name matches `kernel`."""

    kernel: str
    """A regex over the kernel's (demangled) name, as ncu's `--kernel-name regex:` takes it."""
    shape: Shape
    candidate: str | None = None
    """Which candidate (default: the first)."""


@dataclass(frozen=True)
class Knob:
    """One tunable: its values and how it reaches the kernel.

    `via="define"`: a compile-time `-D{macro}=value` for a C++ kernel (`macro` defaults to the
    name); `via="kwarg"`: a keyword argument of the candidate (Triton `constexpr`s, `num_warps`,
    `num_stages`)."""

    name: str
    values: tuple[KnobValue, ...]
    via: Literal["define", "kwarg"] = "define"
    macro: str | None = None
    default: KnobValue | None = None
    """The value the kernel uses untuned (default: the first value)."""
    hints: Mapping[str, int] = field(default_factory=dict)
    """What a profile finding asks of this knob: finding -> +1 (its next larger value) or -1 (its next
    smaller; for a flag, +1 is true). Findings are the profile verdict's words: its bottleneck
    ("latency", "occupancy", "small-grid", "memory-bound", ...), the start of its recommendation
    ("larger tiles", "fewer bytes", "overlap") and what limits occupancy ("limited by registers",
    "limited by shared memory", "limited by warps"). The tune's seed tries those moves first."""
    words: str | Mapping[str, str] | None = None
    """How a pull request reads a setting of this knob (the tune names it "name=value"; None: so it
    reads). A format string of the value: "{} warp(s)" reads "1 warp", "8 warps" ("(s)" is "s" unless
    the value is 1), and may name another knob's value: "block {}x{block_n}" ("" for that other knob:
    these words say it). Or, for a flag or a few named values, the value's text -> its phrase:
    {"True": "O in shared memory", "False": "O in registers"}; a value not named reads as written."""

    @property
    def start(self) -> KnobValue:
        return self.values[0] if self.default is None else self.default


@dataclass(frozen=True)
class Workload:
    """Everything the gates need to know about one kernel; see the module docstring."""

    name: str
    candidates: Mapping[str, Callable[..., Any]]
    """name -> fn(*inputs, out, **kwarg knobs) (`out` only when the workload has `make_output`);
    the first is "ours" in the summaries."""
    references: tuple[Reference, ...]
    make_inputs: Callable[..., tuple[Any, ...]]
    """(seed, /, **shape) -> the inputs on the GPU: tensors, and any plain values the calls take
    (a flag such as causal). A shape that carries its own seed may use it instead."""
    test_grid: Sequence[Shape]
    """Where kernels break: small, odd, ragged. Correctness runs it (and the bench grid's ends)."""
    bench_grid: Sequence[Shape]
    """What is timed."""
    build: Build = field(default_factory=NoBuild)
    make_output: Callable[..., Any] | None = None
    """(*inputs, **shape) -> an empty output buffer; the gate fills it with NaN first, so an
    element the kernel never writes fails. None: candidates return their output."""
    check: Check = field(default_factory=rel_l2)
    flops: Callable[..., float] | None = None
    """(**shape) -> floating-point operations of one call: TFLOP/s and % of peak."""
    bytes: Callable[..., float] | None = None
    """(**shape) -> bytes one call must move at least: GB/s and % of HBM bandwidth."""
    dtype_key: str | None = "dtype"
    """The shape key naming the element type ("fp16", "bf16", "fp32", "fp8"): tolerance and peak."""
    profile: Profile | None = None
    knobs: tuple[Knob, ...] = ()
    rule: Callable[..., str | None] | None = None
    """(knob values, GPU limits[, group]) -> why this combination cannot work, or None: rejected
    before it is built. `group` (when the rule takes a third argument) is the keep_per values the
    winner is kept for, e.g. {"D": 128}. `limits` is the target GPU's (cockpit.hardware.limits, with
    `occupancy_floor` from [tune]); `cockpit.workload.resources.fits` judges a launch against it."""
    keep_per: tuple[str, ...] = ()
    """Shape keys a tuned winner is kept per (e.g. the head dim)."""
    group_words: Mapping[str, str] = field(default_factory=dict)
    """keep_per key -> how a pull request reads its value, a format string as a knob's `words`:
    {"N": "rows of {}"} reads "N=4096" as "rows of 4096" (a key without words reads as written)."""
    knob_defaults: Callable[..., Mapping[str, KnobValue]] | None = None
    """(**group) -> the knob values the kernel uses untuned in that keep_per group, when they differ
    per group (a tile per head dim); the search starts there. None: each knob's `default`."""
    tune_grid: Sequence[Shape] | None = None
    """What `cockpit tune` times each configuration on (default: the bench grid): a few large shapes
    per `keep_per` group keep a trial to seconds."""
    size: Callable[..., Any] | None = None
    """(**shape) -> a sort key: correctness runs the smallest shape first (default: bytes, FLOPs,
    or the product of the shape's whole numbers)."""
    describe_shape: Callable[..., str] | None = None
    """(**shape) -> how a shape is named in tables; default "M=4096 N=1024 fp16"."""
    not_sizes: tuple[str, ...] = ("seed",)
    """Whole-number shape keys that are not sizes (a seed, GPU MODE's `contention`): left out of
    the default size order, so a shape's seed never makes it "larger"."""
    output_in_inputs: bool = False
    """The inputs carry the buffer the call writes its answer into and returns (GPU MODE's
    `generate_input` does): that one input may change in the call; no other may."""
    atomics: bool = False
    """The kernel's answer may change in its last bits from run to run (atomics, a split reduction
    whose order is free): correctness holds a repeat on the same inputs to the check's tolerance
    instead of bit for bit, and says by how much it differed."""
    modes: tuple[str, ...] = ("forward",)
    """Which passes are checked and timed: "forward" (the call), "backward" (the backward alone,
    of a forward done untimed before), "full" (forward + backward). See the module docstring."""
    grad_inputs: tuple[int, ...] = ()
    """Indices of the inputs gradients are taken for (besides those `make_inputs` returns with
    requires_grad=True): the gates make them leaves that require grad in backward and full."""
    grad_output: Callable[..., Any] | None = None
    """(output, seed) -> the gradient the backward is seeded with (default: random normal like the
    output from a fixed seed; the same values for every implementation and the oracle)."""
    grad_check: Check | None = None
    """How each gradient is judged against the oracle's (default: `check`; rel_l2 1e-2 when
    `check` is custom)."""
    backward_flops: Callable[..., float] | None = None
    """(**shape) -> floating-point operations of one backward: TFLOP/s of backward and full rows."""
    backward_bytes: Callable[..., float] | None = None
    """(**shape) -> bytes one backward must move at least: GB/s of backward and full rows."""

    def __post_init__(self) -> None:
        modes = tuple(self.modes)
        if not modes or any(m not in MODES for m in modes) or len(set(modes)) != len(modes):
            raise ValueError(f"modes={self.modes!r}: name each of {', '.join(MODES)} at most once")
        if any(isinstance(i, bool) or not isinstance(i, int) or i < 0 for i in self.grad_inputs):
            raise ValueError(f"grad_inputs={self.grad_inputs!r}: indices of the inputs, e.g. (0,)")
        object.__setattr__(self, "modes", modes)
        object.__setattr__(self, "grad_inputs", tuple(self.grad_inputs))

    @property
    def grad_modes(self) -> tuple[str, ...]:
        """The modes that run a backward."""
        return tuple(m for m in self.modes if m in GRAD_MODES)

    def mode_name(self, shape: Shape, mode: str) -> str:
        """How a shape's row in one mode is named: the shape alone in forward (so its history
        compares with forward-only runs), "M=4096 N=1024 fp16 backward" in the others."""
        name = self.shape_name(shape)
        return name if mode == "forward" else f"{name} {mode}"

    @property
    def oracle(self) -> Reference | None:
        return next((r for r in self.references if r.oracle), None)

    @property
    def baseline(self) -> Reference | None:
        timed = [r for r in self.references if not r.oracle]
        return next((r for r in timed if r.baseline), timed[0] if timed else None)

    def shape_name(self, shape: Shape) -> str:
        if self.describe_shape is not None:
            return self.describe_shape(**shape)
        return shape_name(shape)

    def smallest_first(self, shapes: Sequence[Shape]) -> list[Shape]:
        """By the workload's own `size`, else bytes, FLOPs, or the product of the whole numbers that
        are sizes (not `not_sizes`)."""
        def key(shape: Shape) -> Any:
            if self.size is not None:
                return self.size(**shape)
            for count in (self.bytes, self.flops):
                if count is not None:
                    return count(**shape)
            total = 1
            for k, v in shape.items():
                if isinstance(v, int) and not isinstance(v, bool) and k not in self.not_sizes:
                    total *= max(1, v)
            return total
        return sorted(shapes, key=key)

    def or_every_kernel(self) -> Workload:
        """Itself, or, when it declares no Profile, one that profiles every kernel of one call of
        its first candidate on its largest bench shape (a Triton kernel no one here wrote names
        no kernel regex, and the profile gate has something to run all the same)."""
        if self.profile is not None or not self.bench_grid:
            return self
        largest = self.smallest_first(self.bench_grid)[-1]
        return dataclasses.replace(self, profile=Profile(kernel=PROFILE_EVERY_KERNEL, shape=largest))

    def correctness_grid(self) -> list[Shape]:
        """What correctness checks: the test grid, then the bench grid's smallest and largest
        shapes (the timed shapes are validated too), each once."""
        shapes = list(self.test_grid)
        names = {self.shape_name(s) for s in shapes}
        if self.bench_grid:
            ordered = self.smallest_first(self.bench_grid)
            for s in (ordered[0], ordered[-1]):
                if self.shape_name(s) not in names:
                    names.add(self.shape_name(s))
                    shapes.append(s)
        return shapes


def shape_name(shape: Shape) -> str:
    """"M=4096 N=1024 fp16 causal": key=value, a string value alone, a true flag by its name."""
    parts = []
    for key, value in shape.items():
        if isinstance(value, bool):
            if value:
                parts.append(key)
        elif isinstance(value, str):
            parts.append(value)
        else:
            parts.append(f"{key}={value}")
    return " ".join(parts)
