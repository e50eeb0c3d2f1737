"""The app's toasts through the door (cockpit/printable.py): a notice's words come from journals,
patterns, pattern file names and exceptions, so each passes `printable` and none is ever markup.

A toast about a state ("no session open", "this gate is silent") names it (`about`): a new toast
about the same state replaces the old one (a burst of refused keys shows one hint, not ten), and
`drop_toasts` takes them down when the state is over, so none is left saying what is no longer so.
"""

from __future__ import annotations

from textual.app import App
from textual.notifications import Notification, Notify, SeverityLevel

from cockpit.printable import printable


class PlainToasts(App[int]):
    """A base of the app: every `notify`, whoever calls it (a screen, a widget, a thread), shows
    plain text with no escape sequence or control character in it."""

    def __init__(self) -> None:
        super().__init__()
        self._about: dict[str, list[Notification]] = {}
        self._dropped: set[str] = set()

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = True, about: str | None = None) -> None:
        """Textual's notify, through the door; `about`: the state the toast tells of."""
        if about is not None:
            self.drop_toasts(about)
        toast = Notification(printable(message), printable(title), severity,
                             self.NOTIFICATION_TIMEOUT if timeout is None else timeout, markup=False)
        if about is not None:
            self._about.setdefault(about, []).append(toast)
        self.post_message(Notify(toast))

    def drop_toasts(self, *about: str) -> None:
        """Take down the toasts about these states (said, or still on their way to the screen)."""
        for name in about:
            for toast in self._about.pop(name, []):
                self._dropped.add(toast.identity)
                if toast in self._notifications:
                    self._unnotify(toast)

    def _on_notify(self, event: Notify) -> None:
        """Before Textual's own (Textual calls each class's handler down the MRO): a toast dropped
        before it reached the screen stops here."""
        if event.notification.identity in self._dropped:
            self._dropped.discard(event.notification.identity)
            event.prevent_default()
