"""Ask the workload probe, in a child of its own, what the workload declares: for the probes that
need one fact of it (the extension the env gate checks, the kernel and shape ncu profiles), so the
cockpit's own process never waits on the torch import a describe costs. Standard library only."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import cast

from cockpit.workload.probe_wire import ManifestJson

MANIFEST_LINE = "MANIFEST "


def describe_in_child(argv: list[str], timeout_s: float = 300.0) -> ManifestJson:
    """The manifest `argv` (a `workload_probe.py describe ...` command) prints; ValueError with the
    probe's own last line when it could not describe (a traceback goes on to this log)."""
    out = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s)
    for line in out.stdout.splitlines():
        if line.startswith(MANIFEST_LINE):
            data = json.loads(line[len(MANIFEST_LINE):])
            if isinstance(data, dict):
                return cast(ManifestJson, data)
    sys.stdout.write(out.stderr)  # a traceback stays in the gate's log
    # the probe's own last line says what is wrong; the traceback's only when it said nothing
    lines = ([ln for ln in out.stdout.splitlines() if ln.strip()]
             or [ln for ln in out.stderr.splitlines() if ln.strip()])
    raise ValueError(lines[-1] if lines else "the workload could not be described")
