"""`[sanitize]`: how the sanitizer gate runs compute-sanitizer: which tool, on how many of the
workload's smallest test shapes, and the bounds that keep a run that is 10-100x slower than the
kernel's own to minutes (one memcheck call at 1M elements took 66 s on an H100)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cockpit.config.reader import ConfigReader

TOOLS = ("memcheck", "racecheck", "initcheck", "synccheck")


@dataclass(frozen=True)
class SanitizeSettings:
    """`[sanitize]`: compute-sanitizer's tool and the bounds of its run."""

    tool: str = "memcheck"
    """memcheck (out of bounds, misaligned), racecheck (shared-memory hazards), initcheck
    (uninitialized global reads) or synccheck (barrier misuse)."""
    shapes: int = 3
    """The smallest test shapes each candidate is called on, once per shape."""
    timeout_s: float = 900.0
    """The whole sanitizer run; past it the run is stopped and the shape it was on is named."""
    print_limit: int = 20
    """Errors printed in full (the ERROR SUMMARY counts them all)."""
    launch_count: int = 0
    """Kernel launches checked (0: every launch of the candidates)."""
    torch_kernels: bool = False
    """Check torch's own kernels too (the inputs' fills, copies); off: only the candidates'."""


def read_sanitize(table: Mapping[str, Any], reader: ConfigReader) -> SanitizeSettings:
    """`[sanitize]` checked key by key; a bad value is one line naming cockpit.toml:LINE."""
    keys = tuple(SanitizeSettings.__dataclass_fields__)
    reader.check_keys(table, "sanitize", keys)
    d = SanitizeSettings()
    tool = table.get("tool", d.tool)
    if tool not in TOOLS:
        raise reader.fail("sanitize.tool", f"{tool!r} is not allowed (expected one of {', '.join(TOOLS)})")
    torch_kernels = table.get("torch_kernels", d.torch_kernels)
    if not isinstance(torch_kernels, bool):
        raise reader.fail("sanitize.torch_kernels",
                          f"{torch_kernels!r} is not allowed (expected true or false)")

    def count(key: str, low: int, high: int) -> int:
        return int(reader.number(table.get(key, getattr(d, key)), f"sanitize.{key}",
                                 lambda v: low <= v <= high and float(v).is_integer(),
                                 f"a whole number from {low} to {high}"))

    return SanitizeSettings(
        tool=tool, shapes=count("shapes", 1, 50),
        timeout_s=reader.number(table.get("timeout_s", d.timeout_s), "sanitize.timeout_s",
                                lambda v: v > 0, "seconds > 0, default 900"),
        print_limit=count("print_limit", 1, 10_000), launch_count=count("launch_count", 0, 1_000_000),
        torch_kernels=torch_kernels)
