"""`cockpit trust [show|allow|revoke] [--json]`: what the workspace's cockpit.toml would make the
gates run (the interpreter, each command, the env they add, the workload's code), and the user's
answer, kept outside the workspace (session/trust.py). `show` exits 0 either way (`--json` says
`trusted`); a headless gate, tune or `workload show` refuses, rc 2, until `allow`."""

from __future__ import annotations

import argparse
import json
import time

from cockpit.cli.parser import workspace_of
from cockpit.config import CONFIG_NAME, load_config
from cockpit.session.trust import WorkspaceRuns, allow, revoke, trust_file, what_runs


def trust(args: argparse.Namespace) -> int:
    """`cockpit trust`: show (the default), allow or revoke."""
    ws = workspace_of(args)
    config = load_config(ws.root)
    verb = args.trust_command or "show"
    forgot = False
    if verb == "revoke":
        forgot = revoke(ws.root)
    elif verb == "allow" and (asked := what_runs(ws.root, config)).needed:
        allow(asked)
    runs = what_runs(ws.root, config)
    if args.json:
        print(json.dumps(as_json(runs)))
    elif verb == "revoke":
        print(f"{runs.root}: " + ("forgotten: nothing it names runs until `cockpit trust allow`" if forgot
                                  else "there was no answer to forget"))
    else:
        print("\n".join(shown(runs)))
    return 0


def as_json(runs: WorkspaceRuns) -> dict[str, object]:
    return {
        "workspace": str(runs.root), "needed": runs.needed, "trusted": runs.trusted,
        "allowed_t": runs.allowed_t, "changed": runs.approved is not None and not runs.trusted,
        "trust_file": str(trust_file()),
        "runs": [{"key": n.key, "value": n.value, "line": n.line, "why": n.why,
                  "new": n.line in runs.new_since_trusted} for n in runs.named],
    }


def shown(runs: WorkspaceRuns) -> list[str]:
    """The answer and the list it is about, one line each."""
    if not runs.needed:
        why = (f"its {CONFIG_NAME} names nothing to run" if (runs.root / CONFIG_NAME).is_file()
               else f"no {CONFIG_NAME}")
        return [f"{runs.root}: nothing to trust ({why}): the gates run their own probes in a Python "
                "found on your PATH"]
    lines = [f"{runs.root}: {answer(runs)}", f"{runs.root / CONFIG_NAME} names what the gates would run:"]
    lines += [f"  {line}" for line in runs.listing()]
    if not runs.trusted:
        lines.append("nothing of it runs until you trust it: `cockpit trust allow`")
    return lines


def answer(runs: WorkspaceRuns) -> str:
    when = (time.strftime("%Y-%m-%d %H:%M", time.localtime(runs.allowed_t))
            if runs.allowed_t is not None else "")
    if runs.trusted:
        return f"trusted (you allowed it{' on ' + when if when else ''}; `cockpit trust revoke` forgets it)"
    if runs.approved is not None:
        return f"NOT trusted: its {CONFIG_NAME} changed since you trusted it{' on ' + when if when else ''}"
    return "NOT trusted: you have not allowed it"
