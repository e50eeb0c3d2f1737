"""The crash screen: Textual's traceback of an unexpected exception, without each frame's local
variables. Textual shows them by default; in the cockpit they hold a gate's environment (every
variable of the user's shell, a PGPASSWORD among them), and a crash screen gets pasted into issues."""

from __future__ import annotations

import rich
from rich.traceback import Traceback
from textual.app import App


class CrashWithoutLocals(App[int]):
    """The app's base: Textual's App with its fatal-error screen showing no locals."""

    def _fatal_error(self) -> None:
        # Textual's own, less show_locals=True (textual/app.py); called inside the except block
        self.bell()
        self.panic(Traceback(show_locals=False, width=None, suppress=[rich]))
