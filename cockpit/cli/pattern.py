"""`cockpit pattern list|show|new`: the pattern library from a shell.

Each handler takes the workspace root and returns the exit code: 0 ok, 1 when some pattern files
did not load (they are named on stderr, the rest is still listed). Usage errors raise
CockpitError, which `cockpit.cli.main` turns into one line on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cockpit.analysis.fix_payoff import RulePaid
from cockpit.cli.parser import session_named, workspace_of
from cockpit.errors import CockpitError
from cockpit.patterns.library import (
    LoadProblem,
    Pattern,
    close_matches,
    find,
    load_patterns,
    new_pattern,
)
from cockpit.patterns.triggers import trigger_text, trigger_to_mapping
from cockpit.report.fix_paid import paid_for, paid_line, workspace_payoffs
from cockpit.session.workspace import Workspace, resolve_session


def pattern(args: argparse.Namespace) -> int:
    """`cockpit pattern list|show|new`."""
    root = workspace_of(args).root
    if args.pattern_command == "list":
        return list_command(root, args.json)
    if args.pattern_command == "show":
        return show_command(root, args.ident, args.json)
    return new_command(root, args.title, args.problem, args.when, args.solution, args.time_saved,
                       session_named(args))


def list_command(workspace: Path, as_json: bool) -> int:
    """The library as a table (id, status, time saved, title), or one JSON object."""
    directory = Workspace(workspace).patterns_dir
    patterns, problems = load_patterns(directory)
    if as_json:
        print(json.dumps({
            "directory": str(directory),
            "patterns": [pattern_json(p) for p in patterns],
            "problems": [problem_json(p) for p in problems],
            "time_saved_min": sum(p.time_saved_min for p in patterns if p.status == "operational"),
        }))
    elif not patterns:
        print(f"no patterns in {directory} yet; turn the next failure into one with `cockpit pattern new`")
    else:
        print(table(patterns, paid_for(patterns, workspace_payoffs(Workspace(workspace)))))
    _report(problems)
    return 1 if problems else 0


def show_command(workspace: Path, ident: str, as_json: bool) -> int:
    """One pattern found by id, slug or fuzzy title: its fields, triggers and body."""
    directory = Workspace(workspace).patterns_dir
    patterns, problems = load_patterns(directory)
    pattern = find(patterns, ident)
    if pattern is None:
        close = close_matches(patterns, ident)
        hint = ("close: " + "; ".join(f"{p.id:02d} {p.title}" for p in close)) if close else \
            ("ids " + ", ".join(str(p.id) for p in patterns) if patterns else "the library is empty")
        broken = f"; {len(problems)} file(s) did not load, see `cockpit pattern list`" if problems else ""
        raise CockpitError(f"no pattern matches {ident!r} in {directory} ({hint}){broken}")
    paid = paid_for([pattern], workspace_payoffs(Workspace(workspace))).get(pattern.id, [])
    if as_json:
        print(json.dumps({**pattern_json(pattern), "body": pattern.body,
                          "paid": [vars(r) for r in paid]}))
    else:
        print(details(pattern, paid))
    return 0


def new_command(workspace: Path, title: str, problem: str, when: str, solution: str,
                time_saved_min: int, spec: str | None = None) -> int:
    """Write the next `patterns/NN-slug.md` and print its path. The session named by `spec`, else
    the open one if any, goes into its evidence, as the cockpit's own form does: history dates the
    pattern from it."""
    ws = Workspace(workspace)
    session = resolve_session(ws, spec)
    path = new_pattern(ws.patterns_dir, title, problem, when, solution, time_saved_min,
                       evidence=[session.id] if session else [])
    print(path)
    return 0


def table(patterns: tuple[Pattern, ...], paid: Mapping[int, list[RulePaid]]) -> str:
    """id, status, time saved and title in aligned columns (under a pattern that names a fix
    rule, how it paid across sessions), then the totals."""
    rows = [("ID", "STATUS", "SAVES", "TITLE")]
    rows += [(f"{p.id:02d}", p.status, f"{p.time_saved_min} min", p.title) for p in patterns]
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    lines = [_aligned(rows[0], widths)]
    for row, p in zip(rows[1:], patterns, strict=True):
        lines.append(_aligned(row, widths))
        lines += [" " * (sum(widths) + 6) + paid_line(paid[p.id])] if p.id in paid else []
    operational = [p for p in patterns if p.status == "operational"]
    lines.append(f"{len(patterns)} patterns: {len(operational)} operational, "
                 f"{len(patterns) - len(operational)} planned; "
                 f"{sum(p.time_saved_min for p in operational)} min saved when all apply")
    return "\n".join(lines)


def _aligned(row: tuple[str, str, str, str], widths: Sequence[int]) -> str:
    return "  ".join([*(row[i].ljust(widths[i]) for i in range(3)), row[3]])


def details(p: Pattern, paid: Sequence[RulePaid] = ()) -> str:
    """A pattern for reading in the terminal: the front matter as labelled lines (and how the fix
    rule it names paid across sessions), then the body."""
    lines = [
        f"{p.id:02d} · {p.title}",
        f"{p.status} · saves {p.time_saved_min} min · {p.path}",
        *([paid_line(paid)] if paid else []),
        f"problem:  {p.problem}",
        f"when:     {p.when}",
        f"solution: {p.solution}",
    ]
    if p.evidence:
        lines.append("evidence: " + "; ".join(p.evidence))
    if p.triggers:
        lines.append("triggers: " + " · ".join(trigger_text(t) for t in p.triggers)
                     + (" (advice: when to apply it, not a repeated mistake)"
                        if p.triggers_mean == "advice" else ""))
    body = p.body.strip("\n")
    return "\n".join(lines) + (f"\n\n{body}" if body else "")


def pattern_json(p: Pattern) -> dict[str, Any]:
    return {
        "id": p.id, "title": p.title, "status": p.status, "time_saved_min": p.time_saved_min,
        "problem": p.problem, "when": p.when, "solution": p.solution,
        "evidence": list(p.evidence), "triggers": [trigger_to_mapping(t) for t in p.triggers],
        "triggers_mean": p.triggers_mean, "path": str(p.path),
    }


def problem_json(problem: LoadProblem) -> dict[str, Any]:
    return {"path": str(problem.path), "line": problem.line, "message": problem.message}


def _report(problems: tuple[LoadProblem, ...]) -> None:
    for problem in problems:
        print(f"cockpit: {problem}", file=sys.stderr)
