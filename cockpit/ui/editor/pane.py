"""The editor pane: SESSION.md in a TextArea, autosaved; changes made on disk by someone else
(git checkout, vim, another cockpit) are noticed and the engineer chooses what wins. Nothing
typed is lost: keys typed while that question is open go on into the text, and whichever side's
text is replaced is kept beside SESSION.md (`.mine`, `.theirs`) and named to its owner."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from textual import events
from textual.binding import Binding
from textual.containers import Vertical
from textual.keys import key_to_character
from textual.message import Message
from textual.timer import Timer
from textual.widgets import TextArea

from cockpit.errors import CockpitError
from cockpit.printable import printable, unshown
from cockpit.session import logfile
from cockpit.ui.editor.markdown_marks import MarkdownMarks

SAVE_AFTER_IDLE_S = 1.5  # after the last keystroke ...
SAVE_AT_MOST_S = 1.5  # ... or this long after the first unsaved one: a kill -9 loses < 2 s
# characters; above this, plain text: highlighting reads ~0.1 s per MB when a log opens, and again
# after an edit that changes every line below it (an opened fence); a keystroke is < 1 ms
HIGHLIGHT_UP_TO = 1_000_000
BOM = "\ufeff"
"""A byte order mark at the start (Windows editors write one): not shown, and written back as it
was on every save, so it alone never makes a file read-only."""


class MarkdownArea(TextArea):
    """A TextArea that highlights markdown with cockpit.ui.editor.markdown_marks instead of tree-sitter
    (its grammar alone kept ~0.6 MiB resident in the idle TUI): the same names and ranges, so the
    theme colours it as before. An edit re-reads only the lines it changed."""

    def __init__(self, text: str = "", **kwargs: object) -> None:
        self.highlighting = True
        self._marks = MarkdownMarks()
        super().__init__(text, **kwargs)  # type: ignore[arg-type]

    def _on_key(self, event: events.Key) -> None:  # type: ignore[override]
        """Escape followed within the terminal's escape delay (~0.1 s) by a key reaches Textual as
        alt+key: it was Escape, then the key. The editor is left at once and the key goes on to
        the panels, as if the two had come apart (nothing in the editor uses alt+letter)."""
        then = after_escape(event.key, event.character)
        if then is None:
            return  # TextArea's own handler is next (Textual calls each class's, down the MRO)
        event.stop()
        event.prevent_default()
        self.post_message(SessionEditor.Left(then))

    def _on_paste(self, event: events.Paste) -> None:  # type: ignore[override]
        """A bracketed paste lands once, whole, its line breaks (CR, LF or CRLF) kept as lines and
        any escape sequence in it left out; the screen around never sees it again."""
        event.stop()
        event.prevent_default()
        if self.read_only:
            self.app.notify("SESSION.md is read-only here: the paste was not taken.", severity="warning",
                            markup=False)
            return
        text = printable(event.text.replace("\r\n", "\n").replace("\r", "\n"))
        if text and (result := self._replace_via_keyboard(text, *self.selection)):
            self.move_cursor(result.end_location)

    def load_markdown(self, text: str, highlight: bool) -> None:
        """Show `text`, highlighted or (a log too big to re-highlight at every key) plain."""
        self.highlighting, self._marks = highlight, MarkdownMarks()
        self.load_text(text)

    def _build_highlight_map(self) -> None:
        """Textual calls this after every edit (TextArea._build_highlight_map, Textual 8.2)."""
        self._line_cache.clear()
        self._highlights = self._marks.update(self.document.lines) if self.highlighting else defaultdict(list)


class SessionEditor(Vertical):
    DEFAULT_CSS = """
    SessionEditor { border: round $primary; height: 1fr; }
    SessionEditor > TextArea, SessionEditor > TextArea:focus { height: 1fr; border: none; padding: 0 1; }
    """
    BINDINGS = [
        Binding("ctrl+t", "insert_note", "Note", tooltip="Insert a timestamped note line"),
        Binding("ctrl+l", "insert_status", "Status line", tooltip="Insert the last status line"),
        Binding("ctrl+g", "insert_gate", "Gate result", tooltip="Insert the last gate result"),
        Binding("escape", "leave", "Leave editor"),
        # Tab stays in the editor (Textual's own Tab would move focus on, out of it).
        Binding("tab", "stay", "Editor", show=False),
    ]

    class ChangedOnDisk(Message):
        """SESSION.md was changed by someone else while we had it open."""

    class Left(Message):
        """The engineer pressed escape: focus goes back to the panels (and `then`, a key pressed
        right after the escape, goes to them)."""

        def __init__(self, then: events.Key | None = None) -> None:
            super().__init__()
            self.then = then

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.border_title = "SESSION.md"
        self.path: Path | None = None
        self.area = MarkdownArea("", soft_wrap=True, id="session-md")
        self._stamp: logfile.Stamp | None = None
        self._bom = ""
        self._first_unsaved: float | None = None
        self._last_edit = 0.0
        self._asked = False
        self._ended = False
        self._save_timer: Timer | None = None
        self.now: Callable[[], float] = time.monotonic  # the autosave clock (tests move it)

    def compose(self):  # type: ignore[no-untyped-def]
        yield self.area

    # Loading and saving ---------------------------------------------------------------------

    def open(self, path: Path) -> None:
        self.flush()
        self.path = path
        try:
            loaded = logfile.load(path)
        except CockpitError as exc:  # not a file (a FIFO), unreadable: said once, never asked again
            self.path = None
            self.area.read_only = True
            self.border_subtitle = "not shown"
            self.app.notify(str(exc), severity="error", markup=False)
            return
        self._show(loaded)
        if loaded.problem:
            self.app.notify(loaded.problem, severity="warning", markup=False, timeout=15)

    def _show(self, loaded: logfile.Loaded) -> None:
        """Show the file through the door: no escape reaches the screen, a hidden character shows
        as <U+…>. Where that is not the text on disk (a colour code, a form feed, a lone CR left
        out; a bidi override spelled out), a save from here would write what is shown, not what
        was there: the file is read-only, its border says why."""
        self._bom = BOM if loaded.text.startswith(BOM) else ""
        text = loaded.text.removeprefix(BOM)
        shown = printable(text)
        self.area.load_markdown(shown, highlight=len(text) <= HIGHLIGHT_UP_TO)
        self.area.move_cursor(self.area.document.end)  # a log grows at its end: type there
        why = unshown(text) if loaded.editable and shown != text else None
        self.area.read_only = not loaded.editable or why is not None
        self._stamp = loaded.stamp
        self._first_unsaved = None
        self._asked = False
        self._ended = False
        self.border_subtitle = (f"read-only: {loaded.read_only_why}" if not loaded.editable else
                                f"read-only: it holds {why}; remove them elsewhere to edit" if why else
                                "saved")

    def follow(self, session: bool, ended: bool) -> None:
        """The session's state: with none open there is no SESSION.md to type into (the editor
        takes no focus); once it has ended, SESSION.md is read-only here, what was typed saved
        first (its report was written from it: an edit after the end would not be in it)."""
        if self.area.disabled == session:
            self.area.disabled = not session
        if ended and not self._ended:
            if not self.flush() and self.dirty and self.path is not None:  # a question still open
                kept = keep_aside(self.path, "mine", self.area.text.encode())
                self.app.notify(f"The session ended with unsaved text in the editor: it is in {kept}",
                                severity="warning", markup=False, timeout=60)
            self._ended = True
            self.area.read_only = True
            self.border_subtitle = "read-only: the session has ended"

    @property
    def dirty(self) -> bool:
        return self._first_unsaved is not None

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        history = self.area.history
        if not history.undo_stack and not history.redo_stack:
            return  # load_text clears the history: this is a load (whenever it arrives), not an edit
        now = self.now()
        self._last_edit = now
        if self._first_unsaved is None:
            self._first_unsaved = now
            self.border_subtitle = "unsaved"
            self._arm(SAVE_AT_MOST_S)

    def _arm(self, delay: float) -> None:
        """One timer per unsaved stretch, none while idle: an idle editor never wakes up."""
        if self._save_timer is None:
            self._save_timer = self.set_timer(delay, self._on_save_timer)

    def _on_save_timer(self) -> None:
        self._save_timer = None
        self._autosave()
        if self.dirty and not self._asked:  # typing on, or the disk refused: try again
            self._arm(5.0 if self.border_subtitle == "NOT SAVED" else 0.5)

    def _autosave(self) -> None:
        if self._first_unsaved is None:
            return
        now = self.now()
        if now - self._last_edit >= SAVE_AFTER_IDLE_S or now - self._first_unsaved >= SAVE_AT_MOST_S:
            self.flush()

    def flush(self) -> bool:
        """Save now if there is anything unsaved (phase change, quit, SSH drop). True if saved."""
        if self.path is None or self._first_unsaved is None or self.area.read_only:
            return False
        if self._asked:
            return False  # waiting for the engineer to choose between disk and editor
        if logfile.changed_since(self.path, self._stamp):
            self._ask()
            return False
        try:
            self._stamp = logfile.save(self.path, self._bom + self.area.text)
        except CockpitError as exc:
            first = self.border_subtitle != "NOT SAVED"
            self.border_subtitle = "NOT SAVED"
            if first:  # once per failure, not at every retry: a copy where the disk still takes it
                copy = logfile.rescue(self.path, self._bom + self.area.text)
                where = f"; a copy is in {copy}" if copy else "; no folder took a copy either"
                self.app.notify(str(exc) + where, severity="error", markup=False, timeout=30)
            return False
        self._first_unsaved = None
        self.border_subtitle = f"saved {time.strftime('%H:%M:%S')}"
        return True

    def check_disk(self) -> None:
        """Called every second: someone else wrote the file?"""
        if self.path is not None and not self._asked and logfile.changed_since(self.path, self._stamp):
            self._ask()

    def _ask(self) -> None:
        self._asked = True
        self.post_message(self.ChangedOnDisk())

    def take_disk(self) -> Path | None:
        """Load the file from disk. The editor's text is kept first when the disk's would lose
        any of it: unsaved text in SESSION.md.mine; saved text that another cockpit replaced is
        named where that cockpit kept it (its SESSION.md.theirs), else kept in .mine too.
        Returns where it is; None when the disk's version holds every line of it."""
        assert self.path is not None
        ours, loaded = self.area.text, logfile.load(self.path)
        kept = None
        if self.dirty:
            kept = keep_aside(self.path, "mine", ours.encode())
        elif drops_lines(ours, printable(loaded.text.removeprefix(BOM))):
            kept = kept_by_them(self.path, ours) or keep_aside(self.path, "mine", ours.encode())
        self._show(loaded)
        return kept

    def keep_mine(self) -> Path:
        """Write the editor's text over the file on disk, the disk's version kept first in
        SESSION.md.theirs (returned), byte for byte: neither side is lost. A disk version that
        cannot be kept whole (over logfile.KEPT_UP_TO, a FIFO) is not written over: CockpitError,
        and the question comes back at the next look at the disk."""
        assert self.path is not None
        try:
            data, stamp = logfile.disk_version(self.path)
        except CockpitError as exc:
            self._asked = False
            raise CockpitError(f"{exc} — so your text was not written over it (it is still in the "
                               f"editor): take the disk's version (yours goes to {self.path.name}.mine) "
                               "or move that file away") from exc
        theirs = keep_aside(self.path, "theirs", data)
        self._asked = False
        self._stamp = stamp
        if self._first_unsaved is None:
            self._first_unsaved = self.now()
        self.flush()
        return theirs

    # Inserting at the cursor ----------------------------------------------------------------

    def insert(self, text: str) -> None:
        if self.area.read_only:
            self.app.notify(f"SESSION.md is {self.border_subtitle}.", severity="warning", markup=False)
            return
        self.area.insert(printable(text))  # a status or a gate's summary: text from the journal
        self.area.focus()

    def type_key(self, key: str, character: str | None) -> bool:
        """A key typed while a dialog covers the editor, applied as the editor would apply it
        (letters, enter, backspace); False when it is not typing."""
        if self.area.read_only:
            return False
        if key == "enter":
            self.area.insert("\n")
        elif key == "backspace":
            self.area.action_delete_left()
        elif character is not None and len(character) == 1 and character.isprintable():
            self.area.insert(character)
        else:
            return False
        return True

    def action_insert_note(self) -> None:
        phase = getattr(self.app, "current_phase_label", lambda: "")()
        self.insert(f"\n- {time.strftime('%H:%M')} {phase}: ")

    def action_insert_status(self) -> None:
        line = getattr(self.app, "last_status_text", lambda: None)()
        if line:
            self.insert(f"\n> {line}\n")
        else:
            self.app.notify("No status line yet.", severity="warning")

    def action_insert_gate(self) -> None:
        table = getattr(self.app, "last_gate_markdown", lambda: None)()
        if table:
            self.insert(f"\n{table}\n")
        else:
            self.app.notify("No gate has finished in this session yet.", severity="warning")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The inserting keys are offered only where SESSION.md takes text."""
        return not (action.startswith("insert_") and self.area.read_only)

    def action_leave(self) -> None:
        self.post_message(self.Left())

    def action_stay(self) -> None:
        """Tab in the editor: already here."""


def after_escape(key: str, character: str | None) -> events.Key | None:
    """The key that followed an Escape, when Textual read the two as one alt+key; None otherwise."""
    if not key.startswith("alt+"):
        return None
    rest = key.removeprefix("alt+")
    if rest.startswith("shift+") and len(rest) == 7 and rest[-1].isalpha():
        rest = rest[-1].upper()
    character = character or key_to_character(rest)
    if character is None or len(character) != 1 or not character.isprintable():
        return None  # alt with a key that types nothing (an arrow): not an Escape's doing
    return events.Key(rest, character)


def drops_lines(ours: str, theirs: str) -> bool:
    """True when a non-blank line of `ours` is nowhere in `theirs` (an append keeps them all)."""
    kept = set(theirs.splitlines())
    return any(line.strip() and line not in kept for line in ours.splitlines())


def keep_aside(path: Path, side: str, data: bytes) -> Path:
    """Write `data` beside `path` as `<name>.<side>`, or `.<side>.2`, `.3`... when that name
    holds other bytes already: a second conflict never overwrites what the first one kept."""
    for n in range(1, 100):
        target = path.with_name(f"{path.name}.{side}" + (f".{n}" if n > 1 else ""))
        try:
            held = logfile.read_aside(target)
        except FileNotFoundError:
            logfile.save_bytes(target, data)
            return target
        except OSError:
            continue  # not a file we can read (a folder of that name): the next name
        if held == data:
            return target
    raise CockpitError(f"{path.parent}: 99 {path.name}.{side} files already; move the old ones "
                       "away and choose again")


def kept_by_them(path: Path, text: str) -> Path | None:
    """The `.theirs` file where another cockpit kept `text` when it wrote its own over it."""
    for theirs in sorted(path.parent.glob(f"{path.name}.theirs*")):
        try:
            held = logfile.read_aside(theirs).decode("utf-8", errors="replace")
            if printable(held.removeprefix(BOM)) == text:
                return theirs
        except OSError:
            continue
    return None
