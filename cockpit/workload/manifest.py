"""What the cockpit knows of a workload without importing it: the manifest its child describes.

The gates' child Python imports the workload module (it may import torch at the top) and prints
this as JSON (`probes/workload_probe.py describe`); the cockpit reads it here, typed, with a
schema version. Every number a table shows per shape (FLOPs, bytes) was computed by the
workload's own functions in the child.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from cockpit.workload.knob_words import KnobWords, Words, checked_words
from cockpit.workload.probe_wire import CheckJson, GridShapeJson, ManifestJson

SCHEMA = 1

BUILD_KINDS = ("extension", "inline", "triton", "callable")


class ManifestError(ValueError):
    """A manifest that does not read: names the field."""


@dataclass(frozen=True)
class Build:
    kind: str
    """extension | inline | triton | callable"""
    name: str | None = None
    """The extension's module name (extension, inline)."""
    sources: tuple[str, ...] = ()
    """Workspace-relative sources of an extension."""
    include_dirs: tuple[str, ...] = ()
    cuda_flags: tuple[str, ...] = ()
    variant_build: str = "rebuild"
    """How a tune builds a configuration of the define knobs: "rebuild" or "relink" (spec.Extension)."""
    tuned_header: str | None = None
    """The C header a tune rewrites with the kept winners per arch (workspace-relative), if any."""


@dataclass(frozen=True)
class GridShape:
    name: str
    """As tables and results name it: "M=4096 N=1024 fp16"."""
    shape: Mapping[str, Any]
    flops: float | None = None
    bytes: float | None = None


@dataclass(frozen=True)
class ReferenceInfo:
    name: str
    oracle: bool
    baseline: bool
    optional: bool


@dataclass(frozen=True)
class KnobInfo:
    name: str
    values: tuple[Any, ...]
    via: str
    macro: str
    start: Any
    hints: Mapping[str, int] = field(default_factory=dict)
    """Profile finding -> the direction it asks of this knob (+1 larger, -1 smaller)."""
    words: Words | None = None
    """How a pull request reads a setting of it (spec.Knob.words); None: as written."""


@dataclass(frozen=True)
class ProfileInfo:
    kernel: str
    """The kernel-name regex ncu filters by; "" when the workload names none (a GPU MODE folder):
    every kernel of one call of the candidate is profiled."""
    shape: GridShape
    candidate: str


@dataclass(frozen=True)
class Manifest:
    schema: int
    name: str
    source: str
    """Where it was declared, as cockpit.toml names it: "workloads/softmax.py", a dotted module,
    or "gpumode:problems/…"."""
    build: Build
    candidates: tuple[str, ...]
    references: tuple[ReferenceInfo, ...]
    test_grid: tuple[GridShape, ...]
    bench_grid: tuple[GridShape, ...]
    check: Mapping[str, Any]
    """{"kind": "rel_l2"|"allclose"|"exact"|"custom", "tolerance": {dtype: x}, "atol": {...}}"""
    dtype_key: str | None
    writes_output: bool
    profile: ProfileInfo | None
    knobs: tuple[KnobInfo, ...]
    knob_combinations: int
    knob_allowed: int | None
    """Combinations the workload's rule lets through (without a GPU's limits); None: no rule."""
    keep_per: tuple[str, ...]
    correctness: tuple[str, ...] = ()
    """The shapes correctness checks, by name, in the workload's own order (`correctness_grid`)."""
    tune_grid: tuple[GridShape, ...] | None = None
    """What a tune times (None: the bench grid)."""
    knob_defaults: tuple[tuple[Mapping[str, Any], Mapping[str, Any]], ...] = ()
    """(group, knob values) the kernel runs untuned per keep_per group, when the workload says."""
    modes: tuple[str, ...] = ("forward",)
    """The passes the gates check and time (docs/workloads.md, Backward and full passes)."""
    grad_inputs: tuple[int, ...] = ()
    """The inputs named by index whose gradients the backward is checked on (besides those
    make_inputs makes with requires_grad=True)."""
    group_words: Mapping[str, str] = field(default_factory=dict)
    """keep_per key -> how a pull request reads its value (spec.Workload.group_words)."""

    @property
    def words(self) -> KnobWords | None:
        """The words its knobs and keep_per keys were given (a tune journals them with its decision);
        None when it gave none."""
        knobs = {k.name: k.words for k in self.knobs if k.words is not None}
        return KnobWords(knobs, self.group_words) or None

    @property
    def tune_shapes(self) -> tuple[GridShape, ...]:
        return self.tune_grid if self.tune_grid is not None else self.bench_grid

    @property
    def ours(self) -> str:
        return self.candidates[0]

    @property
    def baseline(self) -> ReferenceInfo | None:
        timed = [r for r in self.references if not r.oracle]
        return next((r for r in timed if r.baseline), timed[0] if timed else None)

    @property
    def oracle(self) -> ReferenceInfo | None:
        return next((r for r in self.references if r.oracle), None)

    @property
    def timed_references(self) -> tuple[ReferenceInfo, ...]:
        return tuple(r for r in self.references if not r.oracle)

    def correctness_grid(self) -> tuple[GridShape, ...]:
        """The test grid and the bench grid's smallest and largest shapes, as the workload's own
        `correctness_grid()` picked them in the child."""
        by_name = {s.name: s for s in (*self.bench_grid, *self.test_grid)}
        return tuple(by_name[n] for n in self.correctness if n in by_name)


def manifest_from_json(data: Any) -> Manifest:
    """Read a manifest back; ManifestError naming the field when it does not fit."""
    d = _mapping(data, "manifest")
    if d.get("schema") != SCHEMA:
        raise ManifestError(f"manifest schema {d.get('schema')!r}, this cockpit reads {SCHEMA}")
    build = _build(d.get("build"))
    candidates = _strings(d.get("candidates"), "candidates")
    if not candidates:
        raise ManifestError("candidates: the workload declares no candidate (its kernel)")
    refs = tuple(_reference(r) for r in _list(d.get("references"), "references"))
    return Manifest(
        schema=SCHEMA, name=str(d.get("name") or "workload"), source=str(d.get("source") or ""),
        build=build, candidates=candidates, references=refs,
        test_grid=_grid(d.get("test_grid"), "test_grid"), bench_grid=_grid(d.get("bench_grid"), "bench_grid"),
        check=_mapping(d.get("check"), "check"), dtype_key=d.get("dtype_key"),
        writes_output=bool(d.get("writes_output")),
        profile=_profile(d.get("profile"), candidates),
        knobs=tuple(_knob(k) for k in _list(d.get("knobs", []), "knobs")),
        knob_combinations=int(d.get("knob_combinations") or 0),
        knob_allowed=d.get("knob_allowed"),
        keep_per=_strings(d.get("keep_per", []), "keep_per"),
        correctness=_strings(d.get("correctness", []), "correctness"),
        tune_grid=_tune_grid(d.get("tune_grid")),
        knob_defaults=_knob_defaults(d.get("knob_defaults")),
        modes=_strings(d.get("modes") or ["forward"], "modes"),
        grad_inputs=_grad_inputs(d.get("grad_inputs")),
        group_words=_group_words(d.get("group_words")),
    )


def _build(data: Any) -> Build:
    """The manifest's build: its kind (one cockpit knows), sources, flags and how a variant builds."""
    b = _mapping(data, "build")
    kind = b.get("kind")
    if kind not in BUILD_KINDS:
        raise ManifestError(f"build.kind {kind!r} is not one of {', '.join(BUILD_KINDS)}")
    return Build(kind, b.get("name"), _strings(b.get("sources", []), "build.sources"),
                 _strings(b.get("include_dirs", []), "build.include_dirs"),
                 _strings(b.get("cuda_flags", []), "build.cuda_flags"),
                 "relink" if b.get("variant_build") == "relink" else "rebuild",
                 str(b["tuned_header"]) if isinstance(b.get("tuned_header"), str) else None)


def _reference(r: Any) -> ReferenceInfo:
    """One reference: the oracle correctness compares against, the baseline, or one optional to time."""
    return ReferenceInfo(str(r["name"]), bool(r.get("oracle")), bool(r.get("baseline")),
                         bool(r.get("optional")))


def _tune_grid(data: Any) -> tuple[GridShape, ...] | None:
    """The shapes the tuner times (None when the workload tunes on its bench grid)."""
    return _grid(data, "tune_grid") if data is not None else None


def _grad_inputs(data: Any) -> tuple[int, ...]:
    """The indices of the inputs whose gradients the backward modes check."""
    return tuple(int(i) for i in _list(data or [], "grad_inputs"))


def _profile(prof: Any, candidates: tuple[str, ...]) -> ProfileInfo | None:
    """What `cockpit profile` profiles (None when the workload declares no profile): the first
    candidate when it names none."""
    if not isinstance(prof, dict):
        return None
    return ProfileInfo(str(prof.get("kernel") or ""), _grid([prof.get("shape")], "profile.shape")[0],
                       str(prof.get("candidate") or candidates[0]))


def _knob(k: Any) -> KnobInfo:
    """One tuning knob: its values, how it reaches the kernel (a define by default) and its macro."""
    return KnobInfo(str(k["name"]), tuple(k["values"]), str(k.get("via", "define")),
                    str(k.get("macro") or k["name"]), k.get("start"), _hints(k.get("hints")),
                    _words(k.get("words"), f"knobs.{k['name']}.words"))


def _words(value: Any, where: str) -> Words | None:
    """A knob's words as its workload declared them (knob_words.checked_words says what reads)."""
    try:
        return checked_words(value)
    except ValueError as exc:
        raise ManifestError(f"{where}: {exc}") from exc


def _group_words(value: Any) -> dict[str, str]:
    """Each keep_per key's words (an older manifest has none)."""
    declared = _mapping(value or {}, "group_words")
    words = {str(key): _words(w, f"group_words.{key}") for key, w in declared.items()}
    if not all(isinstance(w, str) for w in words.values()):
        raise ManifestError("group_words: a keep_per key's words are a format string (\"rows of {}\")")
    return {key: w for key, w in words.items() if isinstance(w, str)}


def _knob_defaults(data: Any) -> tuple[tuple[dict[str, Any], dict[str, Any]], ...]:
    """Each group of shapes and the knob values it defaults to."""
    return tuple((dict(_mapping(g.get("group"), "knob_defaults.group")),
                  dict(_mapping(g.get("knobs"), "knob_defaults.knobs")))
                 for g in _list(data or [], "knob_defaults"))


def manifest_to_json(m: Manifest) -> ManifestJson:
    """The manifest as the child prints it (and `cockpit workload show --json`)."""
    def grid(g: tuple[GridShape, ...]) -> list[GridShapeJson]:
        return [{"name": s.name, "shape": dict(s.shape), "flops": s.flops, "bytes": s.bytes} for s in g]

    return {
        "schema": m.schema, "name": m.name, "source": m.source,
        "build": {"kind": m.build.kind, "name": m.build.name, "sources": list(m.build.sources),
                  "include_dirs": list(m.build.include_dirs), "cuda_flags": list(m.build.cuda_flags),
                  "variant_build": m.build.variant_build, "tuned_header": m.build.tuned_header},
        "candidates": list(m.candidates),
        "references": [{"name": r.name, "oracle": r.oracle, "baseline": r.baseline, "optional": r.optional}
                       for r in m.references],
        "test_grid": grid(m.test_grid), "bench_grid": grid(m.bench_grid),
        "check": cast(CheckJson, dict(m.check)),
        "dtype_key": m.dtype_key, "writes_output": m.writes_output,
        "profile": {"kernel": m.profile.kernel, "shape": grid((m.profile.shape,))[0],
                    "candidate": m.profile.candidate} if m.profile else None,
        "knobs": [{"name": k.name, "values": list(k.values), "via": k.via, "macro": k.macro, "start": k.start,
                   "hints": dict(k.hints), "words": k.words if k.words is None or isinstance(k.words, str)
                   else dict(k.words)} for k in m.knobs],
        "knob_combinations": m.knob_combinations, "knob_allowed": m.knob_allowed,
        "keep_per": list(m.keep_per), "correctness": list(m.correctness),
        "tune_grid": grid(m.tune_grid) if m.tune_grid is not None else None,
        "knob_defaults": [{"group": dict(g), "knobs": dict(k)} for g, k in m.knob_defaults],
        "modes": list(m.modes), "grad_inputs": list(m.grad_inputs), "group_words": dict(m.group_words),
    }


def _mapping(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ManifestError(f"{where}: expected an object, got {type(value).__name__}")
    return value


def _list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise ManifestError(f"{where}: expected a list, got {type(value).__name__}")
    return value


def _strings(value: Any, where: str) -> tuple[str, ...]:
    items = _list(value, where)
    if not all(isinstance(v, str) for v in items):
        raise ManifestError(f"{where}: expected a list of strings")
    return tuple(items)


def _grid(value: Any, where: str) -> tuple[GridShape, ...]:
    out = []
    for i, row in enumerate(_list(value, where)):
        r = _mapping(row, f"{where}[{i}]")
        shape = _mapping(r.get("shape"), f"{where}[{i}].shape")
        out.append(GridShape(str(r.get("name") or i), dict(shape), _num(r.get("flops")),
                             _num(r.get("bytes"))))
    return tuple(out)


def _hints(value: Any) -> dict[str, int]:
    return {str(f): int(v) for f, v in _mapping(value or {}, "knobs.hints").items()}


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
