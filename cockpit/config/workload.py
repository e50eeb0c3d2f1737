"""`[workload]`: the attention configs the correctness and bench gates run. The bench times the
round sizes; correctness also checks ragged ones, where tiled kernels break."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cockpit.config.reader import ConfigReader


@dataclass(frozen=True)
class Workload:
    """`[workload]`: the attention configs the correctness and bench gates run."""

    batch: int = 4
    heads: int = 16
    head_dims: tuple[int, ...] = (64, 128)
    seq_lens: tuple[int, ...] = (32, 128, 512, 1024, 2048, 4096, 8192)
    dtypes: tuple[str, ...] = ("fp16", "bf16")
    causal: tuple[bool, ...] = (False, True)
    large_seq: int = 8192
    """From this sequence length on, the batch is lowered to `large_batch`."""
    large_batch: int = 2
    tolerance: float = 1e-2
    reps: int = 30
    warmup: int = 5
    settle_ms: float = 100.0
    """Before each timed block, each implementation runs this long untimed, so it is timed at its
    own steady clock: a power-capped GPU needs ~100 ms to settle after a lighter kernel."""
    rounds: int = 2
    """Timed blocks per implementation and config, in alternating order (drift hits all alike)."""
    ragged_seq_lens: tuple[int, ...] = (1, 17, 65, 127, 1000, 4097)
    """Correctness only: sequence lengths that are not multiples of any tile (a last partial
    tile, a single row, one past a power of two)."""
    ragged_batch: int = 3
    ragged_heads: int = 5
    """Odd batch and head counts for the ragged configs, so no grid dimension is a power of two."""

    def configs(self) -> list[dict[str, object]]:
        """The round configs, smallest first: what the bench times."""
        out: list[dict[str, object]] = []
        for s in sorted(self.seq_lens):
            b = self.large_batch if s >= self.large_seq else self.batch
            out += self._each_kind(b, self.heads, s)
        return out

    def correctness_configs(self) -> list[dict[str, object]]:
        """The round configs and the ragged ones: what correctness checks."""
        ragged = [c for s in sorted(self.ragged_seq_lens)
                  for c in self._each_kind(self.ragged_batch, self.ragged_heads, s)]
        return self.configs() + ragged

    def _each_kind(self, b: int, h: int, s: int) -> list[dict[str, object]]:
        return [{"B": b, "H": h, "S": s, "D": d, "dtype": dtype, "causal": causal}
                for d in self.head_dims for dtype in self.dtypes for causal in self.causal]


def read_workload(table: Mapping[str, Any], reader: ConfigReader) -> Workload:
    d = Workload()
    keys = ("batch", "heads", "head_dims", "seq_lens", "dtypes", "causal", "large_seq",
            "large_batch", "tolerance", "reps", "warmup", "settle_ms", "rounds", "ragged_seq_lens",
            "ragged_batch", "ragged_heads")
    reader.check_keys(table, "workload", keys)

    def count(key: str, low: int) -> int:
        return int(reader.number(table.get(key, getattr(d, key)), f"workload.{key}",
                                 lambda v: v >= low and float(v).is_integer(),
                                 f"a whole number >= {low}"))

    def ints(key: str, allowed: tuple[int, ...] | None, may_be_empty: bool = False) -> tuple[int, ...]:
        value = table.get(key, list(getattr(d, key)))
        ok = isinstance(value, list) and (value or may_be_empty) and all(
            isinstance(v, int) and not isinstance(v, bool) and v > 0
            and (allowed is None or v in allowed) for v in value)
        if not ok:
            rule = f"a list drawn from {list(allowed)}" if allowed else "a list of lengths > 0"
            raise reader.fail(f"workload.{key}", f"{value!r} is not allowed (expected {rule})")
        return tuple(value)

    dtypes = table.get("dtypes", list(d.dtypes))
    if not isinstance(dtypes, list) or not dtypes or not set(dtypes) <= {"fp16", "bf16"}:
        raise reader.fail("workload.dtypes", f"{dtypes!r} is not allowed (expected a list of fp16, bf16)")
    causal = table.get("causal", list(d.causal))
    if not isinstance(causal, list) or not causal or not all(isinstance(c, bool) for c in causal):
        raise reader.fail("workload.causal",
                          f"{causal!r} is not allowed (expected [false, true] or one of them)")
    return Workload(
        batch=count("batch", 1), heads=count("heads", 1),
        head_dims=ints("head_dims", (64, 128)), seq_lens=ints("seq_lens", None),
        dtypes=tuple(dtypes), causal=tuple(causal), large_seq=count("large_seq", 1),
        large_batch=count("large_batch", 1),
        tolerance=reader.number(table.get("tolerance", d.tolerance), "workload.tolerance",
                                lambda v: 0 < v < 1, "a relative error such as 0.01"),
        reps=count("reps", 3), warmup=count("warmup", 1),
        settle_ms=reader.number(table.get("settle_ms", d.settle_ms), "workload.settle_ms",
                                lambda v: 0 <= v <= 5000, "milliseconds from 0 to 5000"),
        rounds=count("rounds", 1),
        ragged_seq_lens=ints("ragged_seq_lens", None, may_be_empty=True),
        ragged_batch=count("ragged_batch", 1), ragged_heads=count("ragged_heads", 1),
    )
