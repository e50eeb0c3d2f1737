"""A session held open by a running cockpit: appends events, follows the journal, keeps state.

Appends go to disk first and state is always re-read from the journal, so events written by
another process (a headless `cockpit gate`, a second pane) show up in the same order for all.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from cockpit.errors import CockpitError
from cockpit.session import saved_state
from cockpit.session.journal import Event, JournalProblem, JournalWriter, read_journal
from cockpit.session.saved_state import open_recent
from cockpit.session.state import SessionState
from cockpit.session.workspace import SessionRef


class LiveSession:
    def __init__(self, ref: SessionRef) -> None:
        self.ref = ref
        try:  # the latest of everything, from where the last reader stopped (saved_state.py)
            opened = open_recent(ref.journal, ref.workspace, include_tail=False)
        except CockpitError as exc:
            raise CockpitError(f"{ref.journal}: {exc}") from exc
        self._fold = opened.fold
        self._offset = self._saved_at = opened.offset
        self._line = opened.line + 1
        self.problems: tuple[JournalProblem, ...] = opened.problems
        self._pending: list[Event] = []
        self._writer: JournalWriter | None = None

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
        re-raised so the caller can say so.
        """
        self._pending.extend(events)
        if self._writer is None:
            self._writer = JournalWriter(self.ref.journal)
        while self._pending:
            self._writer.append(self._pending[0])
            self._pending.pop(0)
        self.refresh()
        return self.state

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

    def write_status_file(self, line: str) -> None:
        """`status.txt`: the latest status line, replaced atomically (for tmux and scripts)."""
        atomic_write(self.ref.status_txt, line + "\n")

    def close(self) -> None:
        if self._offset - self._saved_at >= saved_state.SAVE_AFTER:  # a long day since the last save
            saved_state.save(self.ref.journal, saved_state.Opened(self._fold, self._offset, self._line - 1,
                                                                  self.problems))
            self._saved_at = self._offset
        if self._writer is not None:
            self._writer.close()
            self._writer = None


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
