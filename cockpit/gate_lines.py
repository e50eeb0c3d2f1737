"""The catalog of gates: one line per gate, in the order a session needs them.

This is the one place a gate is named. A gate is a folder, `cockpit/gates/<name>/`, holding
`gate.py` (what runs and judges it), `result.py` (its typed result) and `view.py` (what the TUI
and the report show of a run); its line below names the three inside it. Adding a gate is one
folder and one line. The line is plain data, importable from any layer: `cockpit.toml` checks
its `[gates.<name>]` tables and the command line offers `cockpit gate <name>` from these names
without loading any gate's code (`gates/catalog.py` loads it on first use).
"""

from __future__ import annotations

from typing import NamedTuple


class GateLine(NamedTuple):
    name: str
    """Its folder under cockpit/gates/ and its name in the journal, `cockpit.toml` and the CLI."""
    title: str
    timeout_s: float
    code: str
    """The class in `gate.py` that runs and judges it (a `GateCode`)."""
    result: str
    """The result type in `result.py` its runs are read as."""
    view: str
    """The function in `view.py` from that result to what is shown."""
    needs_workload: bool = True
    """Its probe reads the workspace's workload (env checks the box with or without one)."""


CATALOG: tuple[GateLine, ...] = (
    GateLine("env", "Environment", 120.0, "EnvGate", "EnvResult", "env_view", needs_workload=False),
    GateLine("build", "Build", 1800.0, "BuildGate", "BuildResult", "build_view"),
    GateLine("correctness", "Correctness", 1800.0, "CorrectnessGate", "CorrectnessResult",
             "correctness_view"),
    GateLine("bench", "Benchmark", 3600.0, "BenchGate", "BenchResult", "bench_view"),
    GateLine("profile", "Profile", 600.0, "ProfileGate", "ProfileResult", "profile_view"),
    # its own limit is [sanitize] timeout_s (900 s), which names the call it stopped at
    GateLine("sanitize", "Sanitizer", 3600.0, "SanitizeGate", "SanitizeResult", "sanitize_view"),
)

GATE_NAMES: tuple[str, ...] = tuple(line.name for line in CATALOG)
"""The gates' names, in the catalog's order."""

MEASURING_GATE = "bench"
"""The gate whose runs are benchmarks: the runs speedup, keep/revert and history are made of."""
