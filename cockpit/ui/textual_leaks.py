"""A workaround for a memory leak in Textual 8: `StylesCache.get_inner_outer` is a functools
lru_cache on a method, so its key holds each widget's StylesCache, with every line it rendered,
for up to 1,024 entries after the widget is gone (Textualize/textual#6665, open). In the TUI the
widgets that come and go are the toasts: a status or a gate verdict each; over a soaked 8-hour
day they held ~20 MiB. Clearing that cache now and then lets them go; it memoizes two Style
objects per pair of background colours, rebuilt on the next frame.
"""

from __future__ import annotations

SWEEP_EVERY_S = 60.0


def forget_removed_widgets() -> None:
    """Drop what Textual's method cache keeps of widgets already removed (a no-op on a Textual
    without that cache)."""
    from textual._styles_cache import StylesCache

    clear = getattr(StylesCache.get_inner_outer, "cache_clear", None)
    if clear is not None:
        clear()
