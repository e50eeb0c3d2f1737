"""Where a search's studies live, the session's journal file (one box) or a database several boxes
share (`[tune] storage`), and what must hold when they share one.

- One box: Optuna's JournalStorage on `sessions/<ID>/tune/journal.log`, shared by the box's workers
  (one per GPU); studies named `attn-d64`, `knobs <group>`.
- Several boxes (`storage = "postgresql://user@host:5432/db"`): Optuna's RDBStorage with a heartbeat.
  Each box runs `cockpit tune` in its own checkout and session; its workers, pinned to its GPUs by
  UUID, ask and tell one study in the database. Each box keeps its compile cache (`build/tune/`:
  its own nvcc's output), its session journal of its own trials, and what its confirmation keeps.
  `sqlite:///file.db` works too, for one box.

Naming: both boxes derive the same name, and no name mixes numbers that do not compare.
`[tune] study = "NAME"` gives `NAME attn-d64`; else `cockpit attn-d64 sm_90 fp16 #<digest>`, the
digest of all a trial's value depends on: kernel or workload (and baseline), shapes with dtype and
causality, the values the sampler offers (Optuna refuses a categorical whose choices differ within
a study) and the GPU arch. The same cockpit.toml and checkout give the same name on every box;
anything else another study. The digest is also the study's user attr `search`, so a study named
by hand refuses a box whose search differs.

GPU model: the arch is in the name (an L4, sm_89, never meets an H100, sm_90), but one arch holds
models whose numbers differ (H100 SXM and PCIe, H100 and H200): the first box to start workers
records its model as the study's user attr `gpu`; a box of another model is refused before its
workers start, and each worker checks the GPU its measuring child holds, in one line saying what
to do (a study of its own). A box of mixed models tunes one model at a time (--gpus).

Heartbeat: a trial a worker asks carries its run's owner (`host session run`, system attr) and is
beaten every HEARTBEAT_S by a thread of the worker until told (ask/tell is not study.optimize,
which would beat for us). `--resume` fails only the RUNNING trials of its own run (whose workers
are gone) or unbeaten for GRACE_S (a dead box's), never another box's live trial; workers fail
stale trials as they ask (at most every HEARTBEAT_S), so a dead box's configurations return to the
queue while the other goes on. A box cut off from the database longer than GRACE_S loses its trials
that way: its worker stops in one line and `--resume` goes on.

Nothing measured twice: every choice reads the study's trials (trials.py): a seed is queued only
where no trial has, holds or waits for it, so a second box queues nothing the first queued or ran;
the ask skips what any trial measured or holds (search.py `_seen`: each box commits its trial's
parameters before reading the others'); the samplers are seeded apart by owner.

A database out of reach, a refused login or a missing driver is one line, the password as ***.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import socket
import threading
import warnings
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, cast

from cockpit.config.tune import TuneConfig, redact, url_secrets
from cockpit.errors import CockpitError
from cockpit.tune.trials import shared_study

if TYPE_CHECKING:
    import optuna

HEARTBEAT_S = 10
"""How often a worker beats for each trial it holds (a row update: nothing next to a trial)."""
GRACE_S = 90
"""A trial unbeaten this long is a dead box's: long enough for a database restart or a network
hiccup, short enough that a dead box's configurations are measured by the other in the same search."""
LOCK_GRACE_S = 10
"""The journal file's lock is held for the milliseconds of one append; one untouched for 10 s is a
dead run's."""
SIDECAR = "study.json"
GPU_ATTR = "gpu"
SEARCH_ATTR = "search"


@dataclass(frozen=True)
class Store:
    journal: Path | None = None
    url: str = ""
    study: str = ""
    """`[tune] study`: the name boxes meet under, "" = derived."""
    owner: str = ""
    """The run asking (workers only): `host session run`."""
    heartbeat_s: int = HEARTBEAT_S
    grace_s: int = GRACE_S

    @property
    def shared(self) -> bool:
        return bool(self.url)

    @property
    def where(self) -> str:
        return redact(self.url) if self.url else str(self.journal)

    def asking(self, owner: str) -> Store:
        return replace(self, owner=owner) if self.shared else self

    def name(self, local: str, title: str, facts: Mapping[str, Any]) -> str:
        if not self.shared:
            return local
        if self.study:
            return f"{self.study} {local}"
        return f"cockpit {title} #{digest(facts)}"

    def sampler_seed(self, base: int) -> int:
        """Boxes seeded apart (the owner), so two samplers never propose in lockstep."""
        return base + (zlib.crc32(self.owner.encode()) % 100_003 if self.owner else 0)

    def storage(self) -> optuna.storages.BaseStorage:
        if not self.shared:
            assert self.journal is not None
            return _journal(self.journal)
        try:
            with _quiet():
                return _rdb(self.url, self.heartbeat_s, self.grace_s)
        except Exception as exc:
            raise db_error(exc, self.url) or exc from None


def as_store(where: Path | Store) -> Store:
    return where if isinstance(where, Store) else Store(journal=where)


def digest(facts: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(facts, sort_keys=True, default=list).encode()).hexdigest()[:10]


def owner_of(run_dir: Path | str, run: str) -> str:
    return f"{socket.gethostname()} {Path(run_dir).parent.name} {run}"


def for_run(tune: TuneConfig, workspace: Path, run_dir: Path, journal: Path, fresh: bool = False) -> Store:
    """The store of the search in `run_dir` as cockpit.toml names it; a search started on another
    store (its `study.json`, or its journal file) is refused rather than split in two."""
    url = tune.storage
    if url.startswith("sqlite:///") and not url.startswith("sqlite:////"):  # relative: the workspace's
        path = workspace / url.removeprefix("sqlite:///")
        path.parent.mkdir(parents=True, exist_ok=True)
        url = f"sqlite:///{path.resolve()}"
    store = Store(journal=None if url else journal, url=url, study=tune.study if url else "")
    if fresh:
        return store
    recorded = read_sidecar(run_dir)
    where = tune.line("storage")
    if recorded is not None and not url:
        raise CockpitError(f"{where}: this search's studies are in {recorded.get('storage')} "
                           f"({run_dir / SIDECAR}) and cockpit.toml has no [tune] storage now: put it back")
    now = [store.where, store.study]
    if recorded is not None and [recorded.get("storage"), recorded.get("study")] != now:
        raise CockpitError(f"{where}: this search's studies are in {recorded.get('storage')} "
                           f"(study {recorded.get('study') or 'derived'}), cockpit.toml now names "
                           f"{redact(url)} (study {store.study or 'derived'}): put it back, or start a "
                           "new session")
    if recorded is None and url and journal.exists():
        raise CockpitError(f"{where}: this search keeps its studies in {journal}; cockpit.toml now names "
                           f"{redact(url)}: drop [tune] storage to resume it, or start a new session")
    return store


class SidecarJson(TypedDict, total=False):
    """Where a shared search's studies are: the store (no password) and the study names."""

    storage: str
    study: str
    studies: list[str]


def read_sidecar(run_dir: Path) -> SidecarJson | None:
    try:
        data = json.loads((run_dir / SIDECAR).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise CockpitError(f"{run_dir / SIDECAR}: unreadable ({exc})") from exc
    return cast(SidecarJson, data) if isinstance(data, dict) else {}


def write_sidecar(run_dir: Path, store: Store, names: Sequence[str]) -> None:
    """Where a shared search's studies are (no password: the session folder is committed)."""
    if not store.shared:
        return
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / SIDECAR).write_text(json.dumps({"storage": store.where, "study": store.study,
                                               "studies": list(names)}, indent=1), encoding="utf-8")


def open_named(store: Store, local: str, title: str, facts: Mapping[str, Any], names: Sequence[str],
               sampler: optuna.samplers.BaseSampler, pruner: optuna.pruners.BasePruner) -> optuna.Study:
    """Create or join the study; in a shared store, check that it is this search's and, for a worker,
    hand back a study that tags and beats every trial it asks."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    name = store.name(local, title, facts)
    storage = store.storage()
    try:
        study = optuna.create_study(storage=storage, study_name=name, direction="maximize",
                                    sampler=sampler, pruner=pruner, load_if_exists=True)
        if not store.shared:
            return study
        _check_search(study, store, facts)
        if store.owner:
            return shared_study()(name, storage, sampler, pruner, store, tuple(names))  # type: ignore[no-any-return]
        return study
    except CockpitError:
        raise
    except Exception as exc:
        raise db_error(exc, store.url) or exc from None


def _check_search(study: optuna.Study, store: Store, facts: Mapping[str, Any]) -> None:
    held = study.user_attrs.get(SEARCH_ATTR)
    if held is None:
        study.set_user_attr(SEARCH_ATTR, digest(facts))
        study.set_user_attr("definition", json.loads(json.dumps(facts, default=list)))
    elif held != digest(facts):
        raise CockpitError(f"study {study.study_name!r} in {store.where} was started for another search "
                           "(its shapes, dtype, knob values or GPU arch differ from this box's): use the "
                           "same [tune] settings and checkout on every box, or another [tune] study name")


def _model(name: str) -> str:
    return " ".join(name.lower().removeprefix("nvidia ").split())


def claim_gpu(study: optuna.Study, model: str, store: Store) -> None:
    """The study's measurements are from one GPU model: the first claim records it, any other
    model is refused in one line."""
    mine = _model(model)
    if not mine:
        return
    held = study.user_attrs.get(GPU_ATTR)
    if held is None:
        study.set_user_attr(GPU_ATTR, model)
        held = study.user_attrs.get(GPU_ATTR)  # read back: another box may have claimed it just now
    if _model(str(held)) != mine:
        raise CockpitError(
            f"study {study.study_name!r} in {store.where} holds measurements from {held} and this GPU is "
            f"{model}: a study never mixes GPU models; give this box a study of its own ([tune] study = "
            f"\"...\" in its cockpit.toml) or run it on {held}")


def one_model(gpus: Iterable[tuple[str, str]]) -> str:
    """The one GPU model among (label, model) pairs ("" for none); several is a one-line error."""
    seen: dict[str, list[str]] = {}
    first = ""
    for label, model in gpus:
        seen.setdefault(_model(model), []).append(f"{label}: {model}")
        first = first or model
    if len(seen) > 1:
        listed = "; ".join(", ".join(v) for v in seen.values())
        raise CockpitError(f"these GPUs are different models ({listed}): tune one model at a time with "
                           "--gpus, a study never mixes GPU models")
    return first


# --- the storages ------------------------------------------------------------------------------------

def _journal(path: Path) -> optuna.storages.BaseStorage:
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend, JournalFileOpenLock

    path.parent.mkdir(parents=True, exist_ok=True)
    lock = JournalFileOpenLock(str(path), grace_period=LOCK_GRACE_S)
    return JournalStorage(JournalFileBackend(str(path), lock_obj=lock))


_RDB: dict[tuple[str, int, int], optuna.storages.RDBStorage] = {}
_RDB_LOCK = threading.Lock()


def _rdb(url: str, heartbeat_s: int, grace_s: int) -> optuna.storages.RDBStorage:
    """One engine per database in a process (a worker opens a study per group)."""
    from optuna.storages import RDBStorage

    with _RDB_LOCK:
        key = (url, heartbeat_s, grace_s)
        if key not in _RDB:
            engine: dict[str, object] = {"pool_pre_ping": True}
            if url.startswith("postgresql"):
                engine["connect_args"] = {"connect_timeout": 10}
            _RDB[key] = RDBStorage(_with_driver(url), engine_kwargs=engine, heartbeat_interval=heartbeat_s,
                                   grace_period=grace_s)
        return _RDB[key]


def _with_driver(url: str) -> str:
    """`postgresql://` through the driver installed: psycopg 3 (the `tune-db` extra; SQLAlchemy 2.1's
    default), else psycopg2 (SQLAlchemy 2.0's default); a URL naming its driver is kept as written."""
    scheme, _, rest = url.partition("://")
    if scheme != "postgresql":
        return url
    for module, dialect in (("psycopg", "postgresql+psycopg"), ("psycopg2", "postgresql+psycopg2")):
        if importlib.util.find_spec(module) is not None:
            return f"{dialect}://{rest}"
    return url  # SQLAlchemy's ImportError then says a driver is missing (db_error)


@contextmanager
def _quiet() -> Iterator[None]:
    """Optuna calls the heartbeat experimental and meant for study.optimize: both are known here."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@contextmanager
def one_line_db_errors(url: str) -> Iterator[None]:
    """A worker's search: the database going away (or another box failing this worker's trial)
    becomes db_error's one line; anything else is raised as it is."""
    try:
        yield
    except CockpitError:
        raise
    except Exception as exc:
        error = db_error(exc, url)
        if error is None:
            raise
        raise error from None


def db_error(exc: BaseException, url: str) -> CockpitError | None:
    """A database failure as one line with what to do; None for anything else."""
    import optuna

    shown = redact(url)
    text = str(exc)
    if isinstance(exc, ImportError) and ("DB access module" in text or "psycopg" in text):
        return CockpitError(f"the tune database at {shown} needs its Python driver: "
                            "pip install -e '.[tune-db]' (psycopg[binary])")
    if isinstance(exc, optuna.exceptions.UpdateFinishedTrialError):
        return CockpitError(f"another box failed this worker's trial, unbeaten for {GRACE_S} s (was the tune "
                            f"database at {shown} out of reach?); `cockpit tune --resume` goes on")
    module = type(exc).__module__
    if not module.startswith(("sqlalchemy", "psycopg", "sqlite3")):
        return None
    reason = str(getattr(exc, "orig", None) or exc)
    for secret in sorted(url_secrets(url), key=len, reverse=True):
        reason = reason.replace(secret, "***")
    line = next((s.strip() for s in reason.splitlines() if s.strip()), type(exc).__name__)
    line = line.split("[SQL:")[0].strip().rstrip(".")
    hint = ("can this box write that file?" if url.startswith("sqlite") else
            "is PostgreSQL running there and listening on that address (listen_addresses, a pg_hba.conf line "
            "for this box), and does the database exist (createdb)?")
    return CockpitError(f"cannot reach the tune database at {shown}: {line}; {hint}")
