"""The `cockpit` command line: one module per verb or verb group, on top of the core.

Exit codes: 0 ok, 1 a check failed, 2 usage or environment error (one line on stderr). All a
verb prints passes the door (cli/printed.py). Each verb's module is imported only when that verb
runs: `cockpit status` runs from tmux's status line every few seconds, so it must not pay for
Textual, the report stack or NVML.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from typing import cast

from cockpit.cli.parser import build_parser, session_named
from cockpit.cli.printed import through_the_door
from cockpit.errors import CockpitError
from cockpit.path_entries import drop_workspace_entries

HANDLERS = {
    "tui": "cockpit.cli.tui:run_tui",
    "screenshot": "cockpit.cli.screenshot:screenshot",
    "new": "cockpit.cli.session:new",
    "status": "cockpit.cli.session:status",
    "phase": "cockpit.cli.session:phase",
    "end": "cockpit.cli.session:end",
    "decision": "cockpit.cli.decision:decision",
    "gate": "cockpit.cli.gate:gate",
    "gpu": "cockpit.cli.telemetry:gpu",
    "telemetry": "cockpit.cli.telemetry:telemetry",
    "pattern": "cockpit.cli.pattern:pattern",
    "analyze": "cockpit.cli.analyze:analyze",
    "decide": "cockpit.cli.analyze:decide",
    "export": "cockpit.cli.report:export",
    "history": "cockpit.cli.report:history",
    "tune": "cockpit.cli.tune:tune",
    "workload": "cockpit.cli.workload:workload",
    "init": "cockpit.cli.init:init",
    "trust": "cockpit.cli.trust:trust",
}
"""verb -> "module:function"; the function takes the parsed arguments and returns the exit code."""


def handler(verb: str) -> Callable[..., int]:
    module, _, name = HANDLERS[verb].partition(":")
    return cast(Callable[..., int], getattr(importlib.import_module(module), name))


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser(argv).parse_args(argv)
    drop_workspace_entries(os.environ)  # an empty or relative entry finds a program, module or .so here
    try:
        with through_the_door():  # every word a verb prints, its errors included (cli/printed.py)
            try:
                session_named(args)  # a session named twice, or to a verb that works on none: refused first
                return handler(args.command or "tui")(args)
            except CockpitError as exc:
                print(f"cockpit: {exc}", file=sys.stderr)
                return 2
            except BrokenPipeError:  # the reader left (`| head`): not a bug, said below as cat says it
                raise
            except Exception:  # a bug: its traceback, through the door (its words may be a workspace's)
                import traceback  # (only for a bug: `status` runs every few seconds)

                traceback.print_exc(file=sys.stderr)
                return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `cockpit ... | head`: the reader left; no traceback, as cat does
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # the interpreter's final flush must not fail too
        return 141
