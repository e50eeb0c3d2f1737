"""The tune panel fed from the session: hidden until the journal holds a search (`cockpit tune`
in another pane, or a resumed one), then its progress each second, and the status line's
activity while it runs: "tuning: 37/100, best 1.04× torch.softmax"."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cockpit.session.state import SessionState
from cockpit.session.status import Activity
from cockpit.ui.widgets.tune_panel import TunePanel

if TYPE_CHECKING:
    from cockpit.tune.progress import TuneProgress


class TuneFeed:
    def __init__(self, panel: TunePanel) -> None:
        self.panel = panel
        self.progress: TuneProgress | None = None
        self._folded = 0
        self._now = 0.0

    def show(self, state: SessionState, now: float) -> None:
        self._now = now
        events = state.tune_events
        if len(events) != self._folded:  # fold again only when a trial landed
            from cockpit.tune.progress import tune_progress  # a session that never tunes never loads it

            self._folded = len(events)
            self.progress = tune_progress(events)
        self.panel.display = self.progress is not None
        if self.progress is not None and self.panel.is_mounted:
            self.panel.show(self.progress, now)

    def activity(self) -> Activity | None:
        if self.progress is None:
            return None
        from cockpit.tune.progress import tune_activity

        return tune_activity(self.progress, self._now)
