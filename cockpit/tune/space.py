"""What a search of a workload's knobs walks, laid out before anything runs: its groups (one
winner is kept per value of the workload's `keep_per` keys, each searched on its own bench shapes
and checked on its own correctness shapes), each group's configurations the workload's rule
allows on the target GPU, and the configuration each starts from. Pure: manifest in, plan out.

A configuration is a tuple of knob values in the manifest's knob order (hashable, so the search
never measures one twice); `None` for a define knob means "no -D: the source's own default".
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cockpit.config import ConfigError
from cockpit.config.tune import TuneConfig
from cockpit.errors import CockpitError
from cockpit.workload.manifest import GridShape, Manifest
from cockpit.workload.probe_wire import ShapeJson, VariantJson
from cockpit.workload.tuned import GroupKey, KnobDecl, KnobValues, Winner, define_flags, group_label

KnobSetting = tuple[Any, ...]
"""One setting of the knobs: their values in the manifest's knob order (a cockpit.toml is a Config)."""


def decls(manifest: Manifest) -> tuple[KnobDecl, ...]:
    return tuple(KnobDecl(k.name, k.via, k.macro, k.start) for k in manifest.knobs)


def as_dict(knobs: Sequence[KnobDecl], config: KnobSetting) -> KnobValues:
    return {k.name: v for k, v in zip(knobs, config, strict=True)}


def from_dict(knobs: Sequence[KnobDecl], values: Mapping[str, Any]) -> KnobSetting:
    return tuple(values.get(k.name, k.start) for k in knobs)


def label(knobs: Sequence[KnobDecl], config: KnobSetting) -> str:
    """ "ROWS_PER_BLOCK=4 VEC=8 num_warps=4" (a define left to the source: `NAME=src`)."""
    return " ".join(f"{k.name}={'src' if v is None else v}" for k, v in zip(knobs, config, strict=True))


def has_defines(knobs: Sequence[KnobDecl]) -> bool:
    return any(k.via == "define" for k in knobs)


def variant_key(flags: Sequence[str]) -> str:
    """A short name for a build with these -D flags (its module name and build folder)."""
    return hashlib.sha256("\0".join(flags).encode()).hexdigest()[:10]


@dataclass(frozen=True)
class Variant:
    """A build of the define knobs: its -D flags and the short key that names it."""

    key: str
    flags: tuple[str, ...]

    def to_json(self) -> VariantJson:
        return {"key": self.key, "flags": list(self.flags)}


ShapeSize = tuple[float | None, float | None, str | None]
"""(bytes, FLOPs, dtype) of one call on one shape."""


@dataclass(frozen=True)
class Group:
    key: GroupKey
    bench: tuple[ShapeJson, ...]
    """The bench shapes of this group: what a configuration is timed on."""
    checks: tuple[ShapeJson, ...]
    """Its correctness shapes: the test grid's of this group and its bench shapes' ends."""
    sizes: tuple[ShapeSize, ...] = ()
    """Per bench shape: the bytes and FLOPs one call needs at the least, and its dtype (the workload's
    counts), so a time no card can reach stops the trial (analysis/speed_of_light.py)."""

    @property
    def label(self) -> str:
        return group_label(self.key)


def groups(manifest: Manifest) -> list[Group]:
    """One group per value of the keep_per keys among the tune shapes (the workload's tune grid,
    else its bench grid), in their order."""
    keys: list[GroupKey] = []
    for s in manifest.tune_shapes:
        key = {k: s.shape[k] for k in manifest.keep_per if k in s.shape}
        if key not in keys:
            keys.append(key)
    return [_group(manifest, key) for key in keys]


def _group(manifest: Manifest, key: GroupKey) -> Group:
    """The group of one keep_per value: its tune shapes, the correctness shapes it is checked on
    (with its smallest and largest tune shapes among them) and each tune shape's size and dtype."""

    def mine(s: GridShape) -> bool:
        return all(s.shape.get(k) == v for k, v in key.items())

    bench = [s for s in manifest.tune_shapes if mine(s)]
    checks = _with_extremes([s for s in manifest.correctness_grid() if mine(s)], bench)
    return Group(key, tuple(dict(s.shape) for s in bench), tuple(dict(s.shape) for s in checks),
                 _sizes(bench, manifest.dtype_key))


def _with_extremes(checks: list[GridShape], bench: list[GridShape]) -> list[GridShape]:
    """The correctness shapes, with the smallest and the largest tune shape added where missing:
    a knob value must be correct at both ends of what it is tuned on."""
    by_size = sorted(bench, key=lambda s: (s.bytes or 0, s.flops or 0))
    for s in (by_size[0], by_size[-1]):
        if s.name not in {c.name for c in checks}:
            checks.append(s)
    return checks


def _sizes(bench: list[GridShape], dtype: str | None) -> tuple[ShapeSize, ...]:
    """Each tune shape's bytes, FLOPs and dtype (when the workload names its dtype key)."""
    return tuple((s.bytes, s.flops, str(s.shape[dtype]) if dtype and dtype in s.shape else None)
                 for s in bench)


def picked(found: Sequence[Group], wanted: Sequence[str] | None) -> list[Group]:
    """The groups `--group KEY=VALUE` names (all without it); one line when one names no group."""
    if not wanted:
        return list(found)
    out = []
    for text in wanted:
        key, _, value = text.partition("=")
        these = [g for g in found if str(g.key.get(key.strip(), object())) == value.strip()]
        if not these:
            raise CockpitError(f"--group {text}: no group of shapes has it (the groups: "
                               f"{', '.join(g.label for g in found)})")
        out += [g for g in these if g not in out]
    return [g for g in found if g in out]


def searchable(manifest: Manifest) -> None:
    """What the generic search needs of a workload, each lack said in one line."""
    where = manifest.source
    if not manifest.knobs and manifest.source.startswith("gpumode:"):
        raise CockpitError(
            f"{where}: a GPU MODE problem folder declares no knobs: nothing to tune (write "
            "a workload module with knobs=(Knob(...),) around its submission to tune it)"
        )
    if not manifest.knobs:
        raise CockpitError(
            f"{where}: {manifest.name} declares no knobs to tune: add knobs=(Knob(...),) "
            'to its Workload (docs/workloads.md, "Knobs")'
        )
    if manifest.baseline is None:
        raise CockpitError(
            f"{where}: {manifest.name} has no timed reference to tune against: add "
            "Reference(..., baseline=True)"
        )
    if not manifest.tune_shapes:
        raise CockpitError(f"{where}: {manifest.name} has no bench grid or tune_grid: nothing to time")
    missing = [k for k in manifest.keep_per if not all(k in s.shape for s in manifest.tune_shapes)]
    if missing:
        raise CockpitError(f"{where}: keep_per names {missing[0]!r}, which not every tune shape has")
    ks = decls(manifest)
    if has_defines(ks) and manifest.build.kind != "extension":
        raise CockpitError(
            f"{where}: define knobs are compiled into an Extension build; {manifest.name} is "
            f'built as {manifest.build.kind}: pass them as kwargs (via="kwarg") instead'
        )
    several = len(groups(manifest)) > 1
    for k in ks:
        if k.via == "define" and several and not any(f"{{{key}}}" in k.macro for key in manifest.keep_per):
            raise CockpitError(
                f"{where}: knob {k.name} is a define kept per {', '.join(manifest.keep_per)}, but its macro "
                f"{k.macro!r} is the same for every group: name it per group, e.g. "
                f'macro="{k.macro}_{{{manifest.keep_per[0]}}}", or keep_per=()'
            )


def options(manifest: Manifest, tune: TuneConfig) -> dict[str, tuple[Any, ...]]:
    """Each knob's values: the workload's, or `[tune.space]`'s narrowing of them (errors name
    `cockpit.toml:LINE`)."""
    declared = {k.name: tuple(k.values) for k in manifest.knobs}
    for name, values in tune.space.items():
        if name not in declared:
            raise ConfigError(
                f"{tune.line(f'space.{name}')}: tune.space.{name}: {manifest.name} has no knob "
                f"{name!r} (its knobs: {', '.join(declared)})"
            )
        wrong = [v for v in values if v not in declared[name]]
        if wrong:
            raise ConfigError(
                f"{tune.line(f'space.{name}')}: tune.space.{name}: {wrong[0]!r} is not one of "
                f"the workload's values {list(declared[name])}"
            )
    return {name: tuple(tune.space.get(name, values)) for name, values in declared.items()}


def narrowed(
    feasible: Sequence[KnobSetting], knobs: Sequence[KnobDecl], values: Mapping[str, Sequence[Any]]
) -> list[KnobSetting]:
    return [c for c in feasible if all(v in values[k.name] for k, v in zip(knobs, c, strict=True))]


def current(knobs: Sequence[KnobDecl], group: Group, winners: Sequence[Winner], arch: str,
            untuned: Mapping[str, Any] | None = None) -> KnobSetting:
    """What the group runs now on `arch`: its kept winner's values, else the workload's values for the
    group untuned (`knob_defaults`), else each knob's declared one."""
    won = next((w for w in winners if w.arch == arch and w.group == group.key), None)
    return from_dict(knobs, {**(untuned or {}), **(won.knobs if won is not None else {})})


def untuned(manifest: Manifest, group: Group) -> KnobValues:
    """The knob values the workload says the group runs untuned ({} when it says nothing)."""
    return next((dict(k) for g, k in manifest.knob_defaults if dict(g) == group.key), {})


def elsewhere(knobs: Sequence[KnobDecl], group: Group, winners: Sequence[Winner],
              arch: str) -> list[KnobSetting]:
    """The group's winners kept on other architectures: where a search on this one looks first."""
    return [from_dict(knobs, w.knobs) for w in winners if w.arch != arch and w.group == group.key]


def with_current(options: Mapping[str, Sequence[Any]], knobs: Sequence[KnobDecl],
                 config: KnobSetting) -> dict[str, list[Any]]:
    """Each knob's values, with `config`'s added where they lack it (a kept winner or a declared
    default outside `[tune.space]`'s narrowing): what the sampler and the seed may pick from."""
    out = {}
    for k, value in zip(knobs, config, strict=True):
        values = list(options[k.name])
        out[k.name] = values if value in values else [*values, value]
    return out


def variant(
    knobs: Sequence[KnobDecl], config: KnobSetting, group: Group, others: Sequence[str]
) -> Variant | None:
    """The build this configuration needs: the other groups' kept defines and its own; None when
    it has no define knob (nothing to compile)."""
    if not has_defines(knobs):
        return None
    flags = [*others, *define_flags(knobs, as_dict(knobs, config), group.key)]
    return Variant(variant_key(flags), tuple(flags))
