"""Where the cockpit bends Textual's App: a refused action is said in a toast, never the crash
screen; one command palette at a time, steady when closed mid-search; escape closes the zoomed
gate pane's search first."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.dom import DOMNode

from cockpit.errors import CockpitError
from cockpit.ui.shims.palette import SteadyPalette
from cockpit.ui.shims.toasts import PlainToasts

if TYPE_CHECKING:
    from cockpit.ui.widgets.gate_panel import GateDetail


class CockpitHooks(PlainToasts):
    """A mixin of the app, under KeyActions: Textual's own hooks, the cockpit's way."""

    gate_detail: GateDetail

    async def _dispatch_action(self, namespace: DOMNode, action_name: str, params: Any) -> bool:
        """Every key, click and palette command comes through here: what the cockpit refuses in
        words (a CockpitError) is said in a toast, never the crash screen."""
        try:
            return await super()._dispatch_action(namespace, action_name, params)
        except CockpitError as exc:
            self.notify(str(exc), severity="error", markup=False, timeout=15)
            return True

    @property
    def escape_to_minimize(self) -> bool:
        """Escape closes the zoomed gate pane's search first; the next one leaves the zoom."""
        return not self.gate_detail.searching and super().escape_to_minimize

    def action_command_palette(self) -> None:
        """Textual's, but never a second palette: one still in the stack under a dialog it opened
        made Textual's own raise DuplicateIds (found by the key fuzzer)."""
        if any(screen.has_class("--textual-command-palette") for screen in self.screen_stack):
            self.notify("The command palette is open already: esc closes what covers it.",
                        severity="warning", about="refused")
            return
        if self.use_command_palette:
            self.push_screen(SteadyPalette(id="--command-palette"))
