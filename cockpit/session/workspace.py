"""The workspace: the folder holding `cockpit.toml`, `sessions/` and `patterns/`.

Sessions are folders `sessions/YYYYMMDD-HHMM-xxxx-slug/` (UTC start, four hex digits from the
host and chance, so two machines that start sessions the same minute and merge `sessions/`
through git never clash); folders `sessions/NNN-slug/` from earlier versions still read.
This module finds, names and creates them, and orders them by when they started.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import time
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from cockpit.config.names import CONFIG_NAME
from cockpit.errors import CockpitError
from cockpit.files import RefusedFile, not_a_file
from cockpit.session import events as ev
from cockpit.session.bounds import objective_refused
from cockpit.session.ended import EndedSessions, minutes_newest_first
from cockpit.session.inside import OutsideWorkspace, confine, confine_session
from cockpit.session.journal import JOURNAL_NAME, JournalWriter
from cockpit.session.last_open import folder_look, keep_open, kept_open
from cockpit.session.log_md import LOG_NAME
from cockpit.session.log_md import session_md as session_md
from cockpit.session.opening import CannotOpen, journal_ended, journal_start
from cockpit.session.saved_state import recent_state
from cockpit.session.state import SessionState
from cockpit.slug import slugify

if TYPE_CHECKING:
    from cockpit.config import Config

_STAMPED = r"\d{8}-\d{4}-[0-9a-f]{4}-[a-z0-9-]*"
_NUMBERED = r"\d{3,}-[a-z0-9-]*"
_NUMBERED_DIR = re.compile(rf"^(?!{_STAMPED}$){_NUMBERED}$")
_STAMPED_DIR = re.compile(rf"^{_STAMPED}$")
_STAMPED_NAMES = re.compile(rf"^{_STAMPED}$", re.MULTILINE)
_NUMBERED_NAMES = re.compile(rf"^{_NUMBERED}$", re.MULTILINE)
"""Run over the names that are not stamped: an id of either kind reads as numbered too."""


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
        return self.path / LOG_NAME

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


def session_names(ws: Workspace) -> tuple[list[str], list[str]]:
    """The folder names under sessions/ that name a session, nothing in them read: the numbered
    ones of earlier versions by number, and the stamped ones, which sort by their start minute."""
    try:
        listed = os.listdir(ws.sessions_dir)
    except FileNotFoundError:
        return [], []
    except OSError as exc:
        raise CockpitError(f"{ws.sessions_dir}: cannot list sessions ({exc.strerror})") from exc
    stamped = _STAMPED_NAMES.findall("\n".join(listed))  # one pass over 10,000 names, in C
    others = set(listed).difference(stamped) if len(stamped) < len(listed) else ()
    numbered = _NUMBERED_NAMES.findall("\n".join(others))
    return sorted(numbered, key=lambda n: (int(n.partition("-")[0]), n)), sorted(stamped)


def _ref(ws: Workspace, name: str) -> SessionRef:
    numbered = _NUMBERED_DIR.match(name)
    return SessionRef(name, int(name.partition("-")[0]) if numbered else None, ws.sessions_dir / name)


def list_sessions(ws: Workspace) -> list[SessionRef]:
    """Every session folder, oldest first by the start its journal records (folders merged
    from several machines interleave by time, not by name)."""
    numbered, stamped = session_names(ws)
    refs = [ref for ref in (_ref(ws, name) for name in numbered + stamped) if ref.path.is_dir()]
    return sorted(refs, key=lambda r: (started_t(r), r.number or 0, r.id))


def session_start(ref: SessionRef) -> float | CannotOpen:
    """When the session started, from its journal's first line; or why the folder cannot be
    opened as a session (session/opening.py). A session that leads out of the workspace is not
    read at all."""
    try:
        ref.confined()
    except OutsideWorkspace as exc:
        return CannotOpen(str(exc), False)
    return journal_start(ref.journal, f"sessions/{ref.id}/{JOURNAL_NAME}")


def started_t(ref: SessionRef) -> float:
    """When the session started; 0 when its folder cannot be opened (`session_start`): such a
    folder sorts first and is never the latest."""
    start = session_start(ref)
    return start if isinstance(start, float) else 0.0


def cannot_open(ref: SessionRef) -> CannotOpen | None:
    """Why the session folder cannot be opened (a symlink out of the workspace, a folder or no
    file where its journal should be, a first line that is no session's start), or None. What the
    TUI and `cockpit export` both say."""
    start = session_start(ref)
    return start if isinstance(start, CannotOpen) else None


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
    """The newest session that began as one (its first line) and has no `session_ended`.

    Stamped ids sort by their start minute, so the folders are asked newest minute first and the
    search stops at the first minute that holds an open session (two machines' sessions of one
    minute are ordered by the start their journals record). Only the ended sessions newer than
    the open one are asked about, each once: the ids found ended are kept (session/ended.py).
    Numbered folders of earlier versions say no time in their names: each is asked. The end is
    found with a byte search, never a fold (a 280 MB journal is searched in a fraction of a
    second and read, when it must be, by the TUI's worker thread)."""
    if (kept := _kept_and_open(ws)) is not None:
        return kept
    look, listed_t = folder_look(ws.sessions_dir), time.time()
    numbered, stamped = session_names(ws)
    ended = EndedSessions(ws.sessions_dir)
    found = None
    for minute in minutes_newest_first(stamped, ended):
        if (found := _newest_open(ws, minute, ended)) is not None:
            break
    older = _newest_open(ws, ended.unknown(numbered), ended) if numbered else None
    ended.save()
    newest = max((c for c in (found, older) if c is not None), default=None, key=lambda c: c[0])
    if newest is not None:
        keep_open(ws.sessions_dir, newest[1].id, look, listed_t)
        return newest[1]
    for name in reversed(numbered + stamped):  # none open: a journal that is no file may be the one
        if (refused := journal_refused(_ref(ws, name))) is not None:
            raise refused
    return None  # a folder with a broken first line is not one


def _kept_and_open(ws: Workspace) -> SessionRef | None:
    """The session found open last time, if the sessions folder has not changed since and it is
    still open (session/last_open.py): no listing of the folder."""
    name = kept_open(ws.sessions_dir)
    if name is None or not (_STAMPED_DIR.match(name) or _NUMBERED_DIR.match(name)):
        return None
    ref = _ref(ws, name)
    return ref if started_t(ref) > 0 and not has_ended(ref) else None


def journal_refused(ref: SessionRef) -> RefusedFile | None:
    """Why the session's journal is not read when it is no regular file (a FIFO, a folder); None
    otherwise. A stat, never an open: it is asked of every session when none is open."""
    try:
        mode = os.stat(ref.confined().journal).st_mode
    except (OSError, OutsideWorkspace):  # missing, or never read at all (session/inside.py)
        return None
    return None if stat.S_ISREG(mode) else not_a_file(ref.journal, mode)


def _newest_open(ws: Workspace, names: Iterable[str],
                 ended: EndedSessions) -> tuple[tuple[float, int, str], SessionRef] | None:
    """The open session among `names` that started last, and its order (start, number, id)."""
    newest = None
    for name in names:
        ref = _ref(ws, name)
        if (t := started_t(ref)) <= 0:
            continue
        if has_ended(ref):
            ended.add(name)
        elif newest is None or (t, ref.number or 0, name) > newest[0]:
            newest = ((t, ref.number or 0, name), ref)
    return newest


def unreadable_sessions(ws: Workspace) -> list[tuple[SessionRef, CannotOpen]]:
    """Session folders that cannot be opened, and why (`cannot_open`): never the latest, so a
    reader names them instead."""
    try:
        numbered, stamped = session_names(ws)
    except CockpitError:
        return []
    refs = (_ref(ws, name) for name in numbered + stamped)
    return [(ref, why) for ref in refs if ref.path.is_dir() and (why := cannot_open(ref)) is not None]


def has_ended(ref: SessionRef) -> bool:
    """Whether the session's journal holds a `session_ended` event (`journal_ended`); a session
    that leads out of the workspace is never read (nor the latest: `started_t`)."""
    try:
        return journal_ended(ref.confined().journal, ref.workspace)
    except OutsideWorkspace:
        return False


def _named(spec: str, numbered: list[str], stamped: list[str]) -> list[str]:
    """The folder names `spec` may mean: itself, or the numbered sessions of that number."""
    if spec in stamped or spec in numbered:
        return [spec]
    if not spec.isdigit():
        return []
    return [n for n in numbered if int(n.partition("-")[0]) == int(spec)]


def resolve_session(ws: Workspace, spec: str | None) -> SessionRef | None:
    """`None`/"latest": the latest open session (or None); else the session named by id or number."""
    if spec is None or spec == "latest":
        return latest_open_session(ws)
    numbered, stamped = session_names(ws)
    for ref in (_ref(ws, name) for name in _named(spec, numbered, stamped)):
        if ref.path.is_dir():
            return ref.confined()
    known = ", ".join((numbered + stamped)[-5:]) or "none yet"
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
    session_id, path = _new_session_folder(ws, now, slugify(objective), tag)
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


def _new_session_folder(ws: Workspace, now: float, slug: str, tag: str | None) -> tuple[str, Path]:
    """A new session's id and its folder, made exclusively: another `cockpit new` that drew the
    same four digits this minute makes this one draw again (a fixed `tag` cannot)."""
    while True:
        session_id = new_session_id(now, slug, tag)
        path = ws.sessions_dir / session_id
        try:
            path.mkdir()
            return session_id, path
        except FileExistsError:
            if tag is not None:
                raise CockpitError(f"{path}: a session with this id exists already") from None
            continue
        except OSError as exc:
            raise CockpitError(
                f"{path}: cannot create the session folder ({exc.strerror}); "
                "fix the sessions folder's permissions or free disk space"
            ) from exc


def new_session_id(now: float, slug: str, tag: str | None = None) -> str:
    """`20261123-0915-a3f1-slug`: sorts by start (UTC) and reads as a date; the four hex digits
    (`session_tag`) keep two boxes that start a session the same minute apart."""
    stamp = datetime.fromtimestamp(now, tz=timezone.utc).strftime("%Y%m%d-%H%M")
    return f"{stamp}-{tag or session_tag()}-{slug}"


def session_tag() -> str:
    """Four hex digits from this host's name and chance: the host keeps two machines apart,
    chance keeps two `cockpit new` on one machine apart (a clash is drawn again)."""
    # zlib, not hashlib: the TUI names sessions too, and hashlib loads OpenSSL's libcrypto.
    seed = f"{os.uname().nodename}:{os.getpid()}:{os.urandom(8).hex()}"
    return f"{zlib.crc32(seed.encode()) & 0xFFFF:04x}"


def _write_new(path: Path, text: str) -> None:
    try:
        with path.open("x", encoding="utf-8") as f:
            f.write(text)
    except OSError as exc:
        raise CockpitError(f"{path}: cannot write ({exc.strerror})") from exc
