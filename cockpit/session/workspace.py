"""The workspace: the folder holding `cockpit.toml`, `sessions/` and `patterns/`.

Sessions are folders `sessions/YYYYMMDD-HHMM-xxxx-slug/` (UTC start, four hex digits from the
host and chance, so two machines that start sessions the same minute and merge `sessions/`
through git never clash); folders `sessions/NNN-slug/` from earlier versions still read.
This module finds, names and creates them, and orders them by when they started.
"""

from __future__ import annotations

import json
import mmap
import os
import re
import shutil
import socket
import stat
import zlib
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Literal

from cockpit.config import CONFIG_NAME, Config, PhaseSpec
from cockpit.errors import CockpitError
from cockpit.files import RefusedFile, not_a_file, open_file
from cockpit.session import events as ev
from cockpit.session.bounds import MAX_EVENT_BYTES, MAX_FIRST_LINE_BYTES, objective_refused
from cockpit.session.inside import OutsideWorkspace, confine, confine_session
from cockpit.session.journal import JOURNAL_NAME, JournalWriter, parse_bounded
from cockpit.session.saved_state import recent_state, saved_end
from cockpit.session.state import SessionState
from cockpit.slug import slugify

_NUMBERED_DIR = re.compile(r"^(\d{3,})-[a-z0-9-]*$")
_STAMPED_DIR = re.compile(r"^\d{8}-\d{4}-[0-9a-f]{4}-[a-z0-9-]*$")


@dataclass(frozen=True)
class Workspace:
    root: Path

    @property
    def sessions_dir(self) -> Path:
        return self.root / "sessions"

    @property
    def patterns_dir(self) -> Path:
        return self.root / "patterns"


@dataclass(frozen=True)
class SessionRef:
    id: str
    number: int | None
    """NNN of an id from earlier versions (`cockpit --session 7`); None for stamped ids."""
    path: Path

    @property
    def workspace(self) -> Path:
        return self.path.parent.parent

    @property
    def journal(self) -> Path:
        return self.path / JOURNAL_NAME

    @property
    def log_md(self) -> Path:
        return self.path / "SESSION.md"

    @property
    def status_txt(self) -> Path:
        return self.path / "status.txt"

    def confined(self) -> SessionRef:
        """This session, when neither its folder nor anything the cockpit keeps in it is a symlink
        leading out of the workspace (session/inside.py); else OutsideWorkspace, one line."""
        confine_session(self.path, self.workspace)
        return self


def find_workspace(explicit: Path | None = None, cwd: Path | None = None) -> Workspace:
    """`explicit` if given; else the nearest folder up from cwd holding cockpit.toml; else cwd."""
    if explicit is not None:
        root = explicit.expanduser()
        if not root.is_dir():
            raise CockpitError(f"workspace {root} is not a folder; create it or pass another --workspace")
        return Workspace(root.resolve())
    here = (cwd or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / CONFIG_NAME).is_file():
            return Workspace(folder)
    return Workspace(here)


def shipped_with_the_cockpit(root: Path) -> Literal["repository", "examples"] | None:
    """What of the checkout this cockpit runs from `root` is: the repository itself (a fresh
    clone) or its example sessions (`examples/`, the team's, committed with it); None for a
    workspace of the user's own. A new session in either asks first."""
    here = Path(__file__).resolve().parents[2]
    try:
        if not (here / "cockpit" / "ui" / "app.py").is_file():  # an installed cockpit: no checkout
            return None
        real = root.resolve()
    except OSError:
        return None
    if real == here:
        return "repository"
    return "examples" if real == here / "examples" else None


def list_sessions(ws: Workspace) -> list[SessionRef]:
    """Every session folder, oldest first by the start its journal records (folders merged
    from several machines interleave by time, not by name)."""
    try:
        entries = list(os.scandir(ws.sessions_dir))
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise CockpitError(f"{ws.sessions_dir}: cannot list sessions ({exc.strerror})") from exc
    refs = []
    for entry in entries:
        numbered = _NUMBERED_DIR.match(entry.name)
        if (numbered or _STAMPED_DIR.match(entry.name)) and entry.is_dir():
            refs.append(SessionRef(entry.name, int(numbered.group(1)) if numbered else None,
                                   Path(entry.path)))
    return sorted(refs, key=lambda r: (started_t(r), r.number or 0, r.id))


def started_t(ref: SessionRef) -> float:
    """When the session started, from its journal's first line; 0 when that cannot be read
    (such a folder sorts first and is never the latest). A session that leads out of the
    workspace is not read at all."""
    try:
        with open_file(ref.confined().journal) as f:
            first = json.loads(f.readline(MAX_FIRST_LINE_BYTES))
        return float(first["t"]) if first.get("type") == ev.SESSION_STARTED else 0.0
    except (OSError, ValueError, TypeError, KeyError, AttributeError, OutsideWorkspace):
        return 0.0


def load_state(ref: SessionRef) -> SessionState:
    """The session's bounded state (the latest statuses, notes and gate runs: session/saved_state.py),
    read from where the last reader stopped when it can be."""
    try:
        return recent_state(ref.confined().journal, ref.workspace)
    except RefusedFile:
        raise  # names the journal already
    except CockpitError as exc:
        raise CockpitError(f"{ref.journal}: {exc}") from exc


def latest_open_session(ws: Workspace) -> SessionRef | None:
    """The newest session that began as one (its first line) and has no `session_ended`: found
    with a byte search, never a fold (a 280 MB journal is searched in a fraction of a second and
    read, when it must be, by the TUI's worker thread). With none, a session whose journal is no
    file (a FIFO) may be the open one: RefusedFile names it."""
    refs = list_sessions(ws)
    for ref in reversed(refs):
        if started_t(ref) > 0 and not has_ended(ref):
            return ref
    for ref in reversed(refs):
        if (refused := journal_refused(ref)) is not None:
            raise refused
    return None  # a folder with a broken first line is not a session to resume


def journal_refused(ref: SessionRef) -> RefusedFile | None:
    """Why the session's journal is not read when it is no regular file (a FIFO, a folder); None
    otherwise. A stat, never an open: it is asked of every unreadable session."""
    try:
        mode = os.stat(ref.confined().journal).st_mode
    except (OSError, OutsideWorkspace):  # missing, or never read at all (session/inside.py)
        return None
    return None if stat.S_ISREG(mode) else not_a_file(ref.journal, mode)


def unreadable_sessions(ws: Workspace) -> list[SessionRef]:
    """Session folders whose journal's first line does not read as a session's start (cut off
    mid-write, or not a cockpit journal): never the latest, so a reader names them instead."""
    try:
        return [ref for ref in list_sessions(ws) if started_t(ref) == 0.0]
    except CockpitError:
        return []


def has_ended(ref: SessionRef) -> bool:
    """Whether the journal holds a `session_ended` event: a saved fold says so for what it read,
    the bytes after it are searched."""
    try:
        ended, start = saved_end(ref.confined().journal, ref.workspace)
    except OutsideWorkspace:
        return False  # never read; never the latest either (`started_t`)
    if ended:
        return True
    try:
        with open_file(ref.journal) as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
            at = data.find(b'"session_ended"', start)
            while at >= 0:
                start, end = data.rfind(b"\n", 0, at) + 1, data.find(b"\n", at)
                end = end if end >= 0 else len(data)
                if end - start <= MAX_EVENT_BYTES and (event := parse_bounded(data[start:end])) and \
                        isinstance(event, dict) and event.get("type") == ev.SESSION_ENDED:
                    return True
                at = data.find(b'"session_ended"', at + 1)
    except (OSError, ValueError):  # missing, unreadable, or empty (mmap refuses 0 bytes)
        return False
    return False


def resolve_session(ws: Workspace, spec: str | None) -> SessionRef | None:
    """`None`/"latest": the latest open session (or None); else the session named by id or number."""
    if spec is None or spec == "latest":
        return latest_open_session(ws)
    sessions = list_sessions(ws)
    for ref in sessions:
        if spec == ref.id or (spec.isdigit() and ref.number is not None and int(spec) == ref.number):
            return ref.confined()
    known = ", ".join(r.id for r in sessions[-5:]) or "none yet"
    raise CockpitError(
        f"no session '{spec}' in {ws.sessions_dir} (latest: {known}); "
        "pass an existing id or create one with `cockpit new \"OBJECTIVE\"`"
    )


def create_session(
    ws: Workspace, config: Config, objective: str, template: str | None, now: float,
    start_timer: bool = True, tag: str | None = None,
) -> SessionRef:
    """Make `sessions/YYYYMMDD-HHMM-xxxx-slug/` with its journal and SESSION.md; the first phase
    starts now. `tag` fixes the four hex digits (screenshots must not change from run to run)."""
    objective = " ".join(objective.split())
    if not objective:
        raise CockpitError('the objective is empty; say what this session is for: cockpit new "..."')
    if (too_long := objective_refused(objective)) is not None:
        raise CockpitError(too_long)
    tmpl = config.template(template)
    confine(ws.sessions_dir, ws.root)
    try:
        ws.sessions_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CockpitError(
            f"{ws.sessions_dir}: cannot create the sessions folder ({exc.strerror}); "
            "fix its permissions or pass another --workspace"
        ) from exc
    slug = slugify(objective)
    while True:
        session_id = new_session_id(now, slug, tag)
        path = ws.sessions_dir / session_id
        try:
            path.mkdir()
            break
        except FileExistsError:
            if tag is not None:
                raise CockpitError(f"{path}: a session with this id exists already") from None
            continue  # another `cockpit new` drew the same four digits this minute: draw again
        except OSError as exc:
            raise CockpitError(
                f"{path}: cannot create the session folder ({exc.strerror}); "
                "fix the sessions folder's permissions or free disk space"
            ) from exc
    ref = SessionRef(session_id, None, path)
    try:
        writer = JournalWriter(ref.journal)
        try:
            writer.append(ev.session_started(now, session_id, objective, tmpl.name, tmpl.phases,
                                             config.gpu_cost_per_hour))
            if start_timer and tmpl.phases:
                writer.append(ev.phase_started(now, tmpl.phases[0].name))
        finally:
            writer.close()
        _write_new(ref.log_md, session_md(session_id, objective, tmpl.name, tmpl.phases, now))
    except (CockpitError, OSError) as exc:  # a full disk: no half-made session folder is left
        shutil.rmtree(path, ignore_errors=True)
        raise CockpitError(f"{path}: the session could not be written ({exc}); nothing was kept: "
                           "free disk space and run it again") from exc
    return ref


def new_session_id(now: float, slug: str, tag: str | None = None) -> str:
    """`20261123-0915-a3f1-slug`: sorts by start (UTC) and reads as a date; the four hex digits
    (`session_tag`) keep two boxes that start a session the same minute apart."""
    stamp = datetime.fromtimestamp(now, tz=timezone.utc).strftime("%Y%m%d-%H%M")
    return f"{stamp}-{tag or session_tag()}-{slug}"


def session_tag() -> str:
    """Four hex digits from this host's name and chance: the host keeps two machines apart,
    chance keeps two `cockpit new` on one machine apart (a clash is drawn again)."""
    # zlib, not hashlib: the TUI names sessions too, and hashlib loads OpenSSL's libcrypto.
    seed = f"{socket.gethostname()}:{os.getpid()}:{os.urandom(8).hex()}"
    return f"{zlib.crc32(seed.encode()) & 0xFFFF:04x}"


def _write_new(path: Path, text: str) -> None:
    try:
        with path.open("x", encoding="utf-8") as f:
            f.write(text)
    except OSError as exc:
        raise CockpitError(f"{path}: cannot write ({exc.strerror})") from exc


def session_md(
    session_id: str, objective: str, template: str, phases: tuple[PhaseSpec, ...], now: float
) -> str:
    """The session log an engineer fills in: objective, plan, the four closing sections, and the
    log last, where the editor's cursor opens and where `>> SESSION.md` from a shell lands."""
    started = datetime.fromtimestamp(now, tz=timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    rows = "\n".join(f"| {i} | {p.name} | {p.budget_s / 60:g} min |" for i, p in enumerate(phases, 1))
    total = sum(p.budget_s for p in phases) / 60
    return f"""# Session {session_id}

**Objective:** {objective}
**Template:** {template} · **Started:** {started}

## Plan

| # | Phase | Budget |
|---|-------|--------|
{rows}

Total budget: {total:g} min. One change at a time; measure the baseline before touching code.

## What worked

## What failed

## Lessons (patterns to add or update)

## Next session

## Log
"""
