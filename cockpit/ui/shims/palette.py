"""Textual's command palette, steady when it is closed in the middle of a search.

The palette gathers its commands in a worker; closing it (escape, or a key that covers it) while
that worker still runs left the worker writing to a list that had been taken down: its watchers
asked for the list, the input and the busy indicator by query, found none (NoMatches), and the
exception ended the app (found by the key fuzzer at 80x24). A palette whose parts are gone has
nothing left to show, so its watchers do nothing then.
"""

from __future__ import annotations

from textual.command import CommandPalette
from textual.css.query import NoMatches


class SteadyPalette(CommandPalette):
    """Textual's palette; its watchers skip a palette already taken down."""

    def _watch__list_visible(self) -> None:
        try:
            super()._watch__list_visible()
        except NoMatches:  # closed while its search ran: nothing to show any more
            return

    async def _watch__show_busy(self) -> None:
        try:
            await super()._watch__show_busy()
        except NoMatches:
            return
