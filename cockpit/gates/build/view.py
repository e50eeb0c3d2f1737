"""The build gate's view: what failed or warns first (file:line, or the failed step and what it
said); how the build went; then each kernel as launched: registers, spills and stack, shared
memory per block, and its occupancy on each GPU (the one present, and each target)."""

from __future__ import annotations

from functools import cache

from cockpit.gates.build.result import BuildResult, CompileError, GpuOccupancy, Kernel
from cockpit.gates.view import Cell, Column, Fact, GateView, ViewTable, present, unit

ERRORS_SHOWN = 20
STEPS_SHOWN = 5
LIMITER_SHORT = {"registers": "regs", "shared memory": "smem", "warps": "warps", "blocks": "blocks"}


def build_view(result: BuildResult) -> GateView:
    took = ("up to date (ninja had no work)" if result.up_to_date
            else present(unit(result.build_s, ".1f", " s"), unit(result.steps, ".0f", " ninja steps"),
                         sep=", "))
    facts = [Fact("build", took)] if took else []
    if result.arch:
        facts.append(Fact("arch", result.arch))
    if result.imported is not None:
        facts.append(Fact("import", ("ok" if result.imported else "FAILED")
                          + (f": {result.import_detail}" if result.import_detail else ""),
                          "" if result.imported else "bad"))
    tables = (kernels_table(result.kernels, result.notes),) if result.kernels else ()
    return GateView(tuple(facts), (), tables, problems(result))


def problems(result: BuildResult) -> tuple[Cell, ...]:
    """What failed or warns, one line each: compiler errors, else the failed steps; the kernels'
    failures and warnings."""
    lines = [Cell(_error_line(e), "bad") for e in result.errors[:ERRORS_SHOWN]]
    if not any(e.line is not None for e in result.errors):
        lines += [Cell(f"✗ {f.target} failed: {f.said or 'no output'}", "bad")
                  for f in result.failed_steps[:STEPS_SHOWN]]
    lines += [Cell(f"✗ {text}", "bad") for text in result.failures]
    lines += [Cell(f"! {text}", "warn") for text in result.warnings]
    return tuple(lines)


def _error_line(e: CompileError) -> str:
    """'✗ k.cu:12: message', with as much of where as the compiler said."""
    if e.line is not None and e.file:
        return f"✗ {e.file}:{e.line}: {e.message}"
    return f"✗ {e.file}: {e.message}" if e.file else f"✗ {e.message}"


def kernels_table(kernels: tuple[Kernel, ...], notes: tuple[str, ...]) -> ViewTable:
    targets = occupancy_columns(kernels)
    archs = sorted({k.arch for k in kernels})
    columns = (Column("kernel", share=3), *((Column("arch"),) if len(archs) > 1 else ()),
               Column(f"regs {archs[0]}" if len(archs) == 1 else "regs", True),
               Column("spill/stack", True), Column("smem/blk", True),
               *(Column(title, True) for _, title in targets))
    rows = tuple(_kernel_cells(k, targets, len(archs) > 1) for k in kernels)
    return ViewTable("resources per kernel", columns, rows, notes)


def _kernel_cells(k: Kernel, targets: list[tuple[tuple[str | None, str | None], str]],
                  arch_column: bool) -> tuple[Cell, ...]:
    """One kernel's row: its name, arch (when kernels of several archs are shown), registers,
    spills/stack, shared memory per block and its occupancy on each target ("?" where unknown)."""
    by_target = {(o.source, o.arch): o for o in k.occupancy}
    stack = k.stack if k.stack is not None else "?"
    return (Cell(k.label or kernel_label(k.name)), *((Cell(k.arch),) if arch_column else ()),
            Cell(str(k.registers) if k.registers is not None else "?"),
            Cell(f"{k.spills}/{stack}", "warn" if k.spills else ""),
            Cell(f"{k.smem_per_block / 1024:g} KB" if k.smem_per_block is not None else "?"),
            *(occupancy_cell(by_target[key]) if key in by_target else Cell("") for key, _ in targets))


def occupancy_columns(kernels: tuple[Kernel, ...]) -> list[tuple[tuple[str | None, str | None], str]]:
    """((source, arch), title) of every occupancy target, in order of first appearance: the GPU
    present as `H100 here`, a target from the limits table as `L4 sm_89`."""
    columns: dict[tuple[str | None, str | None], str] = {}
    for k in kernels:
        for o in k.occupancy:
            name = o.gpu.split()[0] if o.gpu else o.arch
            columns.setdefault((o.source, o.arch), f"{name} here" if o.here else f"{name} {o.arch}")
    return list(columns.items())


def occupancy_cell(o: GpuOccupancy) -> Cell:
    """`2×8w 25% regs`: blocks per SM × warps per block, share of the warp slots, limiter."""
    if not o.blocks_per_sm:
        return Cell("✗ 0 blocks", "bad")
    per_block = (o.warps_per_sm or 0) // o.blocks_per_sm
    share = f" {o.fraction:.0%}" if o.fraction is not None else ""
    limiter = "+".join(LIMITER_SHORT.get(p, p) for p in (o.limiter or "?").split(" + "))
    return Cell(f"{o.blocks_per_sm}×{per_block}w{share} {limiter}")


@cache
def kernel_label(mangled: str) -> str:
    """A kernel's short readable name, demangled once per name (a session rebuilds the same kernels)."""
    from cockpit.hardware.itanium import itanium_demangle
    from cockpit.hardware.symbols import short_name

    return short_name(itanium_demangle(mangled) or mangled)
