"""A widget drawn line by line from one-line Rich Texts, repainting only the lines that change;
every line is drawn through the door (cockpit/printable.py).

The panels that tick every second (header, phases, gates, GPU) change a few cells a second. A
Rich renderable would be laid out and rendered whole on every change; here each line is rendered
to a Strip once and kept, a change repaints its own row only, and the layout is redone only when
the number of lines changes.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.widget import Widget

from cockpit.printable import printable


class TextLines(Widget):
    """Subclasses build their lines for a width in `build(width)` and call `rebuild()` when their
    data changes; lines are cut with an ellipsis at the widget's width."""

    DEFAULT_CSS = """
    TextLines { height: auto; }
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self._lines: list[Text] = []
        self._strips: dict[int, Strip] = {}
        self._built_width = -1
        self._base: Style | None = None  # the widget's own style from CSS, cached

    # What subclasses provide ------------------------------------------------------------------

    def build(self, width: int) -> Sequence[Text]:
        raise NotImplementedError

    # The lines ----------------------------------------------------------------------------------

    @property
    def lines(self) -> list[Text]:
        """The lines as built for the current width (builds them if nothing is shown yet)."""
        if self._built_width < 0:
            self._built_width = self._width()
            self._lines = list(self.build(self._built_width))
        return self._lines

    @property
    def plain(self) -> str:
        """What the widget shows, as plain text (tests, screenshots)."""
        return "\n".join(line.plain for line in self.lines)

    def _width(self) -> int:
        width = self.size.width if self.is_mounted else 0  # one look: each is a compositor lookup
        return width or 80

    def rebuild(self) -> None:
        """Build the lines again; repaint the rows that differ, re-lay out if the count changed."""
        width = self._width()
        new = list(self.build(width))
        old, self._lines = self._lines, new
        if len(new) != len(old) or width != self._built_width:
            self._built_width = width
            self._strips.clear()
            self.refresh(layout=len(new) != len(old))
            return
        changed = [y for y, (before, after) in enumerate(zip(old, new, strict=True))
                   if _differs(before, after)]
        for y in changed:
            self._strips.pop(y, None)
        if changed:  # one call: each refresh costs Textual some bookkeeping
            self.refresh(*(Region(0, y, width, 1) for y in changed))

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._strips.clear()  # a theme or CSS change: the base style changed
        self._base = None

    def on_resize(self) -> None:
        if self._width() != self._built_width:
            self.rebuild()

    # Textual's line API ---------------------------------------------------------------------

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        if width != self._built_width:  # wrapped lines: their count depends on the width
            self._built_width = width
            self._lines = list(self.build(width))
            self._strips.clear()
        return len(self._lines)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        strip = self._strips.get(y)
        if strip is None or strip.cell_length != width:
            if self._base is None:
                self._base = self.rich_style
            base = self._base
            if y < len(self._lines):
                text = self._lines[y]
                if text.cell_len > width:
                    text = text.copy()
                    text.truncate(width, overflow="ellipsis")
                console = self.app.console
                # Text.render leaves out the Text's own base style: put it under the spans.
                style = base + console.get_style(text.style) if text.style else base
                # Each piece through the door: an objective, a phase, a status or a summary from a
                # journal, a process name from NVML, is drawn here.
                strip = Strip([Segment(printable(s.text), s.style) for s in text.render(console)])
                strip = strip.apply_style(style).extend_cell_length(width, base)
            else:
                strip = Strip.blank(width, base)
            self._strips[y] = strip
        return strip


def _differs(before: Text, after: Text) -> bool:
    """Would the row paint differently? The same Text object, or equal text, spans and style, does not."""
    return before is not after and (before.plain != after.plain or before.spans != after.spans
                                    or before.style != after.style)
