"""The crash screen: Textual's traceback of an unexpected exception, without each frame's local
variables. Textual shows them by default; in the cockpit they hold a gate's environment (every
variable of the user's shell, a PGPASSWORD among them), and a crash screen gets pasted into issues."""

from __future__ import annotations

from textual.app import App


class CrashWithoutLocals(App[int]):
    """The app's base: Textual's App with its fatal-error screen showing no locals."""

    def _fatal_error(self) -> None:
        # Textual's own, less show_locals=True (textual/app.py); called inside the except block.
        # Imported here: rich.traceback pulls in pygments, importlib.metadata and attrs (28 ms and
        # ~3 MiB resident that an idle cockpit never uses).
        import rich
        from rich.traceback import Traceback

        self.bell()
        self.panic(Traceback(show_locals=False, width=None, suppress=[rich]))
