"""The app's toasts through the door (cockpit/printable.py): a notice's words come from journals,
patterns, pattern file names and exceptions, so each passes `printable` and none is ever markup."""

from __future__ import annotations

from textual.app import App
from textual.notifications import SeverityLevel

from cockpit.printable import printable


class PlainToasts(App[int]):
    """A base of the app: every `notify`, whoever calls it (a screen, a widget, a thread), shows
    plain text with no escape sequence or control character in it."""

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = True) -> None:
        super().notify(printable(message), title=printable(title), severity=severity, timeout=timeout,
                       markup=False)
