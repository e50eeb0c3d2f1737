"""Kernel and symbol names as an engineer reads them: demangled once per build (`c++filt` or
CUDA's `cu++filt` when installed, else the built-in reader), and shortened for a table row."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

from cockpit.hardware.itanium import itanium_demangle

# CUDA's 16-bit float types by the names kernels engineers say.
_SHORT_TYPES = {"__half": "half", "__nv_bfloat16": "bf16", "__nv_fp8_e4m3": "fp8_e4m3",
                "__nv_fp8_e5m2": "fp8_e5m2"}


def _demangler() -> str | None:
    cuda_bin = Path(os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or "/usr/local/cuda") / "bin"
    return shutil.which("c++filt") or shutil.which("cu++filt") or shutil.which("cu++filt", path=str(cuda_bin))


def demangle_all(symbols: Iterable[str]) -> dict[str, str]:
    """Every symbol -> its C++ name (one demangler run for all); a symbol that is not mangled,
    or that nothing can read, maps to itself."""
    out = {s: s for s in symbols}
    mangled = sorted(s for s in out if s.startswith("_Z"))
    if not mangled:
        return out
    tool = _demangler()
    if tool is not None:
        out.update(_tool_names(tool, mangled))
    for s in mangled:
        if out[s] == s:
            out[s] = itanium_demangle(s) or s
    return out


def _tool_names(tool: str, mangled: list[str]) -> dict[str, str]:
    """The names c++filt (or cu++filt) gives the symbols it demangles; none when it fails, hangs
    or answers with another count of lines (the pure-Python demangler then reads them)."""
    try:
        run = subprocess.run([tool, *mangled], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return {}
    names = run.stdout.splitlines()
    if run.returncode != 0 or len(names) != len(mangled):
        return {}
    return {s: n for s, n in zip(mangled, names, strict=True) if n != s}


def demangle(symbol: str) -> str:
    """One symbol's C++ name, or the symbol itself."""
    return demangle_all([symbol])[symbol]


def opening(text: str, open_: str, close: str) -> int:
    """Index of the bracket that opens the one closing `text`; 0 when they do not balance."""
    depth = 0
    for i in range(len(text) - 1, -1, -1):
        if text[i] == close:
            depth += 1
        elif text[i] == open_:
            depth -= 1
            if depth == 0:
                return i
    return 0


def split_args(text: str) -> tuple[str, ...]:
    """`a, b<c, d>, e` -> (`a`, `b<c, d>`, `e`): commas inside brackets stay."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += (ch in "<([") - (ch in ">)]")
        if ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return tuple(p for p in parts if p)


def function_parts(name: str) -> tuple[str, tuple[str, ...]]:
    """A demangled function name -> (its unqualified name, its template arguments), without
    return type, namespaces or parameters: `attn_fwd_kernel`, (`__half`, `64`, ...)."""
    text = name.strip().removesuffix(" const")
    if text.endswith(")") and (cut := opening(text, "(", ")")):
        text = text[:cut]
    args: tuple[str, ...] = ()
    if text.endswith(">") and (cut := opening(text, "<", ">")):
        text, args = text[:cut], split_args(text[cut + 1:-1])
    base = text.rsplit("::", 1)[-1]
    return (base.split()[-1] if base.split() else text), args


def short_name(name: str) -> str:
    """A kernel as a table row shows it: `attn_fwd_kernel<bf16, 128, 128, 128, 8, 1, false>`."""
    base, args = function_parts(name)
    if not args:
        return base
    return f"{base}<{', '.join(_SHORT_TYPES.get(a, a) for a in args)}>"
