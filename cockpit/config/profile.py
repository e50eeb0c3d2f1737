"""`[profile]`: how the profile gate runs ncu. What it profiles (the kernel's name and one shape)
is the workload's `profile`; `kernel_regex` here overrides the name."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cockpit.config.moved import refuse_moved
from cockpit.config.reader import ConfigReader


@dataclass(frozen=True)
class ProfileSettings:
    """`[profile]`: how the profile gate runs ncu."""

    kernel_regex: str = ""
    """Overrides the workload's kernel-name regex ("" keeps the workload's)."""
    launch_skip: int = 3
    sections: tuple[str, ...] = ("SpeedOfLight", "Occupancy", "LaunchStats", "WarpStateStats",
                                 "SchedulerStats", "MemoryWorkloadAnalysis",
                                 "MemoryWorkloadAnalysis_Tables")
    set_full: bool = False
    clock_control: str = "base"
    """ncu's default: clocks locked to base, so its durations are not the benchmark's."""



def read_profile(table: Mapping[str, Any], reader: ConfigReader) -> ProfileSettings:
    d = ProfileSettings()
    refuse_moved(table, "profile", reader)
    keys = tuple(ProfileSettings.__dataclass_fields__)
    reader.check_keys(table, "profile", keys)
    values: dict[str, Any] = {}
    for key in keys:
        default = getattr(d, key)
        value = table.get(key, default)
        path = f"profile.{key}"
        if key == "sections":
            if not isinstance(value, (list, tuple)) or not value or not all(
                    isinstance(v, str) and re.fullmatch(r"[A-Za-z_]+", v) for v in value):
                raise reader.fail(path, f"{value!r} is not allowed (expected ncu section names)")
            value = tuple(value)
        elif key == "clock_control" and value not in ("base", "none"):
            raise reader.fail(path, f"{value!r} is not allowed (expected base or none)")
        elif isinstance(default, bool):
            if not isinstance(value, bool):
                raise reader.fail(path, f"{value!r} is not allowed (expected true or false)")
        elif isinstance(default, int):
            value = int(reader.number(value, path, lambda v: v >= 0 and float(v).is_integer(),
                                      "a whole number >= 0"))
        elif key == "kernel_regex":
            try:
                re.compile(str(value))
            except re.error as exc:
                raise reader.fail(path, f"{value!r} is not a regular expression ({exc})") from exc
        values[key] = value
    return ProfileSettings(**values)
