"""Numbers and times as the report shows them, shared by the Markdown and HTML templates."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from cockpit.gates.gate import said_status
from cockpit.report.model import Machine

RUN_ENV = "run the env gate (cockpit gate env)"


def utc(t: float | None) -> str:
    """2026-11-21 23:19 UTC."""
    if t is None:
        return "—"
    return datetime.fromtimestamp(t, tz=timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def duration(seconds: float | None) -> str:
    """18.5 s, 12 min, 1 h 05 min."""
    if seconds is None:
        return "—"
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes = round(seconds / 60)
    return f"{minutes} min" if minutes < 60 else f"{minutes // 60} h {minutes % 60:02d} min"


def offset(t: float, start: float) -> str:
    """Time into the session: +1:05:12."""
    s = max(0, round(t - start))
    return f"+{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


def formatted_number(value: Any, spec: str = ".1f", none: str = "—") -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return none
    return format(value, spec)


def money(value: float) -> str:
    return f"${value:,.2f}"


def machine(m: Machine | None) -> str:
    """`NVIDIA H200 × 8; driver 580.65; CUDA 13.0; torch 2.9.0; nvcc 13.0; python 3.12 (from
    001-env)`: only the facts that were recorded; none at all says where they come from."""
    if m is None:
        return f"not recorded — {RUN_ENV}"
    facts = [_gpus(m), *(f"{name} {value}" for name, value in (
        ("driver", m.driver), ("CUDA", m.cuda), ("torch", m.torch), ("nvcc", m.nvcc),
        ("python", m.python)) if value)]
    said = "; ".join(f for f in facts if f)
    if said:
        return f"{said} (from {m.source})"
    by = f" by {m.source}" if m.source != "telemetry" else ""
    return f"not recorded{by} — {RUN_ENV}"


def _gpus(m: Machine) -> str | None:
    """`NVIDIA H200 × 8`, the name or the count alone when only one was recorded."""
    if m.gpu:
        return f"{m.gpu} × {m.gpu_count}" if m.gpu_count else m.gpu
    return f"{m.gpu_count} GPU{'s' if m.gpu_count > 1 else ''}" if m.gpu_count else None


FILTERS = {"utc": utc, "duration": duration, "offset": offset, "number": formatted_number, "money": money,
           "machine": machine, "status": said_status}
