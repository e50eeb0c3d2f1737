"""Each gate's structured result as a table for the detail view."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text

from cockpit.analysis.bench_result import read_bench_result

STATUS_STYLE = {"pass": ("✓", "green"), "warn": ("!", "yellow"), "fail": ("✗", "bold red")}


def env_table(result: dict[str, Any]) -> Table | None:
    checks = result.get("checks")
    if not isinstance(checks, list) or not checks:
        return None
    table = Table(box=None, padding=(0, 1), expand=True, show_header=True, header_style="dim")
    table.add_column("", no_wrap=True, width=1)
    table.add_column("check", no_wrap=True)
    table.add_column("value", ratio=2, no_wrap=True, overflow="ellipsis")
    table.add_column("fix", ratio=3, no_wrap=True, overflow="ellipsis")
    order = {"fail": 0, "warn": 1, "pass": 2}
    for check in sorted(checks, key=lambda c: order.get(str(c.get("status")), 3)):
        icon, style = STATUS_STYLE.get(str(check.get("status")), ("?", "dim"))
        fix = str(check.get("fix", "")) if check.get("status") != "pass" else ""
        table.add_row(Text(icon, style=style), Text(str(check.get("name", "?")), style=style),
                      Text(str(check.get("value", ""))), Text(fix, style="italic"))
    return table


LIMITER_SHORT = {"registers": "regs", "shared memory": "smem", "warps": "warps", "blocks": "blocks"}


def occupancy_cell(t: dict[str, Any]) -> Text:
    """`2×8w 25% regs`: blocks per SM × warps per block, share of the warp slots, limiter."""
    blocks = int(t.get("blocks_per_sm") or 0)
    if not blocks:
        return Text("✗ 0 blocks", style="bold red")
    per_block = int(t["warps_per_sm"]) // blocks
    share = f" {t['fraction']:.0%}" if t.get("fraction") is not None else ""
    limiter = "+".join(LIMITER_SHORT.get(p, p) for p in str(t.get("limiter", "?")).split(" + "))
    return Text(f"{blocks}×{per_block}w{share} {limiter}")


def occupancy_columns(kernels: list[dict[str, Any]]) -> list[tuple[tuple[str, str], str]]:
    """((source, arch), title) of every occupancy target, in order of first appearance: the GPU
    present as `H100 here`, a target from the limits table as `L4 sm_89`."""
    columns: dict[tuple[str, str], str] = {}
    for k in kernels:
        for t in k.get("occupancy") or []:
            here = t["source"] == "CUDA runtime"
            name = str(t["gpu"]).split()[0] if t["gpu"] else t["arch"]
            columns.setdefault((t["source"], t["arch"]), f"{name} here" if here else f"{name} {t['arch']}")
    return list(columns.items())


def build_problems(result: dict[str, Any]) -> Text:
    """What failed or warns, one line each, above the kernels (lines wrap at any width)."""
    errors = result.get("errors") or []
    failed = [f"{f['target']} failed: {f['said'] or 'no output'}" for f in result.get("failed_steps") or []]
    lines = [(f"✗ {e['file']}:{e['line']}: {e['message']}" if e.get("line") else
              f"✗ {e['file']}: {e['message']}" if e.get("file") else f"✗ {e['message']}", "bold red")
             for e in errors[:20]]
    if not any(e.get("line") for e in errors):
        lines += [(f"✗ {text}", "bold red") for text in failed[:5]]
    lines += [(f"✗ {text}", "bold red") for text in result.get("failures") or []]
    lines += [(f"! {text}", "yellow") for text in result.get("warnings") or []]
    return Text("\n").join(Text(text, style=style) for text, style in lines)


def build_table(result: dict[str, Any]) -> Table | None:
    """Errors first (file:line, or the failed step and what it said); then each kernel as
    launched: registers, spills, stack, shared memory per block, occupancy on each GPU."""
    from cockpit.hardware.itanium import itanium_demangle
    from cockpit.hardware.symbols import short_name

    kernels = result.get("kernels") or []
    problems = build_problems(result)
    if not problems and not kernels:
        return None
    columns = occupancy_columns(kernels)
    notes = Text("\n".join(result.get("notes") or []), style="dim italic")
    table = Table(box=None, padding=(0, 1), expand=True, show_header=bool(kernels), header_style="dim",
                  title=problems or None, title_justify="left", caption=notes or None,
                  caption_justify="left")
    archs = sorted({str(k["arch"]) for k in kernels})
    table.add_column("kernel", ratio=3, no_wrap=True, overflow="ellipsis")
    if len(archs) > 1:
        table.add_column("arch", no_wrap=True)
    table.add_column(f"regs {archs[0]}" if len(archs) == 1 else "regs", justify="right", no_wrap=True)
    for name in ("spill/stack", "smem/blk"):
        table.add_column(name, justify="right", no_wrap=True)
    for _, title in columns:
        table.add_column(title, justify="right", no_wrap=True)
    for k in kernels:
        spills = k["spill_stores"] + k["spill_loads"]
        label = k.get("label") or short_name(itanium_demangle(k["name"]) or k["name"])
        smem = k.get("smem_per_block")
        targets = {(t["source"], t["arch"]): t for t in k.get("occupancy") or []}
        table.add_row(label, *([k["arch"]] if len(archs) > 1 else []), str(k["registers"]),
                      Text(f"{spills}/{k['stack']}", style="bold yellow" if spills else ""),
                      f"{smem / 1024:g} KB" if smem is not None else "?",
                      *(occupancy_cell(targets[key]) if key in targets else "" for key, _ in columns))
    return table


def correctness_table(result: dict[str, Any]) -> Table | None:
    rows = result.get("rows") or []
    if not rows:
        return None
    table = Table(box=None, padding=(0, 1), expand=True, header_style="dim")
    table.add_column("", width=1)
    table.add_column("config", ratio=2, no_wrap=True)
    for name in ("max |Δ|", "rel L2", "NaN/Inf"):
        table.add_column(name, justify="right", no_wrap=True)
    for r in reversed(rows):  # the failing (largest) config first
        icon, style = ("✓", "green") if r["ok"] else ("✗", "bold red")
        table.add_row(Text(icon, style=style), Text(r["config"], style="" if r["ok"] else style),
                      f"{r['max_abs']:.2e}", f"{r['rel_l2']:.2e}", str(r["nonfinite"]))
    return table


SPARK = "▁▂▃▄▅▆▇█"


def speedup_chart(speedups: list[float]) -> Text:
    """Each bench run of the session, oldest first: a bar and its speedup."""
    text = Text("runs: ", style="dim")
    top = max(speedups)
    for i, s in enumerate(speedups):
        level = min(len(SPARK) - 1, int(s / top * (len(SPARK) - 1))) if top > 0 else 0
        style = "red" if s < 0.5 else "yellow" if s < 1.0 else "green"
        text.append(f"{' ' if i else ''}{SPARK[level]}{s:.2f}x", style=style)
    return text


TABLE_REFERENCES = 3
"""Reference columns the bench table has room for: the baseline and the ones ours does worst against."""
RATES = (("TF/s", "tflops", ".0f"), ("GB/s", "gbps", ".0f"), ("% peak", "pct_peak", ".0f"))


def bench_table(result: dict[str, Any], speedups: list[float] | None = None) -> Table | None:
    """Each config's times, speedup over the baseline and the SM clocks ours and the baseline ran
    at; below them the verdict: comparable or suspect and why, and what was seen that does not
    make it suspect."""
    from cockpit.gates.bench_validity import validity_words

    bench = read_bench_result(result)
    if bench is None or not bench.rows:
        return None
    validity = bench.validity or {}
    clocks = validity.get("config_clocks") or {}
    references = bench.compared(TABLE_REFERENCES)
    ours = [row.impl.get(bench.ours) for row in bench.rows]
    rates = [(title, key, spec) for title, key, spec in RATES
             if any(getattr(t, key) is not None for t in ours if t is not None)]
    table = Table(box=None, padding=(0, 1), expand=True, header_style="dim",
                  caption=speedup_chart(speedups) if speedups else None, caption_justify="left")
    table.add_column("config", ratio=2, no_wrap=True, overflow="ellipsis")
    for name in (f"{bench.ours_label} ms", *(f"{bench.label(r)} ms" for r in references), "speedup",
                 *(title for title, _, _ in rates), f"MHz {bench.ours_label}/{bench.baseline_label}"):
        table.add_column(name, justify="right", no_wrap=True)

    def ms(value: float | None) -> str:
        return f"{value:.3f}" if value is not None else "n/a"

    def mhz(config: str) -> str:
        c = clocks.get(config) or {}
        return "/".join(f"{c[k]:.0f}" if k in c else "–" for k in (bench.ours, bench.baseline)) if c else ""

    def line(text: Text) -> None:
        table.add_row(text, *([""] * (len(table.columns) - 1)))

    for row, time in zip(bench.rows, ours, strict=True):
        speed = row.speedups.get(bench.baseline)
        style = "" if speed is None else "red" if speed < 0.5 else "yellow" if speed < 1 else "green"
        table.add_row(row.config, ms(row.median_ms(bench.ours)), *(ms(row.median_ms(r)) for r in references),
                      Text(f"{speed:.2f}x" if speed else "n/a", style=style),
                      *(format(v, spec) if time and (v := getattr(time, key)) is not None else "n/a"
                        for _, key, spec in rates), mhz(row.config))
    keep = bench.keep or {}
    if bench.next_step:
        line(Text(f"{bench.level}: {bench.next_step}", style="bold"))
    if keep.get("summary"):
        line(Text(keep["summary"], style="italic"))
    if validity:
        if validity.get("valid"):
            line(Text(validity_words(dict(validity)), style="green"))
        for reason in validity.get("reasons", []):
            line(Text(f"suspect: {reason}", style="bold yellow"))
        for note in validity.get("notes", []):
            line(Text(note, style="dim"))
        if validity.get("hint"):
            line(Text(f"suspect: {validity['hint']}", style="yellow"))
    return table


def bar(percent: float | None, width: int = 20) -> Text:
    if percent is None:
        return Text("n/a".ljust(width), style="dim")
    filled = round(min(100.0, percent) / 100 * width)
    style = "red" if percent >= 80 else "yellow" if percent >= 60 else "green"
    return Text("█" * filled + "·" * (width - filled), style=style)


def profile_table(result: dict[str, Any]) -> Table | None:
    """SOL compute vs memory bars, occupancy and its limiter, top stalls, verdict, the ONE fix."""
    from cockpit.ui.kernel_name import KernelName

    kernels = result.get("kernels") or []
    if not kernels:
        return None
    table = Table(box=None, padding=(0, 1), expand=True, show_header=False)
    table.add_column(style="dim", no_wrap=True)
    table.add_column(ratio=1)
    for k in kernels[:3]:
        v = k["verdict"]
        ev = {name: m for name, m in v.get("evidence", {}).items()}

        def pct(*names: str, ev: dict[str, Any] = ev) -> float | None:
            for name in names:
                m = ev.get(name)
                if isinstance(m, dict) and isinstance(m.get("value"), (int, float)):
                    return float(m["value"])
            return None

        compute = pct("sm__throughput.avg.pct_of_peak_sustained_elapsed", "compute")
        memory = pct("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", "memory")
        table.add_row("kernel", KernelName(str(k.get("kernel") or k["name"])))
        table.add_row("compute", bar(compute) + Text(f" {compute:.1f} %" if compute is not None else ""))
        table.add_row("memory", bar(memory) + Text(f" {memory:.1f} %" if memory is not None else ""))
        table.add_row("verdict", Text(f"{v['bottleneck']}: {v['headline']}", style="bold"))
        table.add_row("fix", Text(v["recommendation"], style="bold cyan"))
        table.add_row("confidence", f"{v['confidence']}: {v.get('confidence_reason', '')}")
        for note in v.get("notes", [])[:4]:
            table.add_row("", Text(f"- {note}", style="dim"))
    if result.get("clock_note"):
        table.add_row("clocks", Text(result["clock_note"], style="italic"))
    if result.get("report"):
        table.add_row("report", str(result["report"]))
    return table


RENDERERS = {"env": env_table, "build": build_table, "correctness": correctness_table,
             "bench": bench_table, "profile": profile_table}


def render_result(gate: str, result: dict[str, Any], speedups: list[float] | None = None
                  ) -> Table | None:
    """The gate's result as a table; `speedups`: the session's bench runs, for the chart."""
    if gate == "bench":
        return bench_table(result, speedups) if result else None
    renderer = RENDERERS.get(gate)
    return renderer(result) if renderer and result else None


def gate_markdown(run: Any) -> str:
    """A gate run as a small markdown table, for the session log."""
    when = f"{run.duration_s:.1f} s" if run.duration_s is not None else "?"
    lines = ["| gate | status | result | took |", "|---|---|---|---|",
             f"| {run.gate} | {run.status} | {run.summary.replace('|', '/')} | {when} |"]
    bench = read_bench_result(run.result) if run.gate == "bench" else None
    if bench is not None and bench.rows:
        lines += ["", f"| config | {bench.ours_label} ms | {bench.baseline_label} ms | speedup |",
                  "|---|---|---|---|"]
        for row in bench.rows:
            ours, base = row.median_ms(bench.ours), row.median_ms(bench.baseline)
            if ours is not None and base is not None:
                lines.append(f"| {row.config} | {ours:.3f} | {base:.3f} | "
                             f"{row.speedups.get(bench.baseline, 0):.2f}x |")
    return "\n".join(lines)
