"""The Env gate's probe: is this machine ready to build and load a torch CUDA extension?

    python -m cockpit.probes.env_probe --out RESULT.json [--workspace DIR] [--build-dir DIR]
                                       [--extension NAME]

Prints one line per check as it goes (`PASS  torch  2.13.0+cu130 (CUDA 13.0)`), then writes
RESULT.json atomically: `{"checks": [{"name", "status", "value", "expected", "fix"}...],
"duration_s": float}`. Exit 0: no check failed; 1: a check failed; 2: the probe could not run
(bad arguments, --out not writable).

It imports only the standard library at top level (torch, numpy and pynvml are imported inside
the checks that need them), so a missing torch is a clean `fail`, and the file also runs as a
plain script under a python that does not have cockpit installed (the CUDA venv). Every
subprocess has a timeout, and a watchdog writes what was measured and exits if the whole probe
runs past its deadline (a wedged driver can hang `torch.cuda.is_available()` forever).
The checks live in the `env` package beside this file; this is only the entry the gate runs.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING or __package__:  # python -m cockpit.probes.env_probe, or imported; mypy reads this
    from .env.run import main
else:  # run by path, as the gate does: this folder is sys.path[0], cockpit need not be installed
    from env.run import main

if __name__ == "__main__":
    sys.exit(main())
