"""Small modal dialogs: new session, manual status, go to phase, confirm, SESSION.md changed on
disk, trust a workspace. Text they show from a session (a status, a phase, a summary) passes the
door, never markup."""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList, Select
from textual.widgets.input import Selection
from textual.widgets.option_list import Option

from cockpit.printable import printable

DIALOG_CSS = """
{name} {{ align: center middle; }}
{name} > Vertical {{
    width: 72; height: auto; padding: 1 2; border: thick $primary; background: $surface;
}}
{name} Label.hint {{ color: $text-muted; margin-top: 1; }}
"""


def suggested_objective(workload_source: str) -> str:
    """The first session's objective, pre-filled so a first run is one Enter away from a session:
    about the workload cockpit.toml names (its module's or folder's name), never the example's."""
    name = workload_source.removeprefix("gpumode:").rstrip("/").rsplit("/", 1)[-1].removesuffix(".py")
    kernel = f"the {name} kernel" if name else "my kernel"
    return f"Measure {kernel} against its baseline and find its bottleneck"


class PrefilledInput(Input):
    """An input holding a suggestion, shown from its start: on focus all of it is selected with
    the cursor at home, so typing replaces it, → or End keeps it to edit, and Enter takes it as it
    is. (Textual's own select-on-focus leaves the cursor at the end, the view scrolled there: a
    long suggestion showed only its last words.)"""

    def __init__(self, value: str, **kwargs: object) -> None:
        super().__init__(value, select_on_focus=False, **kwargs)  # type: ignore[arg-type]

    def on_focus(self, event: events.Focus) -> None:
        if not event.from_app_focus:  # back from another window: the cursor stays where it was
            self.selection = Selection(len(self.value), 0)


class NewSessionDialog(ModalScreen[tuple[str, str] | None]):
    """Ask for the objective and template of a new session."""

    DEFAULT_CSS = DIALOG_CSS.format(name="NewSessionDialog")
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, templates: list[str], default: str, objective: str = "",
                 no_workload: str = "") -> None:
        super().__init__()
        self._templates = templates
        self._default = default
        self._objective = printable(objective or suggested_objective(""))  # a name from cockpit.toml
        self._no_workload = no_workload
        """Said on the first screen when the workspace names no workload (what `cockpit init` writes)."""

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("[b]New session[/b] — what is this session for?")
            # Pre-filled, so a first run is one Enter away from a session (edit it, or keep it).
            yield PrefilledInput(self._objective, placeholder="e.g. vectorize K loads in the QK^T loop",
                                 id="objective")
            yield Select([(Text(printable(t)), t) for t in self._templates], value=self._default,
                         allow_blank=False, id="template")
            yield Label("enter: start   typing replaces it, → edits it   escape: cancel", classes="hint")
            if self._no_workload:
                said = Label(self._no_workload, classes="hint", markup=False, id="no-workload")
                said.styles.width = "100%"  # wrapped at the dialog's edge, not cut
                yield said

    def on_input_submitted(self, event: Input.Submitted) -> None:
        objective = event.value.strip()
        if not objective:
            self.notify("Say what the session is for first.", severity="warning")
            return
        template = self.query_one("#template", Select).value
        self.dismiss((objective, str(template)))

    def action_cancel(self) -> None:
        self.dismiss(None)


class StatusDialog(ModalScreen[str | None]):
    """Ask what the engineer is doing now, for a manual status line."""

    DEFAULT_CSS = DIALOG_CSS.format(name="StatusDialog")
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, preview: str) -> None:
        super().__init__()
        self._preview = preview

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("[b]Post a status[/b] — what are you doing now?")
            yield Input(placeholder="e.g. ncu on softmax_fwd, waiting for the report", id="doing")
            yield Label(printable(self._preview), classes="hint", markup=False)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip())

    def action_cancel(self) -> None:
        self.dismiss(None)


class PhasePickerDialog(ModalScreen[str | None]):
    """Pick the phase to go to."""

    DEFAULT_CSS = DIALOG_CSS.format(name="PhasePickerDialog")
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, phases: list[str], current: str | None) -> None:
        super().__init__()
        self._phases = phases
        self._current = current

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("[b]Go to phase[/b]")
            yield OptionList(*[
                Option(Text(printable(name) + ("  (current)" if name == self._current else "")), id=name,
                       disabled=name == self._current)
                for name in self._phases
            ])

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)


class ConfirmDialog(ModalScreen[bool]):
    # the question wraps (a session's id alone can fill the dialog's width)
    DEFAULT_CSS = DIALOG_CSS.format(name="ConfirmDialog") + "ConfirmDialog Label { width: 100%; }\n"
    BINDINGS = [
        Binding("y", "answer(True)", "Yes", tooltip="Only y confirms"),
        Binding("n,escape", "answer(False)", "No"),
    ]

    def __init__(self, question: str) -> None:
        super().__init__()
        self._question = question

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(printable(self._question), markup=False)
            yield Label("y: yes   n / escape: no", classes="hint")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class DiskChangedDialog(ModalScreen[bool]):
    """SESSION.md changed on disk while the editor holds unsaved text. Answered with control keys
    only: a sentence typed on into it (a word with a y or an n) answers nothing and goes on into
    the editor behind it (`typed`), and neither answer discards a side (the other is kept beside
    it)."""

    DEFAULT_CSS = DIALOG_CSS.format(name="DiskChangedDialog")
    BINDINGS = [
        Binding("ctrl+d", "answer(True)", "Load the disk's",
                tooltip="Load the version on disk; yours is kept in SESSION.md.mine"),
        Binding("ctrl+k,escape", "answer(False)", "Keep yours",
                tooltip="Keep yours; the disk's is kept in SESSION.md.theirs"),
    ]

    def __init__(self, typed: Callable[[str, str | None], bool]) -> None:
        super().__init__()
        self._typed = typed

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("SESSION.md was changed on disk (another cockpit, git checkout, an editor) while "
                        "you have unsaved text here.\n\nctrl+d: load the version on disk; yours is kept "
                        "in SESSION.md.mine.\nctrl+k / escape: keep yours; the disk's is kept in "
                        "SESSION.md.theirs.", markup=False)
            yield Label("typing goes on into SESSION.md behind this question", classes="hint")

    def on_key(self, event: events.Key) -> None:
        if self._typed(event.key, event.character):  # not one key typed meanwhile is lost
            event.stop()
            event.prevent_default()

    def action_answer(self, take_disk: bool) -> None:
        self.dismiss(take_disk)


class TrustDialog(ModalScreen[bool]):
    """Before anything a workspace names first runs: what its cockpit.toml would make the gates run,
    line by line as `cockpit trust show` says it (values quoted: a control character shows as its
    escape), asked once. Only y trusts it; n or escape runs nothing."""

    DEFAULT_CSS = DIALOG_CSS.format(name="TrustDialog") + (
        "TrustDialog > Vertical { width: 100; max-width: 96%; }\n"
        "TrustDialog Label { width: 100%; }\n"
        "TrustDialog VerticalScroll { height: auto; max-height: 14; margin-top: 1; }\n")
    BINDINGS = [
        Binding("y", "answer(True)", "Trust it", tooltip="Only y trusts it"),
        Binding("n,escape", "answer(False)", "Run nothing"),
    ]

    def __init__(self, heading: str, lines: list[str], hint: str) -> None:
        super().__init__()
        self._heading, self._lines, self._hint = heading, lines, hint

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(printable(self._heading), markup=False)
            with VerticalScroll():
                yield Label(printable("\n".join(self._lines)), markup=False, id="trust-lines")
            yield Label(printable(self._hint), classes="hint", markup=False)

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
