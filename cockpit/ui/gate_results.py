"""Each gate's structured result as a table for the detail view."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text

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


def build_table(result: dict[str, Any]) -> Table | None:
    """Errors as file:line first; then each kernel's registers, smem, stack and spills."""
    from cockpit.gates.build import short_name

    errors = result.get("errors") or []
    kernels = result.get("kernels") or []
    if not errors and not kernels:
        return None
    table = Table(box=None, padding=(0, 1), expand=True, show_header=bool(kernels),
                  header_style="dim")
    table.add_column("kernel", ratio=3, no_wrap=True, overflow="ellipsis")
    for name in ("arch", "regs", "smem KB", "stack", "spills"):
        table.add_column(name, justify="right", no_wrap=True)
    for error in errors[:20]:
        where = f"{error['file']}:{error['line']}: " if error.get("file") else ""
        table.add_row(Text(f"✗ {where}{error['message']}", style="bold red"), "", "", "", "", "")
    for k in kernels:
        spills = k["spill_stores"] + k["spill_loads"]
        table.add_row(short_name(k["name"]), k["arch"], str(k["registers"]),
                      f"{k['smem'] / 1024:.1f}", str(k["stack"]),
                      Text(str(spills), style="bold yellow" if spills else ""))
    return table


RENDERERS = {"env": env_table, "build": build_table}


def render_result(gate: str, result: dict[str, Any]) -> Table | None:
    renderer = RENDERERS.get(gate)
    return renderer(result) if renderer and result else None
