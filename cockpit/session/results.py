"""A gate's result too big for a journal line lives in `results/<run>.verdict.json`.

A bench result is ~57 KB (every config's timings, the validity evidence); 8,607 of them made a
282 MB journal that every `cockpit status` read whole. So `gate_finished` carries a result inline
only up to INLINE_MAX bytes of JSON; a bigger one is written once beside the logs and the event
keeps its headline (the top-level numbers and short strings: speedup, class, next step) and the
workspace-relative `result_file`. `GateRunRecord.result` reads the file when it is asked for the
whole result (cached per file), and falls back to the headline, with a problem noted, when the
file is gone or damaged: the journal's story never depends on a file that a clone can lose.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from cockpit.files import not_a_file, read_file, too_big
from cockpit.session import events as ev
from cockpit.session.inside import OutsideWorkspace, confine_session_path
from cockpit.session.journal import Event
from cockpit.write_whole import write_whole

INLINE_MAX = 16 * 1024
"""Bytes of JSON a result may take inline in the journal (an env, build or profile result fits)."""
MAX_RESULT_BYTES = 16 << 20
"""The biggest result file read (a bench of 56 configs writes 57 KB): a cloned session's 3 GB sparse
"result" costs no disk, and read whole it cost 6 GB of memory. A bigger one reads as its headline."""
RESULT_CAP_WHAT = "a gate's result may be"

HEADLINE_TEXT_MAX = 240
FORMAT = 1


def _size(result: Mapping[str, object]) -> int:
    return len(json.dumps(result, ensure_ascii=False, separators=(",", ":")))


def headline(result: Mapping[str, object]) -> dict[str, object]:
    """What a status line, history's trend and a glance at the gate board need of a result,
    without its tables: the top-level numbers, flags and short texts, a nested object's own
    (the bench's validity verdict, its speedup per reference, its labels, its keep decision),
    short lists of short texts (its candidates) and intervals (a speedup's [low, high])."""
    out: dict[str, object] = {}
    for key, value in result.items():
        if _scalar(value) or _short_texts(value) or _interval(value):
            out[key] = value
        elif isinstance(value, dict):
            out[key] = {k: v for k, v in value.items() if _scalar(v) or _interval(v)}
    return out


def _interval(value: Any) -> bool:
    """[low, high]: two numbers (a speedup's interval), kept in the headline."""
    return isinstance(value, list) and len(value) == 2 and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)


def _short_texts(value: Any) -> bool:
    """A short list of short texts (a result's candidates): kept in the headline."""
    return isinstance(value, list) and len(value) <= 32 and all(
        isinstance(v, str) and len(v) <= HEADLINE_TEXT_MAX for v in value)


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, (bool, int, float)) or (
        isinstance(value, str) and len(value) <= HEADLINE_TEXT_MAX)


def gate_finished_event(
    session_dir: Path, workspace: Path, t: float, run_id: str, gate: str, status: str, summary: str,
    duration_s: float, exit_code: int | None, log: str, result: Mapping[str, object],
) -> Event:
    """The `gate_finished` event for a run: the result inline when it is small, else written to
    `results/<run>.verdict.json` and pointed at. A file that cannot be written (a full disk) keeps
    the result inline: the journal append that follows says what is wrong."""
    if _size(result) <= INLINE_MAX:
        return ev.gate_finished(t, run_id, gate, status, summary, duration_s, exit_code, log, result)
    path = session_dir / "results" / f"{run_id}.verdict.json"
    document = {"format": FORMAT, "run_id": run_id, "gate": gate, "result": result}
    try:
        confine_session_path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_whole(path, json.dumps(document, ensure_ascii=False, separators=(",", ":")))
    except (OSError, OutsideWorkspace):
        return ev.gate_finished(t, run_id, gate, status, summary, duration_s, exit_code, log, result)
    finished = ev.gate_finished(t, run_id, gate, status, summary, duration_s, exit_code, log,
                                headline(result))
    finished["result_file"] = os.path.relpath(path, workspace).replace(os.sep, "/") \
        if path.is_relative_to(workspace) else str(path)
    return finished


def load_result(path: Path, run_id: str, fallback: dict[str, Any]) -> dict[str, Any]:
    """The whole result of `run_id` from its file, or `fallback` (the journal's headline) when the
    file is missing, unreadable, or holds another run's result."""
    try:
        st = path.stat()
    except OSError:
        return fallback
    if result_refused(path, st) is not None:
        return fallback
    loaded = _load(str(path), st.st_mtime_ns, st.st_size)
    if loaded is None or loaded[0] != run_id:
        return fallback
    return loaded[1]


# a session's results, re-read by a report; 1024 held 1.9 GB in a history of 10,000 sessions
@lru_cache(maxsize=32)
def _load(path: str, _mtime_ns: int, _size: int) -> tuple[str, dict[str, Any]] | None:
    from cockpit.session.journal import parse_bounded

    try:
        document = parse_bounded(read_file(path, MAX_RESULT_BYTES, RESULT_CAP_WHAT))
    except OSError:  # gone, unreadable, or no longer a file of its size (RefusedFile)
        return None
    if not isinstance(document, dict) or not isinstance(document.get("result"), dict):
        return None
    return str(document.get("run_id", "")), document["result"]


def read_result_json(path: Path | str) -> Any:
    """A result file (a gate's child wrote it, or a clone holds it) as JSON, read through the door
    up to MAX_RESULT_BYTES: OSError (RefusedFile for a FIFO or a 3 GB file) or ValueError, as a
    plain read would raise."""
    return json.loads(read_file(path, MAX_RESULT_BYTES, RESULT_CAP_WHAT))


def result_refused(path: Path, st: os.stat_result, shown: str | None = None) -> str | None:
    """Why the result file `path` (whose stat is `st`) is not read, naming it `shown`, or None: it
    is no regular file, or over MAX_RESULT_BYTES."""
    if not stat.S_ISREG(st.st_mode):
        return str(not_a_file(shown or path, st.st_mode))
    if st.st_size > MAX_RESULT_BYTES:
        return str(too_big(shown or path, st.st_size, MAX_RESULT_BYTES, RESULT_CAP_WHAT))
    return None
