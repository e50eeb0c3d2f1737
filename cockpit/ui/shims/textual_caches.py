"""Textual's method memos, emptied once a minute so that a long day stays at its warm-up size.

- `StylesCache.get_inner_outer` is a functools lru_cache on a method: its key holds each widget's
  StylesCache, with every line it rendered, for up to 1,024 entries after the widget is gone
  (Textualize/textual#6665, open). The widgets that come and go here are the toasts (a status or
  a gate verdict each); over a soaked 8-hour day they held ~20 MiB.
- `Region`'s geometry methods (intersection, union, grow, shrink, translate...) are lru_caches of
  up to 4,096 entries each, keyed by the regions they were given. A scrolling log, toasts and a
  growing status history give them new regions all day: in bench/soak.py they gained ~5,000
  entries after the warm-up (8 hours of session, 60 gate runs), memory that kept growing for hours
  before the bound (several MiB).

Both memoize a few tuples or Styles that are recomputed in microseconds on the next frame.
"""

from __future__ import annotations

SWEEP_EVERY_S = 60.0


def empty_textual_caches() -> None:
    """Empty the memos above (those this Textual has: a no-op for one without them)."""
    from textual._styles_cache import StylesCache
    from textual.geometry import Region

    memos = [StylesCache.get_inner_outer, *vars(Region).values()]
    for memo in memos:
        clear = getattr(memo, "cache_clear", None)
        if clear is not None:
            clear()
