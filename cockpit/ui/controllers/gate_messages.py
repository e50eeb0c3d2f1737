"""A gate run's reports, from its threads to the screen: one Textual message per kind (new output,
a silence, the end with its verdict and typed result), posted by the run's listener
(`MessagePosting`) and handled on the UI thread by the app (`GateMessageHandlers`), which hands
each to the gate board: the run records it there (the journal is written on the UI thread), then
the board acts on it. The gates' Python, found in a thread when it was not known, comes back the
same way."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from textual.message import Message

if TYPE_CHECKING:
    from cockpit.config.gates import Gates
    from cockpit.errors import CockpitError
    from cockpit.gates.gate import Verdict
    from cockpit.gates.interpreter import Interpreter
    from cockpit.gates.log_follow import GateOutput
    from cockpit.gates.run import GateRun


class GateOutputArrived(Message):
    """New lines of a run's log (a few times a second; in a flood only the latest)."""

    def __init__(self, run: GateRun, output: GateOutput) -> None:
        super().__init__()
        self.run = run
        self.output = output


class GateStalled(Message):
    """A run printed nothing for `silent_s`."""

    def __init__(self, run: GateRun, silent_s: float) -> None:
        super().__init__()
        self.run = run
        self.silent_s = silent_s


class GateFinished(Message):
    """A run ended: its verdict, judged on the run's thread, with the gate's typed result in
    `verdict.result` (a `BenchResult` for a bench), not yet recorded in the journal."""

    def __init__(self, run: GateRun, verdict: Verdict) -> None:
        super().__init__()
        self.run = run
        self.verdict = verdict


class GatesPythonFound(Message):
    """The lookup of the gates' Python for `gates` answered: the interpreter, or why none runs."""

    def __init__(self, gates: Gates, found: Interpreter | CockpitError) -> None:
        super().__init__()
        self.gates = gates
        self.found = found


class Poster(Protocol):
    def post_message(self, message: Message) -> bool: ...


class MessagePosting:
    """The UI's `RunListener`: each report becomes a message to `app`, posted from the run's thread
    (Textual's `post_message` is thread-safe; once the app has stopped it drops the message)."""

    def __init__(self, app: Poster) -> None:
        self.app = app

    def gate_output(self, run: GateRun, output: GateOutput) -> None:
        self.app.post_message(GateOutputArrived(run, output))

    def gate_stalled(self, run: GateRun, silent_s: float) -> None:
        self.app.post_message(GateStalled(run, silent_s))

    def gate_finished(self, run: GateRun, verdict: Verdict) -> None:
        self.app.post_message(GateFinished(run, verdict))


class GateReports(Protocol):
    """What the handlers hand each message to: the gate board, on the UI thread."""

    def output_arrived(self, run: GateRun, output: GateOutput) -> None: ...

    def stalled(self, run: GateRun, silent_s: float) -> None: ...

    def finished(self, run: GateRun, verdict: Verdict) -> None: ...

    def python_found(self, gates: Gates, found: Interpreter | CockpitError) -> None: ...


class ReportsHost(Protocol):
    @property
    def gates(self) -> GateReports: ...


class GateMessageHandlers:
    """A mixin of the app: Textual finds these handlers by the messages' names."""

    def on_gate_output_arrived(self: ReportsHost, message: GateOutputArrived) -> None:
        self.gates.output_arrived(message.run, message.output)

    def on_gate_stalled(self: ReportsHost, message: GateStalled) -> None:
        self.gates.stalled(message.run, message.silent_s)

    def on_gate_finished(self: ReportsHost, message: GateFinished) -> None:
        self.gates.finished(message.run, message.verdict)

    def on_gates_python_found(self: ReportsHost, message: GatesPythonFound) -> None:
        self.gates.python_found(message.gates, message.found)
