"""`cockpit export --format pr`: the session for a pull request's description, at most 40 lines of
Markdown a reviewer reads in one screen: the outcome against the workload's baseline, the best
valid bench as a table (its slowest and fastest configs, the rest in the full report), its validity
in one line, the keep/revert decision, the profile's one fix, and a link to the full report."""

from __future__ import annotations

from collections.abc import Sequence

from cockpit.report.markdown import md
from cockpit.report.model import GateReport, Report, Table

MAX_LINES = 40
TABLE_ROWS = 8
"""Configs shown: the slowest half and the fastest half against the baseline."""


def render_pr(report: Report, full_report: str) -> str:
    """`full_report`: the path of REPORT.md as the reader of the PR finds it (workspace-relative)."""
    lines = [f"### {_cell(report.objective)}", ""]
    o = report.outcome
    workload = f"`{o.workload}`: " if o.workload else ""
    lines.append(f"- **Outcome** — {workload}{o.text}" if o.best_speedup is not None
                 else f"- **Outcome** — {workload}no valid benchmark in this session ({o.text})")
    bench = next((g for g in report.gates if g.run_id == o.run_id), None)
    if bench is not None:
        validity = _fact(bench, "validity") or ("VALID" if bench.valid else "SUSPECT")
        note = _fact(bench, "why suspect") or _fact(bench, "note")
        lines.append(f"- **Validity** — {validity}" + (f": {_cell(note)}" if note else ""))
        table = next((t for t in bench.tables if t.rows), None)
        if table is not None:
            lines += ["", *_table(table, o.baseline)]
    decision = report.decisions[-1] if report.decisions else None
    if decision is not None:
        done = "done" if decision.confirmed else "not carried out"
        commit = f", commit {decision.commit}" if decision.commit else ""
        lines += ["", f"- **Decision** — {_cell(decision.summary)} ({done}{commit})"]
    profile = next((g for g in reversed(report.gates) if g.gate == "profile" and g.status == "pass"), None)
    if profile is not None:
        fix = _fact(profile, "the one fix")
        verdict = _fact(profile, "verdict")
        lines.append(f"- **Profile** — {_cell(verdict or profile.summary)}" + (f"; the one fix: {_cell(fix)}"
                                                                             if fix else ""))
    machine = _machine(report)
    if machine:
        lines.append(f"- **Machine** — {_cell(machine)}")
    minutes = report.duration_s / 60
    lines += ["", f"{minutes:.0f} min of work, {len(report.gates)} gate runs. "
                  f"Full report: [{full_report}]({full_report})"]
    if len(lines) > MAX_LINES:  # a table of very long config names is the only way to get here
        lines = [*lines[:MAX_LINES - 1], f"… (see the full report: {full_report})"]
    return "\n".join(lines) + "\n"


def _machine(report: Report) -> str:
    """`NVIDIA H200, driver 580.65, torch 2.9.0`: what was recorded of it; empty when nothing was."""
    m = report.machine
    if m is None:
        return ""
    return ", ".join(f"{name}{value}" for name, value in (("", m.gpu), ("driver ", m.driver),
                                                           ("torch ", m.torch)) if value)


def _fact(gate: GateReport, label: str) -> str | None:
    return next((f.value for f in gate.facts if f.label == label), None)


def _table(table: Table, baseline: str | None) -> list[str]:
    """The bench table cut to its slowest and fastest configs against the baseline."""
    columns = list(table.columns)
    vs = f"vs {baseline}" if baseline else None
    key = columns.index(vs) if vs in columns else None
    rows: Sequence[tuple[str, ...]] = table.rows
    note = ""
    if len(rows) > TABLE_ROWS:
        order = sorted(rows, key=lambda r: _number(r[key])) if key is not None else list(rows)
        half = TABLE_ROWS // 2
        rows = [*order[:half], *order[-half:]]
        note = (f"{len(table.rows)} configs; the {half} slowest and {half} fastest" +
                (f" {vs}" if key is not None else "") + " shown")
    rule = "|" + "|".join("---:" if n else "---" for n in table.numeric) + "|"
    out = ["| " + " | ".join(_cell(c) for c in columns) + " |", rule]
    out += ["| " + " | ".join(_cell(c) for c in r) + " |" for r in rows]
    return [*out, *([f"<sub>{note}</sub>"] if note else [])]


def _number(text: str) -> float:
    try:
        return float(text.rstrip("x×").strip())
    except ValueError:
        return float("inf")


def _cell(text: str) -> str:
    """One line, no table breaks, no HTML, no link or image: the text shows as written (REPORT.md's
    escape: `![x](https://...)` would make a reader's browser fetch the image)."""
    return md(text.strip())
