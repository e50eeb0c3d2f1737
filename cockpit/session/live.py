"""A session held open by a running cockpit: appends events, follows the journal, keeps state.

Appends go to disk first and state is always re-read from the journal, so events written by
another process (a headless `cockpit gate`, a second pane) show up in the same order for all.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path

from cockpit.errors import CockpitError
from cockpit.files import RefusedFile
from cockpit.session import events as ev
from cockpit.session import saved_state
from cockpit.session.inside import confine_session_path
from cockpit.session.journal import Event, JournalProblem, JournalWriter, read_journal
from cockpit.session.saved_state import open_recent
from cockpit.session.state import SessionState
from cockpit.session.workspace import SessionRef


class LiveSession:
    def __init__(self, ref: SessionRef) -> None:
        self.ref = ref.confined()
        try:  # the latest of everything, from where the last reader stopped (saved_state.py)
            opened = open_recent(ref.journal, ref.workspace, include_tail=False)
        except RefusedFile:
            raise  # names the journal already
        except CockpitError as exc:
            raise CockpitError(f"{ref.journal}: {exc}") from exc
        self._fold = opened.fold
        self._offset = self._saved_at = opened.offset
        self._line = opened.line + 1
        self.problems: tuple[JournalProblem, ...] = opened.problems
        self._pending: list[Event] = []
        self._writer: JournalWriter | None = None
        self._inode = _inode(ref.journal)
        self._healed: str | None = None

    @property
    def state(self) -> SessionState:
        return self._fold.state

    @property
    def unsaved(self) -> int:
        """Events that could not be written yet (kept in memory and retried)."""
        return len(self._pending)

    def append(self, events: list[Event]) -> SessionState:
        """Write `events` durably, then fold everything new in the journal into the state.

        On a write error the events are kept and retried on the next append; the error is
        re-raised so the caller can say so. An ended session takes nothing but a cockpit's own
        opening and closing (`after_the_end`): the refusal is said, and nothing is written.
        """
        refused = after_the_end(self.state.is_open, events)
        if refused:
            raise CockpitError(f"session {self.state.id} has ended: it takes no {refused} (ctrl+n or "
                               "`cockpit new` starts the next session)")
        self._pending.extend(events)
        if self.vanished():  # appends would go to the deleted file: write the journal again first
            self._healed = self.recreate(time.time())
        if self._writer is None:
            self._writer = JournalWriter(self.ref.journal)
        while self._pending:
            self._writer.append(self._pending[0])
            self._pending.pop(0)
        self.refresh()
        return self.state

    def withdraw(self, event: Event) -> None:
        """Take back an event the journal refused (still waiting to be retried): a gate's start
        whose child was stopped for it must not land once space returns, a start with no end."""
        self._pending = [e for e in self._pending if e is not event]

    def refresh(self) -> bool:
        """Fold in whatever was appended since the last read; True if anything was."""
        try:
            if os.stat(self.ref.journal).st_size == self._offset:
                return False  # the TUI asks every second: a stat, not an open and a read
        except OSError:
            pass  # read_journal says what is wrong with the file
        read = read_journal(self.ref.journal, self._offset, self._line, include_tail=False)
        if read.end_offset == self._offset:
            return False
        self._offset = read.end_offset
        self._line = read.end_line + 1
        self.problems += tuple(p for p in read.problems if p.kind == "garbage")
        self._fold.extend(read.events)
        return True

    def vanished(self) -> bool:
        """Whether the journal this cockpit reads and appends to is gone from its path (deleted,
        or moved away): appends would go to a file no one will read."""
        return self._inode is not None and _inode(self.ref.journal) is None

    def heal(self, now: float) -> str | None:
        """Recreate a deleted journal (the UI asks every second); the line to tell the engineer,
        once, whether it was recreated now or by an append since the last ask."""
        if self.vanished():
            self._healed = self.recreate(now)
        told, self._healed = self._healed, None
        return told

    def recreate(self, now: float) -> str:
        """Write the journal again from this cockpit's state (session/rebuild.py); the line that
        says so. Another cockpit that recreated it first wins: its file is read instead."""
        from cockpit.session.rebuild import events_from_state

        if self._writer is not None:
            self._writer.close()
            self._writer = None
        state = self.state
        why = (f"journal.jsonl was deleted while a cockpit (pid {os.getpid()}) had the session open; "
               "written again from what it held")
        lines = "".join(json.dumps(e, ensure_ascii=False, separators=(",", ":")) + "\n"
                        for e in events_from_state(state, self.ref.workspace, now, why))
        try:
            fd = os.open(confine_session_path(self.ref.journal), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            try:
                os.write(fd, lines.encode("utf-8"))
                os.fsync(fd)
            finally:
                os.close(fd)
            told = (f"{self.ref.journal.name} was deleted: written again from this cockpit's state "
                    f"(phases, the latest {len(state.statuses)} statuses, {len(state.gate_runs)} gate runs); "
                    "older events are gone unless git has them (git checkout -- the journal)")
        except FileExistsError:
            told = f"{self.ref.journal.name} was deleted and another cockpit wrote it again: following it"
        except OSError as exc:
            raise CockpitError(f"{self.ref.journal}: was deleted and cannot be written again "
                               f"({exc.strerror}); the session is kept in memory, free space or fix "
                               "permissions") from exc
        opened = open_recent(self.ref.journal, self.ref.workspace, include_tail=False, save=False)
        self._fold, self._offset, self._line = opened.fold, opened.offset, opened.line + 1
        self._saved_at = self._offset
        self._inode = _inode(self.ref.journal)
        return told

    def write_status_file(self, line: str) -> None:
        """`status.txt`: the latest status line, replaced atomically (for tmux and scripts)."""
        atomic_write(confine_session_path(self.ref.status_txt), line + "\n")

    def close(self) -> None:
        if self._offset - self._saved_at >= saved_state.SAVE_AFTER:  # a long day since the last save
            saved_state.save(self.ref.journal, saved_state.Opened(self._fold, self._offset, self._line - 1,
                                                                  self.problems))
            self._saved_at = self._offset
        if self._writer is not None:
            self._writer.close()
            self._writer = None


def after_the_end(is_open: bool, events: list[Event]) -> str | None:
    """The type of the first of `events` that would land after the session's end (its journal's
    `session_ended`, or one earlier in `events`); None when all may be written. After the end a
    journal takes only the `app_*` events of a cockpit opening and closing it."""
    ended = not is_open
    for event in events:
        kind = str(event.get("type"))
        if ended and not kind.startswith("app_"):
            return kind
        ended = ended or kind == ev.SESSION_ENDED
    return None


def _inode(path: Path) -> int | None:
    try:
        return os.stat(path).st_ino
    except OSError:
        return None


def atomic_write(path: Path, text: str) -> None:
    """`text` into `path` whole or not at all: a temp file beside it, then a rename."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):  # a read-only folder refuses the unlink as well
            tmp.unlink(missing_ok=True)
        raise CockpitError(f"{path}: cannot write ({exc.strerror})") from exc
