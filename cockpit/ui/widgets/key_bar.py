"""The bottom line of keys, as Textual's Footer draws it, in one widget.

Textual's Footer is a container with a widget per key (14 on the main screen), composed again on
every focus change: ~2 MiB of the TUI's resident memory. Here the same line is one Rich Text,
rebuilt when the screen's bindings change; a click runs the key under the pointer, and hovering
a key shows its tooltip. A line too short for every key drops keys whole, the least used first;
`?` (every key, with what it does) always stays.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.widget import Widget

# The main screen's keys by how often a kernel engineer reaches for them. Keys not named here (a
# focused panel's or a dialog's own) rank after help and before these; `?` help ranks first.
PRIORITY = ("help", "run_gate", "goto_phase", "post_status", "quit", "next_phase", "cancel_gate",
            "focus_editor", "toggle_pause", "open_patterns", "end_session", "skip_phase", "zoom",
            "export_report", "new_session")
ENDED_PRIORITY = ("help", "export_report", "new_session", "quit", "open_patterns", "focus_editor", "zoom")
"""An ended session's keys by use: its report and the next session first (nothing else acts on it)."""


def rank(action: str, order: int, priority: tuple[str, ...] = PRIORITY) -> tuple[int, int]:
    """Where a key stands when the line is short (lower stays longer); `order`: its place on the line;
    `priority`: the screen's keys by use (an ended session has its own)."""
    name = action.removeprefix("app.")
    if name == priority[0]:
        return (0, 0)
    if name in priority:
        return (2, priority.index(name))
    return (1, order)


def keys_that_fit(widths: Sequence[int], ranks: Sequence[tuple[int, int]], room: int) -> set[int]:
    """Which keys (by index) the line shows: the best-ranked ones whose widths add up to `room`
    at most; the rest are dropped whole, the worst-ranked first."""
    shown: set[int] = set()
    used = 0
    for i in sorted(range(len(widths)), key=lambda i: ranks[i]):
        if used + widths[i] > room:
            break
        shown.add(i)
        used += widths[i]
    return shown


@dataclass(frozen=True)
class KeySpan:
    """Where one key sits on the line (cells start..end) and what a click on it does."""

    start: int
    end: int
    key: str
    enabled: bool
    tooltip: str


class KeyBar(Widget, can_focus=False):
    """The keys the screen offers now; the command palette's key at the right edge."""

    ALLOW_SELECT = False
    COMPONENT_CLASSES = {"key-bar--key", "key-bar--description", "key-bar--edge", "key-bar--item"}
    DEFAULT_CSS = """
    KeyBar {
        height: 1; dock: bottom; text-wrap: nowrap;
        color: $footer-foreground; background: $footer-background;
        & > .key-bar--key {
            color: $footer-key-foreground; background: $footer-key-background; text-style: bold;
        }
        & > .key-bar--description {
            color: $footer-description-foreground; background: $footer-description-background;
        }
        & > .key-bar--edge { color: $foreground 20%; background: $footer-item-background; }
        & > .key-bar--item { background: $footer-item-background; }
    }
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self._spans: list[KeySpan] = []
        self._ready = False

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._bindings_changed)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def _bindings_changed(self, _screen: object) -> None:
        self._ready = True
        self.refresh()

    def render(self) -> Text:
        self._spans = []
        if not self._ready:
            return Text()
        key_style = self.get_component_rich_style("key-bar--key")
        text_style = self.get_component_rich_style("key-bar--description")
        width = self.size.width
        palette: tuple[Binding, bool, str] | None = None
        items: list[tuple[Text, Binding, bool, str]] = []
        shown: set[str] = set()  # one key per action (the first), as the Footer does
        for _node, binding, enabled, tooltip in self.screen.active_bindings.values():
            if binding.key == self.app.COMMAND_PALETTE_BINDING:
                palette = (binding, enabled, binding.tooltip or binding.description)
                continue
            if not binding.show or binding.action in shown:
                continue
            shown.add(binding.action)
            dim = Style(dim=not enabled)
            item = Text.assemble((f" {self.app.get_key_display(binding)} ", key_style + dim),
                                 (f"{binding.description} ", text_style + dim))
            items.append((item, binding, enabled, tooltip))
        if not self.app.ENABLE_COMMAND_PALETTE:
            palette = None
        right = Text()
        if palette is not None:
            # Textual's Footer docks the palette's key at the right, compact, behind a thin edge.
            right = Text.assemble(("▏", self.get_component_rich_style("key-bar--edge")),
                                  (self.app.get_key_display(palette[0]), key_style),
                                  (f" {palette[0].description}", text_style),
                                  (" ", self.get_component_rich_style("key-bar--item")))
        room = max(0, width - right.cell_len)
        priority = ENDED_PRIORITY if getattr(self.app, "read_only", False) else PRIORITY
        fit = keys_that_fit([item.cell_len for item, *_ in items],
                            [rank(b.action, i, priority) for i, (_, b, _, _) in enumerate(items)], room)
        keys = Text(no_wrap=True, overflow="crop")
        for i, (item, binding, enabled, tooltip) in enumerate(items):
            if i in fit:
                start = keys.cell_len
                keys.append_text(item)
                self._spans.append(KeySpan(start, keys.cell_len, binding.key, enabled, tooltip))
        if palette is None:
            return keys
        keys.truncate(room, overflow="crop", pad=True)
        binding, enabled, tooltip = palette
        self._spans.append(KeySpan(room, width, binding.key, enabled, tooltip))
        return keys + right

    def key_at(self, x: int) -> KeySpan | None:
        return next((s for s in self._spans if s.start <= x < s.end), None)

    def on_click(self, event: events.Click) -> None:
        span = self.key_at(event.x)
        if span is None:
            return
        if span.enabled:
            self.app.simulate_key(span.key)
        else:
            self.app.bell()

    def on_mouse_move(self, event: events.MouseMove) -> None:
        span = self.key_at(event.x)
        self.tooltip = span.tooltip if span is not None and span.tooltip else None
