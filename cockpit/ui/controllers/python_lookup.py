"""The gates' Python for the gate board: known at once, or found in a thread.

Finding it asks each interpreter whether torch imports (a child each, 1-3 s): on the UI thread that
froze the keys. The app's start-up warm-up finds it in a thread for a trusted workspace; a gate
that needs it asks here first. Known (kept in this process or in the user's cache): the gate
starts at once. Not known (an untrusted workspace just trusted, a cold cache): one lookup goes
to a thread, the gate keeps its place at the queue's head, and the answer comes back to the app
as a `GatesPythonFound` message, which starts the queue again."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from cockpit.errors import CockpitError
from cockpit.ui.controllers.gate_messages import GatesPythonFound
from cockpit.ui.controllers.host import CockpitHost

if TYPE_CHECKING:
    from cockpit.config.gates import Gates
    from cockpit.gates.interpreter import Interpreter


class PythonLookup:
    def __init__(self, app: CockpitHost) -> None:
        self.app = app
        self._looking: threading.Thread | None = None
        """The lookup under way, one at a time."""
        self._answer: tuple[Gates, Interpreter | CockpitError] | None = None
        """What it found, for the `[gates]` it was asked for: taken by the next gate that starts."""

    def known_now(self) -> Interpreter | None:
        """The interpreter, when it is known without asking any (or the lookup just answered);
        else None, and it is looked up in a thread. CockpitError: the one `[gates] python` names
        does not run."""
        from cockpit.gates.interpreter import known_python

        gates = self.app.config.gates
        answer, self._answer = self._answer, None
        if answer is not None and answer[0] == gates:
            if isinstance(answer[1], CockpitError):
                raise answer[1]
            return answer[1]
        found = known_python(gates, self.app.workspace.root)
        if found is None and self._looking is None:
            self._looking = threading.Thread(target=self._look_up, args=(gates,), name="gates-python",
                                             daemon=True)
            self._looking.start()
        return found

    def answered(self, gates: Gates, found: Interpreter | CockpitError) -> None:
        """The lookup's answer, on the UI thread (the app's `GatesPythonFound` handler)."""
        self._looking, self._answer = None, (gates, found)

    def _look_up(self, gates: Gates) -> None:
        from cockpit.gates.interpreter import gates_python

        found: Interpreter | CockpitError = CockpitError("the gates' Python could not be found: "
                                                         "the lookup failed (its error is on stderr)")
        try:
            found = gates_python(gates, self.app.workspace.root)
        except CockpitError as exc:  # [gates] python names one that does not run
            found = exc
        finally:  # posted after the app stopped: dropped
            self.app.post_message(GatesPythonFound(gates, found))
