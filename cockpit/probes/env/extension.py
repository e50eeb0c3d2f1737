"""The extension check: the workload's built .so imports against this torch; an undefined symbol
is named (demangled) as the ABI mismatch it is."""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING or (__package__ or "").startswith("cockpit."):  # imported as cockpit's; mypy reads this
    from ..ask_workload import describe_in_child
else:  # run by path (package `env`): the probes folder is sys.path[0]
    from ask_workload import describe_in_child
from .probe import (
    MachineCheck,
    Probe,
    TorchUnavailable,
    find_files,
    format_age,
    one_line,
    run_command,
    shell_quote,
)


def workload_extension(describe: list[str]) -> tuple[str, str]:
    """(the workload's extension module name or "", why it could not be told or "")."""
    try:
        build = describe_in_child(describe).get("build") or {}
    except (ValueError, OSError, subprocess.SubprocessError) as exc:
        return "", f"the workload could not be described ({one_line(exc, 200)})"
    return (str(build.get("name") or "") if build.get("kind") == "extension" else ""), ""


def check_extension(p: Probe) -> MachineCheck:
    name = p.extension
    if not name and p.extension_note:
        return MachineCheck("extension", "warn", f"not checked: {p.extension_note}",
                            "the workload's extension, if it builds one", "cockpit workload show  # says why")
    if not name:
        return MachineCheck("extension", "pass", "none to check (the workload builds none, or none is named)",
                            "the workload's extension, if it builds one", "")
    build = p.shown(p.build_dir)
    expected = f"{name}*.so in {build} that imports"
    build_fix = "cockpit gate build  # run the build gate"
    if not p.build_dir.is_dir():
        return MachineCheck("extension", "warn", f"not built yet ({build} does not exist)", expected,
                            build_fix)
    libraries = find_files(p.build_dir, lambda f: f.startswith(name) and f.endswith(".so"))
    if not libraries:
        return MachineCheck("extension", "warn", f"not built yet (no {name}*.so in {build})", expected,
                            build_fix)
    library = max(libraries, key=lambda path: path.stat().st_mtime)
    so = p.shown(library)
    rebuild = f"rm -rf {shell_quote(str(p.build_dir))} && cockpit gate build  # rebuild against this torch"
    try:
        p.torch()  # its libraries (libc10, libtorch) must be loaded before the extension's
    except TorchUnavailable:
        return MachineCheck("extension", "fail", f"{so} found, but torch does not import", expected,
                            "fix the torch check first")
    age = format_age(time.time() - library.stat().st_mtime)
    try:
        _load_extension(library)
    except ImportError as exc:
        message = one_line(exc, 240)
        symbol = re.search(r"undefined symbol: (\S+)", str(exc))
        if symbol:
            return MachineCheck("extension", "fail",
                                f"{so}: ABI/version mismatch, undefined symbol {_demangle(symbol.group(1))}",
                                expected,
                                f"{rebuild}: the extension was built for another torch/CUDA")
        if "cannot open shared object file" in str(exc):
            return MachineCheck("extension", "fail", f"{so} does not load: {message}", expected,
                                "put the missing library's folder on LD_LIBRARY_PATH, or rebuild: " + rebuild)
        return MachineCheck("extension", "fail", f"{so} does not load: {message}", expected, rebuild)
    return MachineCheck("extension", "pass", f"{so} imports (built {age} ago)", expected)


def _load_extension(path: Path) -> None:
    import importlib.machinery
    import importlib.util

    # The module name must be the one PyInit_<name> was compiled with: the file name's first part.
    module = path.name.split(".")[0]
    loader = importlib.machinery.ExtensionFileLoader(module, str(path))
    spec = importlib.util.spec_from_file_location(module, path, loader=loader)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot make an import spec for {path}")
    spec.loader.exec_module(importlib.util.module_from_spec(spec))


def _demangle(symbol: str) -> str:
    try:
        rc, out = run_command(["c++filt", symbol], timeout_s=2.0)
    except (OSError, subprocess.TimeoutExpired):
        return symbol
    out = out.strip()
    return f"{out} ({symbol})" if rc == 0 and out and out != symbol else symbol
