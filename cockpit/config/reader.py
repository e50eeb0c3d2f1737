"""What every section's reader shares: `ConfigError`, the line each key sits on, the checks."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from cockpit.errors import CockpitError


class ConfigError(CockpitError):
    """cockpit.toml could not be used as written."""


class KeyLines:
    """Maps dotted key paths to the line that defines them, for error messages."""

    _HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
    _KEY = re.compile(r"^\s*([A-Za-z0-9_\-.\"' ]+?)\s*=")

    def __init__(self, text: str, path: Path) -> None:
        self.path = path
        self.lines: dict[str, int] = {}
        table = ""
        for number, line in enumerate(text.splitlines(), start=1):
            header = self._HEADER.match(line)
            if header:
                table = _normalise(header.group(1))
                self.lines.setdefault(table, number)
                continue
            key = self._KEY.match(line)
            if key:
                full = f"{table}.{_normalise(key.group(1))}" if table else _normalise(key.group(1))
                self.lines.setdefault(full, number)

    def where(self, key_path: str) -> str:
        parts = key_path.split(".")
        for end in range(len(parts), 0, -1):
            line = self.lines.get(".".join(parts[:end]))
            if line:
                return f"{self.path}:{line}"
        return str(self.path)


def _normalise(dotted: str) -> str:
    return ".".join(part.strip().strip("\"'") for part in dotted.split("."))


def line_of_decode_error(exc: Exception) -> int | None:
    lineno = getattr(exc, "lineno", None)
    if isinstance(lineno, int):
        return lineno
    m = re.search(r"line (\d+)", str(exc))
    return int(m.group(1)) if m else None


def strip_position(exc: Exception) -> str:
    return re.sub(r"\s*\(at line \d+, column \d+\)", "", str(exc)) or "invalid TOML"


class ConfigReader:
    """Validates the parsed TOML; every error names file:line, the key path and what is allowed."""

    def __init__(self, data: Mapping[str, Any], lines: KeyLines) -> None:
        self.data = data
        self.lines = lines

    def fail(self, key_path: str, message: str) -> ConfigError:
        return ConfigError(f"{self.lines.where(key_path)}: {key_path}: {message}")

    def check_keys(self, table: Mapping[str, Any], prefix: str, allowed: tuple[str, ...]) -> None:
        for key in table:
            if key not in allowed:
                path = f"{prefix}.{key}" if prefix else key
                raise self.fail(path, f"unknown key (allowed here: {', '.join(allowed)})")

    def number(self, value: Any, key_path: str, ok: Callable[[float], bool], rule: str) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not ok(value):
            raise self.fail(key_path, f"{value!r} is not allowed (expected {rule})")
        if not math.isfinite(value):  # TOML's inf and nan: a journal could never read them back
            raise self.fail(key_path, f"{value!r} is not allowed (expected a finite number: {rule})")
        return float(value)

    def table(self, key: str) -> Mapping[str, Any]:
        """The top-level `[key]` table, empty when the file has none."""
        value = self.data.get(key, {})
        if not isinstance(value, dict):
            raise self.fail(key, f"must be a table, e.g. [{key}]")
        return value
