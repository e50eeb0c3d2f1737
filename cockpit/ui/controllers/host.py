"""What the app's helpers (gate board, keep/revert, GPU feed) may use of the app: a Protocol,
so they depend on this module and never on the app itself (the arrows only point down)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from textual.message import Message
from textual.notifications import SeverityLevel

from cockpit.clock import Clock
from cockpit.config import Config
from cockpit.session.journal import Event
from cockpit.session.live import LiveSession
from cockpit.session.state import SessionState
from cockpit.session.workspace import SessionRef, Workspace

if TYPE_CHECKING:
    from cockpit.patterns.library import Pattern
    from cockpit.ui.widgets.gate_panel import GateDetail, GatePanel
    from cockpit.ui.widgets.gpu_panel import GpuPanel


class CockpitHost(Protocol):
    clock: Clock
    config: Config
    workspace: Workspace
    live: LiveSession | None
    reading: threading.Thread | None
    """The thread reading a long journal, while it does (ui/controllers/session_open.py)."""
    gate_panel: GatePanel
    gate_detail: GateDetail
    gpu_panel: GpuPanel

    @property
    def push_screen(self) -> Callable[..., Any]:  # App.push_screen, with its overloads
        ...

    @property
    def patterns(self) -> tuple[Pattern, ...]: ...

    @property
    def is_running(self) -> bool: ...

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = True, about: str | None = None) -> None: ...

    def drop_toasts(self, *about: str) -> None:
        """Take down the toasts about states that are over (ui/shims/toasts.py)."""
        ...

    def call_from_thread(self, callback: Callable[..., object], *args: Any, **kwargs: Any) -> Any: ...

    def post_message(self, message: Message) -> bool:
        """Thread-safe (Textual's): a gate run's reports reach the app this way (gate_messages.py)."""
        ...

    def append(self, events: list[Event]) -> bool:
        """Journal `events`; False (and a notice) when that failed."""
        ...

    def intent(self, make: Callable[[SessionState, float], list[Event]]) -> bool:
        """Apply a session intent (timer move, decision ...) and redraw."""
        ...

    def redraw(self) -> None: ...

    def follow_state(self) -> None:
        """The keys on offer and the editor follow a change of state (a gate started or ended)."""
        ...

    def current_phase_text(self) -> str: ...

    def status_line(self, doing: str | None = None) -> str: ...

    def post_status(self, auto: bool, doing: str | None = None) -> None: ...

    def open_session(self, ref: SessionRef) -> None: ...

    def exit(self, result: Any = None, return_code: int = 0, message: Any = None) -> None: ...

    def run_worker(self, work: Any, *, thread: bool = False, group: str = "default",
                   exclusive: bool = False, exit_on_error: bool = True, name: str | None = "") -> Any: ...
