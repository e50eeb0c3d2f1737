"""What a terminal would show of an app now, row by row: its screenshot's text, each run of text
at its column (a test asks whether a line is on screen, not only in a widget's content)."""

from __future__ import annotations

import html
import re

from textual.app import App

_RUN = re.compile(r'<text class="[^"]*" x="([\d.]+)" y="[\d.]+" textLength="[\d.]+" '
                  r'clip-path="url\(#[^)]*-line-(\d+)\)">(.*?)</text>')
CELL_PX = 12.2
"""The width of one cell in Textual's SVG."""


def screen_rows(app: App[object]) -> list[str]:
    rows: dict[int, list[tuple[int, str]]] = {}
    for m in _RUN.finditer(app.export_screenshot()):
        rows.setdefault(int(m[2]), []).append((round(float(m[1]) / CELL_PX), html.unescape(m[3])))
    out = []
    for y in sorted(rows):
        line = ""
        for x, text in sorted(rows[y]):
            line = line.ljust(x)[:x] + text.replace("\xa0", " ")
        out.append(line.rstrip())
    return out
