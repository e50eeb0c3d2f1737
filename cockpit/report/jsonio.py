"""`report.json`: the report's dataclasses as JSON and back, and the JSON Schema they imply.

One walk over the type hints does all three, so the writer, the loader and
`docs/report.schema.json` cannot drift apart. Loading checks every type and names the first
field that is wrong (`gates[3].duration_s: expected a number or null`).
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from functools import cache
from typing import Any, Union

from cockpit import before_workloads
from cockpit.errors import CockpitError
from cockpit.json_fields import JsonObject
from cockpit.report.model import READS, SCHEMA_VERSION, Report


class ReportFormatError(CockpitError):
    """A report.json that is not one this version reads."""


def to_json(value: Any) -> Any:
    """Dataclasses to dicts (field order kept, `RENDERED_ONLY` fields left out), tuples to lists;
    other values as they are."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_json(getattr(value, f.name)) for f in dataclasses.fields(value) if _in_json(f)}
    if isinstance(value, tuple):
        return [to_json(v) for v in value]
    return value


def dumps(report: Report) -> str:
    return json.dumps(to_json(report), ensure_ascii=False, indent=1, allow_nan=False) + "\n"


def loads(text: str) -> Report:
    """A Report from report.json; ReportFormatError (one line) when it is not one."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReportFormatError(f"line {exc.lineno}: not JSON ({exc.msg})") from exc
    if not isinstance(data, dict) or data.get("schema_version") not in READS:
        found = data.get("schema_version") if isinstance(data, dict) else None
        raise ReportFormatError(f"schema_version is {found!r}, this cockpit reads "
                                f"{' and '.join(map(str, READS))}; export the session again")
    if data["schema_version"] < 5 and isinstance(data.get("outcome"), dict):
        data["outcome"] = before_workloads.report_outcome(data["outcome"], data["schema_version"])
    result: Report = from_json(Report, data, "")
    return result


def normalized(report: Report) -> Report:
    """The report with every number as its field declares it (0 → 0.0 in a float field), so
    that writing, reading and writing again gives the same bytes; its rendered-only sentences kept."""
    result: Report = from_json(Report, to_json(report), "")
    return dataclasses.replace(result, **{f.name: getattr(report, f.name)
                                          for f in dataclasses.fields(Report) if not _in_json(f)})


def from_json(kind: Any, data: Any, where: str) -> Any:
    """`data` read as `kind` (a dataclass, tuple, union, or plain type). A field with a default
    may be absent (a file from an earlier schema version): it takes the default."""
    origin = typing.get_origin(kind)
    if kind is type(None):
        if data is not None:
            raise _wrong(where, "null", data)
        return None
    if origin in (Union, types.UnionType):
        return _from_union(kind, data, where)
    if origin is tuple:
        return _from_tuple(kind, data, where)
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        return _from_dataclass(kind, data, where)
    return _from_plain(kind, data, where)


def _from_union(kind: Any, data: Any, where: str) -> Any:
    """None where the union allows it, else the value read as the union's first other type."""
    options = typing.get_args(kind)
    if data is None and type(None) in options:
        return None
    option = next(o for o in options if o is not type(None))
    return from_json(option, data, where)


def _from_tuple(kind: Any, data: Any, where: str) -> tuple[Any, ...]:
    if not isinstance(data, list):
        raise _wrong(where, "a list", data)
    args = typing.get_args(kind)
    if len(args) == 2 and args[1] is Ellipsis:
        if args[0] in _PLAIN:  # telemetry columns: thousands of numbers, checked in one pass
            return _plain_items(args[0], data, where)
        return tuple(from_json(args[0], v, f"{where}[{i}]") for i, v in enumerate(data))
    if len(args) != len(data):
        raise _wrong(where, f"a list of {len(args)}", data)
    return tuple(from_json(a, v, f"{where}[{i}]") for i, (a, v) in enumerate(zip(args, data, strict=True)))


def _from_dataclass(kind: type, data: Any, where: str) -> Any:
    if not isinstance(data, dict):
        raise _wrong(where, "an object", data)
    hints = _hints(kind)
    missing = [name for name in hints if name not in data and name not in _defaulted(kind)]
    extra = [name for name in data if name not in hints]
    if missing or extra:
        what = f"missing {missing[0]!r}" if missing else f"unknown field {extra[0]!r}"
        raise ReportFormatError(f"{where or 'report'}: {what}")
    return kind(**{name: from_json(hint, data[name], f"{where}.{name}".lstrip("."))
                   for name, hint in hints.items() if name in data})  # absent: its default


def _from_plain(kind: Any, data: Any, where: str) -> Any:
    if kind is float:
        if isinstance(data, bool) or not isinstance(data, (int, float)):
            raise _wrong(where, "a number", data)
        return float(data)
    if kind in (int, str, bool):
        if not isinstance(data, kind) or (kind is int and isinstance(data, bool)):
            raise _wrong(where, _NAMES[kind], data)
        return data
    raise ReportFormatError(f"{where}: no reader for {kind!r}")


_NAMES = {int: "a whole number", str: "text", bool: "true or false", float: "a number"}
_PLAIN = (float, str, float | None)


def _plain_items(kind: Any, data: list[Any], where: str) -> tuple[Any, ...]:
    if kind is str:
        bad = next((i for i, v in enumerate(data) if not isinstance(v, str)), None)
        if bad is not None:
            raise _wrong(f"{where}[{bad}]", "text", data[bad])
        return tuple(data)
    optional = kind is not float
    out: list[float | None] = []
    for i, v in enumerate(data):
        if v is None and optional:
            out.append(None)
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            out.append(float(v))
        else:
            raise _wrong(f"{where}[{i}]", "a number or null" if optional else "a number", v)
    return tuple(out)


def _wrong(where: str, expected: str, data: Any) -> ReportFormatError:
    shown = json.dumps(data)[:40]
    return ReportFormatError(f"{where or 'report'}: expected {expected}, found {shown}")


@cache
def _defaulted(kind: Any) -> frozenset[str]:
    """The fields of a dataclass that have a default: a file may leave them out."""
    return frozenset(f.name for f in dataclasses.fields(kind)
                     if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING)


@cache
def _hints(kind: type) -> dict[str, Any]:
    """The fields report.json holds, with their types: every field but the `RENDERED_ONLY` ones."""
    shown = {f.name for f in dataclasses.fields(kind) if _in_json(f)}
    return {name: hint for name, hint in typing.get_type_hints(kind).items() if name in shown}


def _in_json(f: dataclasses.Field[Any]) -> bool:
    """False for a field marked `model.RENDERED_ONLY`."""
    return bool(f.metadata.get("report_json", True))


def schema() -> JsonObject:
    """The JSON Schema (draft 2020-12) of report.json, from the same type hints."""
    defs: dict[str, JsonObject] = {}
    root = _schema_of(Report, defs)
    defs.pop(Report.__name__)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "cockpit end-of-session report", **root, "$defs": defs}


def _schema_of(kind: Any, defs: dict[str, JsonObject]) -> JsonObject:
    origin = typing.get_origin(kind)
    if kind is type(None):
        return {"type": "null"}
    if origin in (Union, types.UnionType):
        return {"anyOf": [_schema_of(a, defs) for a in typing.get_args(kind)]}
    if origin is tuple:
        args = typing.get_args(kind)
        if len(args) == 2 and args[1] is Ellipsis:
            return {"type": "array", "items": _schema_of(args[0], defs)}
        return {"type": "array", "prefixItems": [_schema_of(a, defs) for a in args],
                "minItems": len(args), "maxItems": len(args)}
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        name = kind.__name__
        if name not in defs:
            defs[name] = {}  # a placeholder first: the walk may come back to this class
            hints = _hints(kind)
            properties = {n: _schema_of(h, defs) for n, h in hints.items()}
            if kind is Report:
                properties["schema_version"] = {"const": SCHEMA_VERSION}
            defs[name] = {"type": "object", "properties": properties, "required": list(hints),
                          "additionalProperties": False}
        return defs[name] if kind is Report else {"$ref": f"#/$defs/{name}"}
    return {"type": {float: "number", int: "integer", str: "string", bool: "boolean"}[kind]}
