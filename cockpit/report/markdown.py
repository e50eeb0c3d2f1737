"""REPORT.md: the report as GitHub-flavoured Markdown, through a Jinja2 template.

Every value from the session passes the `md` filter, which backslash-escapes Markdown's
punctuation (and `|` in tables), so `<script>`, `[x](javascript:…)`, backticks, HTML and
`[bold]` show as the characters they are. SESSION.md goes into a fenced block longer than any
backtick run inside it, so nothing in it is interpreted either.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import jinja2

from cockpit.report.charts import every_chart
from cockpit.report.config_table import config_table
from cockpit.report.formats import FILTERS
from cockpit.report.headline import headline
from cockpit.report.model import Report
from cockpit.report.text import clean_block, clean_line

# The punctuation that means something inline in Markdown, GitHub's extensions (tables,
# strikethrough, math, #123 and @name references) or HTML; CommonMark lets a backslash escape
# each. Values never start a line here, so `-`, `+`, `.` and `=` need no escape; a colon only
# matters where it would start an autolink (`http://`).
_SPECIAL = re.compile(r"([\\`*_{}\[\]()#!|<>~&$@]|:(?=//))")


def md(value: object) -> str:
    """A value as literal Markdown text on one line."""
    return _SPECIAL.sub(r"\\\1", clean_line(str(value)))


def md_block(text: str) -> str:
    """Several lines shown exactly as written: a fenced code block that nothing inside can close."""
    text = clean_block(text)
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text.rstrip()}\n{fence}"


def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("cockpit.report", "templates"), autoescape=False,
        undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
        keep_trailing_newline=True)
    env.filters.update(FILTERS)
    env.filters["md"] = md
    env.filters["md_block"] = md_block
    return env


def render_markdown(report: Report, charts: Mapping[str, str | None] | None = None,
                    notes: Mapping[str, str | None] | None = None) -> str:
    """REPORT.md's text; `charts`: each chart's SVG file beside it (linked relatively), or None
    with the line in `notes` that says why there is none (neither: no chart, nothing said)."""
    charts, notes = every_chart(charts), every_chart(notes)
    table = config_table(report.configs) if report.configs else None
    return environment().get_template("report.md.j2").render(
        r=report, h=headline(report), table=table, charts=charts, notes=notes)
