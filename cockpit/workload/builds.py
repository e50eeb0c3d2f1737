"""How a workload's kernel is built: a torch extension from sources (ninja), `load_inline`, a Triton
JIT kernel, or nothing. Part of the workload contract (`cockpit.workload.spec` re-exports it): plain
Python with no torch import at the top, loaded in the gates' child Python.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal


def workspace_root() -> Path:
    """The workspace the gates run in: the child Python gets it in $COCKPIT_WORKSPACE."""
    return Path(os.environ.get("COCKPIT_WORKSPACE") or Path.cwd())


@dataclass(frozen=True)
class Extension:
    """A torch C++/CUDA extension built from sources with ninja (the build gate: live [N/M]
    progress, ptxas resources per kernel, the launch table when it exports `launch_info()`)."""

    name: str
    """The Python module name; the binding should use TORCH_EXTENSION_NAME."""
    sources: tuple[str, ...]
    """Paths relative to the workspace (.cu, .cpp)."""
    include_dirs: tuple[str, ...] = ()
    cuda_flags: tuple[str, ...] = ()
    """Added to the gate's own nvcc flags (-O3 -Xptxas=-v -lineinfo --use_fast_math -std=c++17)."""
    kind: Literal["extension"] = "extension"
    revision: str | None = None
    """A git revision of the workspace: the sources as committed there, built in a folder of their
    own under a module name of their own (`at`)."""
    variant: str | None = None
    """A tuner's configuration of the knobs (`with_flags`): its own build folder (and, rebuilt, its
    own module name)."""
    variant_build: Literal["rebuild", "relink"] = "rebuild"
    """How `cockpit tune` builds a configuration of the define knobs. "rebuild": the whole extension
    under a module name of its own (the binding's torch headers included: ~40 s a configuration).
    "relink": the .cu sources alone, recompiled with the knobs' -D flags and linked with the other
    objects of one build kept for the tune (a few seconds). -D flags reach only nvcc, so the result is
    the same kernel; opt in when the binding can be imported more than once under its one module name
    (a pybind11 binding of functions can; one that registers classes with py::class_ cannot)."""
    tuned_header: str | None = None
    """A workspace-relative C header `cockpit tune` rewrites with every winner it keeps, per GPU
    architecture (`COCKPIT_TUNED(X)`: X(sm, MACRO, value) per define), so a build outside the cockpit,
    or the kernel's own launch table, can know each arch's tuned values."""

    def at(self, revision: str) -> Extension:
        """This extension as it was at a git revision ("HEAD", "HEAD~1", a tag): an earlier version
        of your kernel, to time beside the current one (`Reference(..., build=KERNEL.at("HEAD"))`)."""
        if not re.fullmatch(r"[A-Za-z0-9._/~^@{}-]+", revision):
            raise ValueError(f"{revision!r} is not a git revision name")
        return replace(self, revision=revision)

    def with_flags(self, variant: str, flags: Sequence[str]) -> Extension:
        """This extension with more nvcc flags (a tuner's `-D` knob values), built and imported
        under a name of its own (`variant`: a short key of the flags)."""
        if not re.fullmatch(r"[A-Za-z0-9_]+", variant):
            raise ValueError(f"{variant!r}: a variant is letters, digits and _")
        return replace(self, cuda_flags=(*self.cuda_flags, *flags), variant=variant)

    @property
    def module_name(self) -> str:
        """The name it is built and imported under: `name`, `name_at_<revision>` or `name_v<variant>`
        (a relinked variant keeps `name`: its folder tells it apart)."""
        if self.variant is not None:
            return self.name if self.variant_build == "relink" else f"{self.name}_v{self.variant}"
        if self.revision is None:
            return self.name
        return f"{self.name}_at_{re.sub(r'[^A-Za-z0-9]+', '_', self.revision).strip('_')}"

    @property
    def import_name(self) -> str:
        """The name it is imported under: its module name, but a relinked variant's under a package
        of its own (`name_v<variant>.name`): Python keeps one module per name, so two variants
        imported as `name` would be one (measured: the second import returned the first module)."""
        if self.variant is not None and self.variant_build == "relink":
            return f"{self.name}_v{self.variant}.{self.name}"
        return self.module_name

    def build_dir(self, root: Path | None = None) -> Path:
        if self.variant is not None:
            return (root or workspace_root()) / "build" / "tune" / f"{self.name}_v{self.variant}"
        return (root or workspace_root()) / "build" / self.module_name

    def load(self) -> Any:
        """The built module (the build gate builds it; cached after the first call). While the
        tuner measures a configuration (`use_variant`), the workload's own extension loads that."""
        found = _FAST.get(self)
        if found is None:
            own = self.revision is None and self.variant is None
            target = _ACTIVE.get(self.name, self) if own else self
            so = target.build_dir() / f"{target.module_name}.so"
            found = _FAST[self] = _load_built(target.import_name, so)
        return found


@dataclass(frozen=True)
class Inline:
    """`torch.utils.cpp_extension.load_inline`: sources as strings in the workload module."""

    name: str
    cpp_sources: str
    cuda_sources: str
    functions: tuple[str, ...]
    cuda_flags: tuple[str, ...] = ()
    kind: Literal["inline"] = "inline"

    def build_dir(self, root: Path | None = None) -> Path:
        return (root or workspace_root()) / "build" / self.name

    def load(self) -> Any:
        """The module load_inline builds (into build/NAME, so a rebuild is a cache hit)."""
        from torch.utils.cpp_extension import load_inline

        key = ("inline", self.name)
        if key not in _LOADED:
            folder = self.build_dir()
            folder.mkdir(parents=True, exist_ok=True)
            _LOADED[key] = load_inline(
                name=self.name, cpp_sources=self.cpp_sources, cuda_sources=self.cuda_sources,
                functions=list(self.functions), build_directory=str(folder), verbose=True,
                extra_cuda_cflags=["-O3", "-Xptxas=-v", "-lineinfo", *self.cuda_flags])
        return _LOADED[key]


@dataclass(frozen=True)
class TritonJit:
    """A Triton kernel: compiled at its first call, so the build gate runs the smallest test shape."""

    kind: Literal["triton"] = "triton"


@dataclass(frozen=True)
class NoBuild:
    """A plain callable (torch ops, a vendor library): nothing to build."""

    kind: Literal["callable"] = "callable"


Build = Extension | Inline | TritonJit | NoBuild

_LOADED: dict[tuple[str, str], Any] = {}
_FAST: dict[Extension, Any] = {}
"""An extension's module once loaded: a candidate calls `KERNEL.load()` on every call, timed."""
_ACTIVE: dict[str, Extension] = {}


def use_variant(base: Extension, variant: Extension | None) -> None:
    """From now on `base.load()` (the workload's own extension, as its candidates call it) is
    `variant`'s module, built beforehand (None: `base`'s own again). The tuner's measuring child
    switches configurations with this; it costs two dict writes, so it may sit in a timed call."""
    _FAST.pop(base, None)
    if variant is None:
        _ACTIVE.pop(base.name, None)
    else:
        _ACTIVE[base.name] = variant
        _FAST[base] = variant.load()


def _load_built(name: str, so: Path) -> Any:
    import importlib.util

    key = (name, str(so))
    if key not in _LOADED:
        if not so.exists():
            raise FileNotFoundError(f"{so} is not built yet; run the build gate first (cockpit gate build)")
        spec = importlib.util.spec_from_file_location(name, so)
        if spec is None or spec.loader is None:
            raise ImportError(f"{so} is not a Python extension module")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _LOADED[key] = module
    return _LOADED[key]
