"""Values read out of a result's JSON: journals may be old, hand-edited or torn, so each reader
takes what it is given and returns a value of the type asked for, or None (or empty): a field
of the wrong type is left out, never an error."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

JsonObject = Mapping[str, object]
"""A JSON object as read (values still to be checked) or as written (values JSON-ready)."""


def as_number(value: object) -> float | None:
    """`value` as a float when it is a finite number (not a bool), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def positive(value: object) -> float | None:
    found = as_number(value)
    return found if found is not None and found > 0 else None


def whole(value: object) -> int | None:
    """A count: an int, or a float with no fraction (JSON from elsewhere may write 3.0)."""
    found = as_number(value)
    return int(found) if found is not None and found == int(found) else None


def text(value: object) -> str | None:
    """A non-empty string, else None."""
    return value if isinstance(value, str) and value else None


def flag(value: object) -> bool:
    """True only when the JSON said true."""
    return value is True


def obj(value: object) -> JsonObject:
    """A JSON object with string keys, else empty."""
    if not isinstance(value, Mapping):
        return {}
    return {k: v for k, v in value.items() if isinstance(k, str)}


def objects(value: object) -> tuple[JsonObject, ...]:
    """The JSON objects of a list (anything else in it is skipped)."""
    return tuple(obj(v) for v in items(value) if isinstance(v, Mapping))


def strings(value: object) -> tuple[str, ...]:
    """The non-empty strings of a list, once each, in order."""
    return tuple(dict.fromkeys(v for v in items(value) if isinstance(v, str) and v))


def texts(value: object) -> tuple[str, ...]:
    """Every string of a list, in order (repeats kept: lines of a verdict)."""
    return tuple(v for v in items(value) if isinstance(v, str))


def numbers(value: object) -> Mapping[str, float]:
    """A JSON object of numbers: the entries that are finite numbers."""
    return {k: n for k, v in obj(value).items() if (n := as_number(v)) is not None}


def pair(value: object) -> tuple[float, float] | None:
    """`[low, high]`, both positive numbers."""
    ends = items(value)
    if len(ends) != 2:
        return None
    low, high = (positive(v) for v in ends)
    return (low, high) if low is not None and high is not None else None


def compact(document: Mapping[str, object]) -> dict[str, object]:
    """The document without the keys whose value is None (what a reader takes as absent)."""
    return {k: v for k, v in document.items() if v is not None}


def items(value: object) -> tuple[object, ...]:
    """The items of a JSON list; empty for anything else."""
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        return tuple(value)
    return ()
