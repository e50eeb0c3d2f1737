"""A tuner's variant of an Extension in seconds: the .cu sources recompiled with the knobs' -D flags
and linked with the other objects of one build kept for the tune (`Extension(variant_build="relink")`).

torch's cpp_extension passes a workload's extra nvcc flags to nvcc alone, so the binding's objects
(torch's headers: ~40 s) are the same for every variant; only its module name would differ, and a
relinked variant keeps the base's (`Extension.module_name`). So: the base is built once, by the
build gate's own ninja build, into `build/tune/<name>_base/`; a variant's folder gets a copy of its
build.ninja with the variant's -D flags in nvcc's flags, its objects and ninja's logs (their times
kept), and ninja rebuilds what the new command line touches: the .cu objects and the link.

Standard library only: it runs in the gates' child Python.
"""

from __future__ import annotations

import fcntl
import re
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO

NVCC_LINES = ("cuda_cflags", "cuda_post_cflags")
KEPT = (".ninja_log", ".ninja_deps")


def base_dir(workspace: Path, name: str) -> Path:
    return workspace / "build" / "tune" / f"{name}_base"


def locked(folder: Path) -> IO[str]:
    """A build folder's lock, held until the returned file is closed (`with locked(f):`): the base
    while it is built or copied, a variant while it is prepared and built, so the workers of several
    GPUs never build in one folder at once."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    lock = (folder.parent / f"{folder.name}.lock").open("w")
    fcntl.flock(lock, fcntl.LOCK_EX)
    return lock


def ensure_base(workspace: Path, name: str, build: Callable[[Path], int]) -> int:
    """The base build, made (or found up to date: a ninja no-op) under the lock."""
    folder = base_dir(workspace, name)
    with locked(folder):
        return build(folder)


def with_defines(ninja: str, defines: Sequence[str]) -> str:
    """build.ninja with nvcc's flags holding `defines` (the same macros' earlier values dropped)."""
    macros = {d.partition("=")[0] for d in defines}

    def patch(match: re.Match[str]) -> str:
        key, flags = match.group(1), match.group(2).split()
        kept = [f for f in flags if f.partition("=")[0] not in macros]
        if key == "cuda_post_cflags":
            kept += list(defines)
        return f"{key} = {' '.join(kept)}"

    if not re.search(r"^cuda_post_cflags =", ninja, re.MULTILINE):
        raise ValueError("build.ninja has no cuda_post_cflags line: not torch's cpp_extension build")
    return re.sub(rf"^({'|'.join(NVCC_LINES)}) = ?(.*)$", patch, ninja, flags=re.MULTILINE)


def prepare(base: Path, folder: Path, defines: Sequence[str]) -> None:
    """The variant's folder: the base's build.ninja with `defines`, its objects and ninja's logs."""
    folder.mkdir(parents=True, exist_ok=True)
    with locked(base):
        ninja = (base / "build.ninja").read_text(encoding="utf-8")
        (folder / "build.ninja").write_text(with_defines(ninja, defines), encoding="utf-8")
        for item in base.iterdir():
            if item.is_file() and (item.suffix == ".o" or item.name in KEPT):
                shutil.copy2(item, folder / item.name)  # times kept: ninja trusts what it need not redo
