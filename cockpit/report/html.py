"""report.html: one self-contained page — inline CSS, the chart as inline SVG, no script, no
font, image or anything else fetched — rendered by a Jinja2 template with autoescaping on, so
every value from the session is escaped as HTML. A Content-Security-Policy of `default-src
'none'` says the same to the browser."""

from __future__ import annotations

import re

import jinja2
from markupsafe import Markup

from cockpit.report.formats import FILTERS
from cockpit.report.model import Report

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


def render_html(report: Report, svg: str | None, chart_note: str | None) -> str:
    return environment().get_template("report.html.j2").render(
        r=report, svg=inline_svg(svg) if svg else None, chart_note=chart_note, csp=CSP)
