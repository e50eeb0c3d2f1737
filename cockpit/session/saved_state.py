"""A journal's fold saved where the next reader finds it, so it reads only what was appended since.

`cockpit status` runs every 15 s in tmux's status bar and the TUI opens on sessions that ran for
a week; folding 100,000 events each time took 5.5 s. The TUI and `status` need only the latest
of everything (a bounded fold: `RECENT` statuses, notes and gate runs, the latest tune), so that
fold is saved, with the byte offset it reached, in the user's cache:

    $XDG_CACHE_HOME/cockpit/state/<hash of the journal's path>/state.json

— never in the session folder (a committed session stays as it was; looking is read-only). The
journal is append-only, so a saved fold is good while the bytes it read are still there: it is
used only when the journal's first and last 4 KB before the offset and 16 samples between hash
as they did, else the journal is read whole again. A result too big for a journal line that an
old journal holds inline is kept beside the state as its own file (session/results.py's
format). A cache that cannot be written is skipped: the next reader reads the journal whole.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from cockpit.config import PhaseSpec
from cockpit.files import open_file
from cockpit.session.journal import Event, JournalProblem, read_journal
from cockpit.session.results import FORMAT, INLINE_MAX
from cockpit.session.state import (
    Fold,
    GateRunRecord,
    Pause,
    PhaseRun,
    SessionFold,
    SessionState,
    StatusEntry,
)
from cockpit.user_cache import user_cache

try:  # BLAKE2 without `hashlib`, whose import maps OpenSSL's libcrypto: ~0.55 MiB in every TUI
    from _blake2 import blake2b
except ImportError:  # an interpreter built without it
    from hashlib import blake2b

RECENT = 200
"""Statuses and notes a bounded fold keeps: more than any panel shows."""
RECENT_GATE_RUNS = 32
"""Gate runs a saved fold keeps (the TUI shows each gate's latest and the bench trend)."""
SAVE_AFTER = 1 << 20
"""Bytes of journal read past the saved state that make it worth saving again."""
VERSION = 2
"""2: statuses, notes and gate summaries are kept cut (session/bounds.py's MAX_LINE_CHARS); a fold
saved whole by version 1 is read past."""
SAMPLE = 4096


def cache_dir(journal: Path) -> Path:
    return user_cache("state", journal)


def fingerprint(journal: Path, offset: int) -> str:
    """What the first `offset` bytes of the journal look like, cheaply: its first and last 4 KB
    and 16 samples of 64 bytes in between."""
    digest = blake2b(str(offset).encode(), digest_size=32)
    with open_file(journal) as f:
        digest.update(f.read(min(offset, SAMPLE)))
        for i in range(1, 17):
            f.seek(offset * i // 17)
            digest.update(f.read(min(64, max(0, offset - offset * i // 17))))
        f.seek(max(0, offset - SAMPLE))
        digest.update(f.read(min(offset, SAMPLE)))
    return digest.hexdigest()


class Opened:
    """A bounded fold of a journal and where it stopped reading."""

    def __init__(self, fold: SessionFold, offset: int, line: int, problems: tuple[JournalProblem, ...]):
        self.fold, self.offset, self.line, self.problems = fold, offset, line, problems


def open_recent(journal: Path, workspace: Path, include_tail: bool = True, save: bool = True) -> Opened:
    """The bounded fold of the whole journal: a saved one plus what follows it, or a fresh read;
    saved again when it read more than SAVE_AFTER bytes. Raises CockpitError as `SessionFold`
    does for a journal that is not a session."""
    saved = _load(journal, workspace)
    fold: SessionFold | None = saved.fold if saved else None
    offset, line = (saved.offset, saved.line) if saved else (0, 0)
    problems = saved.problems if saved else ()
    pending: list[Event] = []

    def take(event: Event) -> None:
        nonlocal fold
        if fold is None:
            pending.append(event)
            fold = SessionFold(pending, workspace, RECENT)
        else:
            fold.apply(event)

    read = read_journal(journal, offset, line + 1, include_tail=include_tail, on_event=take)
    if fold is None:
        SessionFold((), workspace, RECENT)  # raises: the journal holds no events
    assert fold is not None
    fold.freeze()
    opened = Opened(fold, read.end_offset, read.end_line, problems + read.problems)
    if save and read.end_offset - offset >= SAVE_AFTER:
        _save(journal, opened)
    return opened


def save(journal: Path, opened: Opened) -> None:
    """Keep `opened` for the next reader (a TUI closing after a long day of appends)."""
    _save(journal, opened)


def _save(journal: Path, opened: Opened) -> None:
    folder = cache_dir(journal)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        data = dump(opened.fold._fold, folder)
        document = {"version": VERSION, "journal": str(journal.resolve()), "offset": opened.offset,
                    "line": opened.line, "fingerprint": fingerprint(journal, opened.offset),
                    "problems": [asdict(p) for p in opened.problems[-100:]], "fold": data}
        tmp = folder / f".state.{os.getpid()}.tmp"
        tmp.write_text(json.dumps(document, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
        os.replace(tmp, folder / "state.json")
    except (OSError, ValueError):
        pass  # no cache: the next reader reads the journal whole, which is only slower


def _load(journal: Path, workspace: Path) -> Opened | None:
    """The saved fold of `journal` if it can be trusted; one process asks once per state of the
    files (`cockpit status` asks whether the session ended, then for its state)."""
    try:
        st = journal.stat()
        saved = (cache_dir(journal) / "state.json").stat()
        key = (str(journal), st.st_size, st.st_mtime_ns, saved.st_mtime_ns)
    except OSError:
        return None
    if key not in _LOADED:
        _LOADED.clear()
        _LOADED[key] = _load_fresh(journal)
    found = _LOADED[key]
    if found is None:
        return None
    data, offset, line, problems = found
    try:
        return Opened(SessionFold.resume(load(data, workspace)), offset, line, problems)
    except (ValueError, TypeError, KeyError, AttributeError):
        return None


_LOADED: dict[tuple[str, int, int, int], tuple[Any, int, int, tuple[JournalProblem, ...]] | None] = {}


def _load_fresh(journal: Path) -> tuple[Any, int, int, tuple[JournalProblem, ...]] | None:
    """The saved fold's data, the offset and line it read to, and its problems; None when there
    is none to trust."""
    try:
        folder = cache_dir(journal)
        document = json.loads((folder / "state.json").read_bytes())  # ours: no hostile nesting
        if (not isinstance(document, dict) or document.get("version") != VERSION
                or document.get("journal") != str(journal.resolve())):
            return None
        offset, line = int(document["offset"]), int(document["line"])
        if journal.stat().st_size < offset or fingerprint(journal, offset) != document["fingerprint"]:
            return None
        problems = tuple(JournalProblem(int(p["line"]), p["kind"], str(p["excerpt"]), str(p.get("why", "")))
                         for p in document.get("problems", []))
    except (OSError, ValueError, TypeError, KeyError, AttributeError, RecursionError):
        return None  # a damaged, stale or foreign cache is read past, never trusted
    return document["fold"], offset, line, problems


def dump(fold: Fold, folder: Path) -> dict[str, Any]:
    runs = []
    for run in fold.gate_runs[-RECENT_GATE_RUNS:]:
        record = asdict(run)
        inline = json.dumps(run.result_inline, separators=(",", ":"))
        if len(inline) > INLINE_MAX and not run.result_file:  # an old journal's inline result
            path = folder / f"{run.run_id}.verdict.json"
            path.write_text(json.dumps({"format": FORMAT, "run_id": run.run_id, "gate": run.gate,
                                        "result": run.result_inline}), encoding="utf-8")
            record["result_inline"], record["result_file"] = {}, str(path)
        runs.append(record)
    b = fold.base
    return {
        "recent": fold.recent,
        "base": {"id": b.id, "objective": b.objective, "template": b.template, "created_t": b.created_t,
                 "gpu_cost_per_hour": b.gpu_cost_per_hour, "phases": [asdict(p) for p in b.phases],
                 "refused": list(b.refused)},
        "extra_phases": [asdict(p) for p in fold.extra_phases],
        "runs": [asdict(r) for r in fold.runs], "pauses": [asdict(p) for p in fold.pauses],
        "statuses": [asdict(s) for s in fold.statuses[-RECENT:]],
        "notes": [asdict(s) for s in fold.notes[-RECENT:]], "gate_runs": runs[-RECENT_GATE_RUNS:],
        "overrun": sorted(fold.overrun), "applied": fold.applied, "tune": fold.tune,
        "ended_t": fold.ended_t, "attached_pid": fold.attached_pid, "last_t": fold.last_t,
        "count": fold.count, "status_count": fold.status_count, "note_count": fold.note_count,
        "gate_run_count": fold.gate_run_count,
    }


def load(data: dict[str, Any], workspace: Path) -> Fold:
    """The fold `dump` wrote, ready to take the events after it."""
    b = data["base"]
    first = {"type": "session_started", "t": float(b["created_t"]), "id": str(b["id"]),
             "objective": str(b["objective"]), "template": str(b["template"]),
             "gpu_cost_per_hour": float(b["gpu_cost_per_hour"]), "phases": b["phases"]}
    fold = Fold(first, workspace, data["recent"])
    # as the first read showed them and said why (an objective it cut is not cut again)
    fold.base = replace(fold.base, objective=str(b["objective"]),
                        refused=tuple(str(r) for r in b.get("refused", ())) or fold.base.refused)
    _load_lists(fold, data)
    fold.ended_t, fold.attached_pid = data["ended_t"], data["attached_pid"]
    fold.last_t, fold.count = float(data["last_t"]), int(data["count"])
    fold.status_count, fold.note_count = int(data["status_count"]), int(data["note_count"])
    fold.gate_run_count = int(data["gate_run_count"])
    return fold


def _load_lists(fold: Fold, data: dict[str, Any]) -> None:
    """The fold's lists as saved: phases, visits, pauses, what was said, gate runs, patterns, tune."""
    fold.extra_phases = [PhaseSpec(str(p["name"]), float(p["budget_s"])) for p in data["extra_phases"]]
    fold.runs = [PhaseRun(**r) for r in data["runs"]]
    fold.pauses = [Pause(**p) for p in data["pauses"]]
    fold.statuses = [StatusEntry(**s) for s in data["statuses"]]
    fold.notes = [StatusEntry(**s) for s in data["notes"]]
    fold.gate_runs = [GateRunRecord(**r) for r in data["gate_runs"]]
    fold.gate_index = {r.run_id: i for i, r in enumerate(fold.gate_runs)}
    fold.overrun = {int(i) for i in data["overrun"]}
    fold.applied = [int(i) for i in data["applied"]]
    fold.tune = list(data["tune"])


def recent_state(journal: Path, workspace: Path) -> SessionState:
    """The bounded state of a session (`cockpit status`, the TUI's first frame); a journal read
    already by this process and unchanged since is not read again (`status` finds, then shows)."""
    try:
        st = journal.stat()
        key = (str(journal), str(workspace), st.st_size, st.st_mtime_ns)
    except OSError:
        key = None
    if key is not None and key in _SEEN:
        return _SEEN[key]
    state = open_recent(journal, workspace).fold.state
    if key is not None:
        _SEEN.clear()
        _SEEN[key] = state
    return state


_SEEN: dict[tuple[str, str, int, int], SessionState] = {}


def unread_bytes(journal: Path, workspace: Path) -> int:
    """How much of the journal a reader would have to read: past the saved fold, or all of it."""
    try:
        size = journal.stat().st_size
    except OSError:
        return 0
    saved = _load(journal, workspace)
    return size - (saved.offset if saved else 0)


def saved_end(journal: Path, workspace: Path) -> tuple[bool, int]:
    """What a saved fold says of the session's end: (ended, the offset it read to); (False, 0)
    when there is none to trust (the whole journal is then what is left to search)."""
    saved = _load(journal, workspace)
    if saved is None:
        return False, 0
    return saved.fold.state.ended_t is not None, saved.offset
