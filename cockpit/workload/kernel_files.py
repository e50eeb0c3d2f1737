"""What a kept change is made of: the files keep commits and revert restores for a workload.

The folders of the build's sources (a kernel is rarely one file: headers sit beside it), the folder
of the workload module (its tuned file sits beside it), or a GPU MODE problem folder; a file at
the workspace's top level is named alone, so the whole workspace is never committed by accident.
Workspace-relative, folders end in "/".
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import PurePosixPath

from cockpit.config.workload import WorkloadConfig
from cockpit.workload.manifest import Manifest


def kernel_paths(config: WorkloadConfig, manifest: Manifest | None) -> list[str]:
    named: list[str] = []
    if config.gpumode:
        named.append(config.gpumode.rstrip("/") + "/")
    elif config.module.endswith(".py") or "/" in config.module:
        named.append(config.module)
    if manifest is not None:
        named += list(manifest.build.sources)
    return _folders(named) or ["csrc/"]


def _folders(paths: Iterable[str]) -> list[str]:
    out: list[str] = []
    for p in paths:
        if p.endswith("/"):
            item = p
        else:
            parent = PurePosixPath(p).parent
            item = p if str(parent) in ("", ".") else f"{parent}/"
        if item not in out:
            out.append(item)
    return out
