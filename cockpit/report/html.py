"""report.html: one self-contained page — inline CSS, the charts as inline SVG, no script, no
font, image or anything else fetched — rendered by a Jinja2 template with autoescaping on, so
every value from the session is escaped as HTML. A Content-Security-Policy of `default-src
'none'` says the same to the browser."""

from __future__ import annotations

import re
from collections.abc import Mapping

import jinja2
from markupsafe import Markup

from cockpit.report.charts import every_chart
from cockpit.report.config_table import config_table
from cockpit.report.formats import FILTERS
from cockpit.report.headline import headline
from cockpit.report.model import Report
from cockpit.report.session_md import session_html

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"


def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("cockpit.report", "templates"), autoescape=True,
        undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters.update(FILTERS)
    return env


def inline_svg(svg: str) -> Markup:
    """The chart's SVG (already checked by `chart.safe_svg`) for embedding: HTML needs no
    namespace declarations, so not even their URIs are left in the page."""
    return Markup(re.sub(r'\s+xmlns(?::\w+)?="[^"]*"', "", svg, count=2))


def render_html(report: Report, charts: Mapping[str, str | None] | None = None,
                notes: Mapping[str, str | None] | None = None) -> str:
    """report.html's text; `charts`: each chart's SVG (checked by `chart.safe_svg`), or None with
    the line in `notes` that says why there is none (neither: no chart, nothing said)."""
    charts, notes = every_chart(charts), every_chart(notes)
    table = config_table(report.configs) if report.configs else None
    return environment().get_template("report.html.j2").render(
        r=report, h=headline(report), table=table,
        charts={name: inline_svg(svg) if svg else None for name, svg in charts.items()}, notes=notes,
        session_md=session_html(report.notes) if report.notes is not None else None, csp=CSP)
