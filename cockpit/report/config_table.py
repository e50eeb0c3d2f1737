"""The per-config table of REPORT.md, report.html and PR.md: one place for its columns, their
units and each cell's text, so the three say the same numbers the same way."""

from __future__ import annotations

from collections.abc import Sequence

from cockpit.report.model import BenchConfigs, ConfigRow, Table

PR_REFERENCES = 3
"""Reference times PR.md's table has room for (the baseline first)."""


def config_table(configs: BenchConfigs, rows: Sequence[ConfigRow] | None = None,
                 references: int | None = None) -> Table:
    """`rows` (every config, worst first, by default) with each time in ms, ours' speedup over
    the baseline in x with its interval, ours' TFLOP/s or GB/s, the SM clocks and why a config's
    time is its launch; `references` caps the reference times shown."""
    rows = configs.worst_first() if rows is None else rows
    refs = configs.labels[1:] if references is None else configs.labels[1:1 + references]
    tflops = any(r.ours.tflops for r in rows)
    gbps = any(r.ours.gbps for r in rows)
    launch = any(r.launch_cost for r in rows)
    columns = _columns(configs, refs, tflops, gbps, launch)
    out = [_cells(r, configs.baseline, refs, tflops, gbps, launch) for r in rows]
    numeric = tuple(c not in ("config", "launch cost") for c in columns)
    return Table(f"run {configs.run_id}", tuple(columns), tuple(out), numeric)


def _columns(configs: BenchConfigs, refs: Sequence[str], tflops: bool, gbps: bool,
             launch: bool) -> list[str]:
    """The table's headers with their units, the optional columns only when some config has them."""
    return ["config", f"vs {configs.baseline} (x)", f"{configs.interval_kind} (x)",
            f"{configs.ours} (ms)", *(f"{label} (ms)" for label in refs),
            *(["TFLOP/s"] if tflops else []), *(["GB/s"] if gbps else []),
            f"MHz {configs.ours}/{configs.baseline}", *(["launch cost"] if launch else [])]


def _cells(r: ConfigRow, baseline: str, refs: Sequence[str], tflops: bool, gbps: bool,
           launch: bool) -> tuple[str, ...]:
    """One config's cells, the optional columns only when some config has them."""
    base = r.time_of(baseline)
    cells = [r.config, _x(r.speedup),
             f"{r.interval[0]:.2f}–{r.interval[1]:.2f}" if r.interval else "—", _ms(r.ours.ms)]
    cells += [_ms(t.ms) if (t := r.time_of(label)) is not None else "—" for label in refs]
    cells += [_rate(r.ours.tflops)] if tflops else []
    cells += [_rate(r.ours.gbps)] if gbps else []
    cells.append(f"{_mhz(r.ours.mhz)}/{_mhz(base.mhz if base else None)}")
    cells += [r.launch_cost] if launch else []
    return tuple(cells)


def _x(value: float | None) -> str:
    return f"{value:.2f}" if value is not None else "—"


def _ms(value: float) -> str:
    return f"{value:.4f}" if value < 1 else f"{value:.3f}"


def _rate(value: float | None) -> str:
    return f"{value:.1f}" if value is not None else "—"


def _mhz(value: float | None) -> str:
    return f"{value:.0f}" if value is not None else "—"
