"""Where the chart names its phases: above the top panel, on two rows, so that short phases side
by side never print their names over each other. Pure geometry in points, estimated from the font
size and the number of characters (the SVG keeps text as text, so the reader's font draws it)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

FONT_PT = 6.0
CHAR_EM = 0.62
"""A character's width in font sizes: DejaVu Sans averages about 0.55, with room for a wider font."""
GAP_PT = 4.0
"""At least this much between two labels on one row."""
OFFSET_PT = (2.0, 3.0)
"""A label's left edge from its phase's start line, and the first row's baseline above the panel."""
ROW_PITCH = 1.6
"""From one row's baseline to the next, in font sizes: the rows' boxes never touch."""
ROWS = 2
MAX_CHARS = 24
MIN_CHARS = 3
"""A name shortened to fewer characters than this (before its "…") is left out instead."""


@dataclass(frozen=True)
class PhaseLabel:
    """One phase's name as the chart draws it."""

    name: str
    text: str
    """As drawn: the name, shortened with "…", or "" when there is no room (the tooltip has it)."""
    x_pt: float
    """The label's left edge, in points from the panel's left edge."""
    row: int
    """0 just above the panel, 1 above that; -1 when left out."""

    @property
    def y_pt(self) -> float:
        """The baseline, in points above the panel's top edge."""
        return OFFSET_PT[1] + self.row * ROW_PITCH * FONT_PT


def width_pt(text: str, font_pt: float = FONT_PT) -> float:
    return len(text) * CHAR_EM * font_pt


def shortened(name: str, room_pt: float, font_pt: float = FONT_PT) -> str:
    """`name` if it fits in `room_pt`, else as many characters as fit and "…"; "" if too few do."""
    if len(name) <= MAX_CHARS and width_pt(name, font_pt) <= room_pt:
        return name
    chars = min(MAX_CHARS, int(room_pt // (CHAR_EM * font_pt))) - 1
    return name[:chars].rstrip() + "…" if chars >= MIN_CHARS else ""


def place_labels(phases: Sequence[tuple[str, float]], right_pt: float,
                 font_pt: float = FONT_PT) -> tuple[PhaseLabel, ...]:
    """A label for each phase (name, start in points from the panel's left edge), in start order.
    Each goes on the lowest row where its whole name fits, else is shortened to the room of the
    roomier row, else left out. No label runs past `right_pt` (the drawing's right edge) or into
    the start of the phase after next, so the one after next always finds a row free (the next
    may take the other)."""
    ordered = sorted(phases, key=lambda p: p[1])
    free_from = [float("-inf")] * ROWS
    out = []
    for i, (name, x) in enumerate(ordered):
        left = x + OFFSET_PT[0]
        limit = right_pt
        if i + 2 < len(ordered):
            limit = min(limit, ordered[i + 2][1] + OFFSET_PT[0] - GAP_PT)
        rooms = [limit - left if left >= free_from[row] else -1.0 for row in range(ROWS)]
        row = next((r for r in range(ROWS) if shortened(name, rooms[r], font_pt) == name),
                   max(range(ROWS), key=lambda r: rooms[r]))
        text = shortened(name, rooms[row], font_pt)
        if text:
            free_from[row] = left + width_pt(text, font_pt) + GAP_PT
        out.append(PhaseLabel(name, text, left, row if text else -1))
    return tuple(out)
