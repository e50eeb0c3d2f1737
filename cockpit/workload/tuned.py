"""The tuned file: the knob values `cockpit tune` kept for a workload, per GPU architecture and per
group of shapes (the workload's `keep_per` keys), and how the gates hand them to the kernel.

    workloads/softmax/softmax.py  ->  workloads/softmax/softmax.tuned.json   (committed with the kernel)

    {"schema": 1, "workload": "row-softmax", "keep_per": ["N"],
     "winners": [{"arch": "sm_90", "group": {"N": 4096}, "knobs": {"ROWS": 2, "num_warps": 8},
                  "run": "tune-20261124-001500", "note": "1.31x [1.28, 1.34] vs the values before"}]}

A winner applies only on its architecture (a tile that is best on an H100 says nothing about an
L4) and only to shapes of its group; every other shape runs the knobs' declared values. A `kwarg`
knob reaches the candidate as a keyword argument per shape; a `define` knob is a `-D` flag of the
build, its macro formatted with the group (`COCKPIT_ATTN_D{D}_BM` -> `COCKPIT_ATTN_D64_BM`).

Plain Python with no torch and nothing else of the cockpit: the probes read it in the user's Python.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from cockpit.files import read_file

SCHEMA = 1
SUFFIX = ".tuned.json"
MAX_TUNED_BYTES = 16 << 20
"""The biggest tuned file read: a winner per architecture and group is a few hundred bytes."""

Scalar = int | float | str | bool | None
"""A JSON scalar: an axis's value in a shape, a knob's value (None: a define left to the source)."""
GroupKey = dict[str, Scalar]
"""A group of shapes by its keep_per axes' values: {"N": 4096}, {} for "all"."""
KnobValues = dict[str, Scalar]
"""Knob name -> value: {"ROWS": 4, "num_warps": 8}."""


class WinnerJson(TypedDict):
    """A winner as the tuned file stores it."""

    arch: str
    group: GroupKey
    knobs: KnobValues
    run: str
    note: str


class TunedFileError(ValueError):
    """A tuned file that cannot be read; the message is one line naming the file and what to do."""


@dataclass(frozen=True)
class KnobDecl:
    """What the tuned file needs of a knob: the manifest's and the spec's knobs both give it."""

    name: str
    via: str
    macro: str
    start: Any
    """The untuned value; None for a define knob left to the source's own default."""


@dataclass(frozen=True)
class Winner:
    arch: str
    group: GroupKey
    knobs: KnobValues
    run: str = ""
    note: str = ""

    def as_json(self) -> WinnerJson:
        return {"arch": self.arch, "group": self.group, "knobs": self.knobs, "run": self.run,
                "note": self.note}


@dataclass(frozen=True)
class Tuned:
    """A workload's winners, ready to answer "which knob values for this shape on this GPU"."""

    knobs: tuple[KnobDecl, ...]
    keep_per: tuple[str, ...]
    arch: str
    winners: tuple[Winner, ...] = field(default=())

    def winner_for(self, shape: Mapping[str, Any]) -> Winner | None:
        key = group_of(shape, self.keep_per)
        return next((w for w in self.winners if w.arch == self.arch and w.group == key), None)

    def kwargs(self, shape: Mapping[str, Any]) -> KnobValues:
        """The keyword arguments of a candidate's call on this shape."""
        won = self.winner_for(shape)
        values: KnobValues = {k.name: k.start for k in self.knobs if k.via == "kwarg"}
        if won is not None:
            values.update({k: v for k, v in won.knobs.items() if k in values})
        return values

    def defines(self, leave_out: Mapping[str, Any] | None = None) -> list[str]:
        """The `-D` flags every winner of this architecture adds to the build (a group left out:
        the tuner builds that group's configuration itself)."""
        flags: list[str] = []
        for won in self.winners:
            if won.arch != self.arch or (leave_out is not None and won.group == dict(leave_out)):
                continue
            flags += define_flags(self.knobs, won.knobs, won.group)
        return flags


def define_flags(knobs: Sequence[KnobDecl], values: Mapping[str, Any], group: Mapping[str, Any]) -> list[str]:
    """`-DMACRO=value` for each define knob with a value (None: the source's default stands)."""
    flags = []
    for k in knobs:
        value = values.get(k.name, k.start)
        if k.via != "define" or value is None:
            continue
        macro = k.macro.format(**group) if "{" in k.macro else k.macro
        flags.append(f"-D{macro}={int(value) if isinstance(value, bool) else value}")
    return flags


def group_of(shape: Mapping[str, Any], keep_per: Sequence[str]) -> GroupKey:
    return {key: shape[key] for key in keep_per if key in shape}


def group_label(group: Mapping[str, Any]) -> str:
    """"N=4096", "D=64 dtype=fp16", or "all" when winners are not kept per any key."""
    return " ".join(f"{k}={v}" for k, v in group.items()) or "all"


def tuned_path(workspace: Path, source: str) -> Path | None:
    """Beside the workload module (`x.py` -> `x.tuned.json`); a dotted module's in `tuned/`; a GPU
    MODE folder has no knobs, so none."""
    if source.startswith("gpumode:"):
        return None
    if source.endswith(".py") or "/" in source:
        return workspace / (source.removesuffix(".py") + SUFFIX)
    return workspace / "tuned" / (source + SUFFIX)


def read_winners(path: Path | None) -> tuple[Winner, ...]:
    """The winners in `path`; none when it does not exist. A damaged file is an error, never
    silently the untuned values: a verdict measured with other knobs than it says is a wrong one."""
    if path is None:
        return ()
    try:
        text = read_file(path, MAX_TUNED_BYTES, "a tuned file may be")  # a FIFO in its place: one line
    except FileNotFoundError:
        return ()
    except OSError as exc:
        raise TunedFileError(f"{path}: cannot be read ({exc.strerror or exc})") from exc
    try:
        data = json.loads(text)
        if not isinstance(data, dict) or data.get("schema") != SCHEMA:
            raise ValueError(f"schema {data.get('schema') if isinstance(data, dict) else None!r}, "
                             f"expected {SCHEMA}")
        return tuple(Winner(str(w["arch"]), dict(w["group"]), dict(w["knobs"]), str(w.get("run", "")),
                            str(w.get("note", ""))) for w in data["winners"])
    except (ValueError, KeyError, TypeError) as exc:
        raise TunedFileError(f"{path}: not a tuned file ({exc}); restore it from git (git checkout -- "
                             f"{path.name}) or delete it to run the declared values") from exc


def merged(old: Iterable[Winner], new: Iterable[Winner]) -> tuple[Winner, ...]:
    """`old` with each of `new` replacing the winner of its architecture and group."""
    fresh = list(new)
    kept = [w for w in old if not any(w.arch == n.arch and w.group == n.group for n in fresh)]
    return tuple(sorted([*kept, *fresh], key=lambda w: (w.arch, json.dumps(w.group, sort_keys=True))))


def write_winners(path: Path, workload: str, keep_per: Sequence[str], winners: Iterable[Winner]) -> Path:
    """Written whole under a temporary name and renamed into place: never half a file."""
    data = {"schema": SCHEMA, "workload": workload, "keep_per": list(keep_per),
            "winners": [w.as_json() for w in winners]}
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(json.dumps(data, indent=1) + "\n")
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)
    return path


def sm_arch(text: str) -> str:
    """"9.0", "90", "sm_90", "9.0+PTX" -> "sm_90"."""
    digits = text.strip().removeprefix("sm_").removesuffix("+PTX").replace(".", "")
    return f"sm_{digits}"
