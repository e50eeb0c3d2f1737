"""The kernel's tunables, one configuration of them, and the space a search walks.

Each tunable is a compile-time knob of csrc/attention.cu (`COCKPIT_ATTN_D<D>_<MACRO>`), per
head dim: every head dim has its own tile configuration, so each is searched on its own.
`accepts` is what the kernel's own `config_ok<D>()` static_assert allows for that knob alone;
the rules that join knobs (tile divisibility) and the GPU's limits are in `feasibility`.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import MISSING, asdict, dataclass, fields
from typing import Any

from cockpit.config import ConfigError
from cockpit.config.tune import TuneConfig, Value


@dataclass(frozen=True)
class Tunable:
    name: str
    """The key in `[tune.space]`."""
    macro: str
    """The kernel's knob: COCKPIT_ATTN_D64_<macro>."""
    meaning: str
    accepts: Callable[[Value], bool]
    rule: str
    """What `accepts` allows, for error messages."""


def _whole(low: int, high: int, step: int = 1) -> Callable[[Value], bool]:
    return lambda v: (isinstance(v, int) and not isinstance(v, bool) and low <= v <= high
                      and v % step == 0)


TUNABLES: tuple[Tunable, ...] = (
    Tunable("block_m", "BM", "query rows per block", _whole(16, 256, 16),
            "a multiple of 16 from 16 to 256"),
    Tunable("block_n", "BN", "keys per K/V tile", _whole(16, 256, 16),
            "a multiple of 16 from 16 to 256"),
    Tunable("warps", "WARPS", "warps per block (each owns 16 or 32 query rows)",
            lambda v: v in (1, 2, 4, 8, 16) and not isinstance(v, bool), "1, 2, 4, 8 or 16"),
    Tunable("min_blocks", "MINB", "__launch_bounds__ minimum blocks per SM", _whole(1, 8),
            "a whole number from 1 to 8"),
    Tunable("stages", "STAGES", "K/V shared-memory buffers (2 = double buffered)",
            lambda v: v in (1, 2) and not isinstance(v, bool), "1 or 2"),
    Tunable("o_smem", "O_SMEM", "O staged through shared memory (else stored from registers)",
            lambda v: isinstance(v, bool), "true or false"),
    Tunable("q_regs", "Q_REGS",
            "Q fragments held in registers (else read from shared memory at every K tile)",
            lambda v: isinstance(v, bool), "true or false"),
)
TUNABLE_NAMES = tuple(t.name for t in TUNABLES)
HEAD_DIMS = (64, 128)


@dataclass(frozen=True, order=True)
class KernelParams:
    """One configuration of the kernel for one head dim."""

    block_m: int
    block_n: int
    warps: int
    min_blocks: int
    stages: int
    o_smem: bool
    q_regs: bool = True

    @property
    def threads(self) -> int:
        return self.warps * 32

    @property
    def rows_per_warp(self) -> float:
        return self.block_m / self.warps

    def smem_bytes(self, head_dim: int) -> int:
        """Dynamic shared memory per block as launched: Q + stages x (K + V), 2-byte elements
        (the kernel's smem_bytes<D>())."""
        return (self.block_m + 2 * self.stages * self.block_n) * head_dim * 2

    def macros(self, head_dim: int) -> tuple[str, ...]:
        """`-D` flags that build this configuration for `head_dim`."""
        values = {t.macro: int(getattr(self, t.name)) for t in TUNABLES}
        return tuple(f"-DCOCKPIT_ATTN_D{head_dim}_{macro}={value}" for macro, value in values.items())

    @property
    def label(self) -> str:
        """Short, for tables and the journal: `BM128 BN64 8w mb2 1st O:smem` (`Q:smem` added when
        Q is read from shared memory, so the hand-picked labels read as they always did)."""
        return (f"BM{self.block_m} BN{self.block_n} {self.warps}w mb{self.min_blocks} "
                f"{self.stages}st O:{'smem' if self.o_smem else 'reg'}{'' if self.q_regs else ' Q:smem'}")

    def as_dict(self) -> dict[str, Value]:
        return asdict(self)

    @classmethod
    def from_dict(cls, values: Mapping[str, Value]) -> KernelParams:
        """From a study's or a header's values; a knob they predate takes the kernel's default."""
        return cls(**{f.name: values[f.name] for f in fields(cls)  # type: ignore[arg-type]
                      if f.name in values or f.default is MISSING})


def config_name(cfg: Mapping[str, Any]) -> str:
    """How the attention workload names a shape in results ("B4 H16 S1024 D64 fp16 full"): the
    confirmation's rows are read beside the bench gate's."""
    causal = "causal" if cfg["causal"] else "full"
    return f"B{cfg['B']} H{cfg['H']} S{cfg['S']} D{cfg['D']} {cfg['dtype']} {causal}"


# The hand-picked configurations (csrc/attention.cu's defaults, csrc/README.md's table).
DEFAULTS: dict[int, KernelParams] = {
    64: KernelParams(128, 128, 4, 2, 1, False, q_regs=False),
    128: KernelParams(128, 32, 4, 1, 1, True, q_regs=False),
}

DEFAULT_SPACE: dict[str, tuple[Value, ...]] = {
    "block_m": (64, 128, 256),
    "block_n": (16, 32, 64, 128, 256),
    "warps": (2, 4, 8, 16),
    "min_blocks": (1, 2),
    "stages": (1, 2),
    "o_smem": (True, False),
    "q_regs": (True, False),
}


def configurations(values: Mapping[str, Sequence[Value]]) -> list[KernelParams]:
    """Every combination of the values, in a stable order."""
    names = [f.name for f in fields(KernelParams)]
    return [KernelParams(**dict(zip(names, combo, strict=True)))  # type: ignore[arg-type]
            for combo in itertools.product(*(values[n] for n in names))]


def resolve_space(tune: TuneConfig) -> dict[str, tuple[Value, ...]]:
    """`[tune.space]` held to the kernel's tunables and what each accepts, every knob it does not
    name at its default values; head dims the kernel has no tile for are refused too. Errors name
    `cockpit.toml:LINE`."""
    for name in tune.space:
        if name not in TUNABLE_NAMES:
            raise ConfigError(f"{tune.line(f'space.{name}')}: tune.space.{name}: unknown tunable (the "
                              f"kernel's tunables: {', '.join(TUNABLE_NAMES)})")
    wrong_dims = [h for h in tune.head_dims if h not in HEAD_DIMS]
    if wrong_dims:
        raise ConfigError(f"{tune.line('head_dims')}: tune.head_dims: {list(tune.head_dims)!r} is not "
                          f"allowed (expected a list drawn from {list(HEAD_DIMS)})")
    out: dict[str, tuple[Value, ...]] = {}
    for tunable in TUNABLES:
        values = tune.space.get(tunable.name, DEFAULT_SPACE[tunable.name])
        wrong = [v for v in values if not tunable.accepts(v)]
        if wrong:
            raise ConfigError(f"{tune.line(f'space.{tunable.name}')}: tune.space.{tunable.name}: "
                              f"{wrong[0]!r} is not a value the kernel accepts for {tunable.meaning} "
                              f"(expected {tunable.rule})")
        out[tunable.name] = values
    return out
