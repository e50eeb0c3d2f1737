"""SESSION.md as report.html shows it: rendered as Markdown by markdown-it-py (CommonMark with tables; Rich
and Textual, which the cockpit depends on, depend on it) with raw HTML off, so whatever the
engineer or a tool wrote into it is escaped text; images are off too (the page fetches nothing),
and links keep only what markdown-it lets through (no `javascript:`, `vbscript:`, `file:` or
`data:`). Without markdown-it-py it is shown as written, escaped, in a <pre>."""

from __future__ import annotations

from functools import cache
from html import escape
from typing import TYPE_CHECKING

from markupsafe import Markup

if TYPE_CHECKING:
    from markdown_it import MarkdownIt


def session_html(text: str) -> Markup:
    """SESSION.md's text as HTML that can neither run nor fetch anything."""
    renderer = _renderer()
    if renderer is None:
        return Markup(f"<pre>{escape(text, quote=False)}</pre>")
    return Markup(renderer.render(text))


@cache
def _renderer() -> MarkdownIt | None:
    try:
        from markdown_it import MarkdownIt
    except ImportError:
        return None
    return MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"]).disable("image")
