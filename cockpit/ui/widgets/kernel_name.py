"""A kernel's name as a panel shows it: `attn_fwd_kernel<half, 64, 128, 64, 8, 2, true>`, not
ncu's `void unnamed>::attn_fwd_kernel<__half, ...>(AttnParams, float)`; cut inside its template
arguments when the panel is narrow, so the kernel's own name stays."""

from __future__ import annotations

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.text import Text

from cockpit.hardware.itanium import itanium_demangle
from cockpit.hardware.symbols import opening, short_name, split_args
from cockpit.printable import printable

NARROWEST = 16
"""Cells a kernel name asks of a table before it is cut."""


def readable_kernel(name: str) -> str:
    """The function's name and template arguments, without return type, namespaces (named,
    anonymous or ncu's `unnamed>`) or parameters; a mangled symbol is demangled first; a Triton
    kernel's name (`_layer_norm_fwd`) stays as it is."""
    demangled = itanium_demangle(name) if name.startswith("_Z") else None
    return short_name(demangled or name)


def fit_kernel_name(name: str, width: int) -> str:
    """`name` in `width` cells: the template arguments that fit, then "…"
    (`attn_fwd_kernel<half, 64, …>`); the function's name itself is cut only when even
    `name<…>` does not fit."""
    if cell_len(name) <= width:
        return name
    if name.endswith(">") and (cut := opening(name, "<", ">")):
        base, args = name[:cut], split_args(name[cut + 1:-1])
        shown: list[str] = []
        for arg in args:
            if cell_len(f"{base}<{', '.join([*shown, arg, '…'])}>") > width:
                break
            shown.append(arg)
        fitted = f"{base}<{', '.join([*shown, '…'])}>"
        if cell_len(fitted) <= width:
            return fitted
        name = base
    text = Text(name)
    text.truncate(max(1, width), overflow="ellipsis")
    return text.plain


class KernelName:
    """A kernel's readable name, fitted to the width it is drawn in (a table cell's)."""

    def __init__(self, name: str, style: str = "bold") -> None:
        self.name = readable_kernel(printable(name))  # from a profile or a result file
        self.style = style

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield Text(fit_kernel_name(self.name, options.max_width), style=self.style, no_wrap=True)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        full = cell_len(self.name)
        return Measurement(min(full, NARROWEST), full)
