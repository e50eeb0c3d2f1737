"""`cockpit export --format pr`: the session for a pull request's description, at most 40 lines of
Markdown a reviewer reads in one screen. It opens with what a reviewer asks, in that order (the
report's Outcome opens the same way, `Headline.opening`): the result with its interval and
baseline, correctness, the sanitizer, the bench's validity, the keep/revert decision against what
it compared with; then the profile's one fix, the machine, the best valid bench as a table with
units (its slowest and fastest configs, the rest in the full report; a config whose time is mostly
its launch is never among the fastest) with its caption after a blank line (GitHub would read the
caption as the table's last row without one), and a link to the full report."""

from __future__ import annotations

from cockpit.report.config_table import PR_REFERENCES, config_table
from cockpit.report.headline import headline
from cockpit.report.markdown import md
from cockpit.report.model import BenchConfigs, Report, Table

MAX_LINES = 40
TABLE_ROWS = 8
"""Configs shown: the slowest half and the fastest half against the baseline."""


def render_pr(report: Report, full_report: str) -> str:
    """`full_report`: the path of REPORT.md as the reader of the PR finds it (from the repository's
    root)."""
    lines = [f"### {_cell(report.objective)}", ""]
    h = headline(report)
    workload = f"`{report.outcome.workload}`: " if report.outcome.workload else ""
    for label, words in h.opening():
        lines.append(f"- **{label}** — {workload if label == 'Result' else ''}{_cell(words)}")
    if h.profile is not None:
        fix = f"; the one fix: {_cell(h.fix)}" if h.fix else ""
        lines.append(f"- **Profile** — {_cell(h.profile)}{fix}")
    machine = _machine(report)
    if machine:
        lines.append(f"- **Machine** — {_cell(machine)}")
    if report.configs is not None and report.configs.valid:
        lines += ["", *_table(report.configs)]
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


def _table(configs: BenchConfigs) -> list[str]:
    """The slowest configs against the baseline and the fastest of those whose time is not mostly
    the launch (a 9 µs call's ratio says how fast the launch was)."""
    order = configs.worst_first()
    note = ""
    if len(order) > TABLE_ROWS:
        half = TABLE_ROWS // 2
        slowest = order[:half]
        fastest = [r for r in order[half:] if not r.launch_cost][-half:]
        launch = sum(1 for r in order if r.launch_cost)
        order = (*slowest, *fastest)
        note = (f"{len(configs.rows)} configs; the {len(slowest)} slowest and {len(fastest)} fastest "
                f"vs {configs.baseline} shown" + (f", the fastest among those whose time is not mostly the "
                                                  f"launch ({launch} configs are)" if launch else ""))
    table = config_table(configs, order, PR_REFERENCES)
    return [*_rows(table), *(["", f"<sub>{_cell(note)}</sub>"] if note else [])]


def _rows(table: Table) -> list[str]:
    rule = "|" + "|".join("---:" if n else "---" for n in table.numeric) + "|"
    return ["| " + " | ".join(_cell(c) for c in table.columns) + " |", rule,
            *("| " + " | ".join(_cell(c) for c in row) + " |" for row in table.rows)]


def _cell(text: str) -> str:
    """One line, no table breaks, no HTML, no link or image: the text shows as written (REPORT.md's
    escape: `![x](https://...)` would make a reader's browser fetch the image)."""
    return md(text.strip())
