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


RENDERERS = {"env": env_table}


def render_result(gate: str, result: dict[str, Any]) -> Table | None:
    renderer = RENDERERS.get(gate)
    return renderer(result) if renderer and result else None
