"""`[tune]` and `[tune.space]`: how long `cockpit tune` searches, which of the workload's knob values
it may try, and where its study lives (the session's journal file, or a database several boxes share).
The shapes it times are the workload's (`tune_grid`, else its bench grid)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, unquote_plus, urlsplit

from cockpit.config.moved import refuse_moved
from cockpit.config.reader import ConfigReader

Value = int | bool



@dataclass(frozen=True)
class TuneConfig:
    """`[tune]`: the search, over the workload's knobs, on the workload's tune shapes; each group of
    shapes (the workload's `keep_per`) is searched on its own (its own winner)."""

    space: Mapping[str, tuple[Value, ...]] = field(default_factory=dict)
    """`[tune.space]` as written: knob -> values. The tuner checks the names and values against the
    workload's knobs (`tune.space.options`); a knob not named keeps all its declared values."""
    budget_min: float = 15.0
    """Wall time for the whole search, every group, the confirmation excluded."""
    trials: int = 100
    """The most configurations measured per group (whichever of this and the budget ends first)."""
    seed_trials: int = 20
    """Configurations measured first per group (the current one, other archs' winners, its
    neighbours, a Latin hypercube), before TPE takes over."""
    prune_slower: float = 0.10
    """After its short first measurement, a configuration whose confidence interval lies wholly
    more than this fraction below the best so far is not measured further."""
    keep_improvement: float = 0.10
    """The bar: the winner is kept when it is this much faster than the current configuration,
    with the lower end of its confidence interval above it."""
    occupancy_floor: float = 0.125
    """Resident warps per SM under this share of the SM's slots: rejected before building (the
    workload's rule gets it in `limits`, `cockpit.workload.resources.fits` applies it)."""
    confirm_top: int = 3
    """How many of the best configurations per group the confirmation re-measures."""
    storage: str = ""
    """Where the studies live: "" = the session's journal file (the GPUs of one box); a database URL,
    `postgresql://user@host:port/db`, shares one study between the workers of several boxes
    (`sqlite:///path.db` works too, for one box: SQLite over a network file system is not safe)."""
    study: str = ""
    """The name both boxes meet under in the database; "" = derived from the kernel or workload,
    its shapes, knob values and GPU arch (cockpit/tune/storage.py)."""
    where: Mapping[str, str] = field(default_factory=dict, compare=False)
    """`cockpit.toml:LINE` of each key as written, for errors found later (an empty space on
    the target GPU, a budget too small for the seed)."""

    def line(self, key: str) -> str:
        return self.where.get(key) or self.where.get("tune") or "cockpit.toml"


def read_tune(table: Mapping[str, Any], reader: ConfigReader) -> TuneConfig:
    d = TuneConfig()
    refuse_moved(table, "tune", reader)
    keys = ("space", "budget_min", "trials", "seed_trials", "prune_slower", "keep_improvement",
            "occupancy_floor", "confirm_top", "storage", "study")
    reader.check_keys(table, "tune", keys)

    def whole(key: str, low: int) -> int:
        return int(reader.number(table.get(key, getattr(d, key)), f"tune.{key}",
                                 lambda v: v >= low and float(v).is_integer(), f"a whole number >= {low}"))

    def fraction(key: str, rule: str) -> float:
        return reader.number(table.get(key, getattr(d, key)), f"tune.{key}", lambda v: 0 <= v < 1, rule)

    out_space = _read_space(table.get("space", {}), reader)
    out = TuneConfig(
        space=out_space,
        budget_min=reader.number(table.get("budget_min", d.budget_min), "tune.budget_min",
                                 lambda v: 0 < v <= 7 * 24 * 60, "minutes > 0, at most a week"),
        trials=whole("trials", 1), seed_trials=whole("seed_trials", 1),
        prune_slower=fraction("prune_slower", "a fraction such as 0.1 for 10 % slower"),
        keep_improvement=fraction("keep_improvement", "a fraction such as 0.1 for 10 % faster"),
        occupancy_floor=fraction("occupancy_floor", "a share of the SM's warp slots such as 0.125"),
        confirm_top=whole("confirm_top", 1),
        storage=_read_storage(table.get("storage", d.storage), reader),
        study=_read_study(table.get("study", d.study), reader),
        where={key: reader.lines.where(f"tune.{key}") for key in ("tune", *keys)}
        | {f"space.{name}": reader.lines.where(f"tune.space.{name}") for name in out_space},
    )
    if out.seed_trials > out.trials:
        raise reader.fail("tune.seed_trials", f"{out.seed_trials} seed configurations do not fit in "
                          f"trials = {out.trials}; lower seed_trials or raise trials")
    return out


def _read_space(space: Any, reader: ConfigReader) -> dict[str, tuple[Value, ...]]:
    """Each knob's values as a non-empty list of numbers or booleans; whether the workload has such a
    knob and declares those values is the tuner's to say (`tune.space.options`)."""
    if not isinstance(space, dict):
        raise reader.fail("tune.space", "must be a table, e.g. [tune.space]")
    out: dict[str, tuple[Value, ...]] = {}
    for name, values in space.items():
        if not isinstance(values, list) or not values or not all(
                isinstance(v, (int, bool)) for v in values):
            raise reader.fail(f"tune.space.{name}", f"{values!r} is not allowed (expected a non-empty list "
                              "of whole numbers or true/false)")
        out[name] = tuple(dict.fromkeys(values))
    return out


STORAGE_SCHEMES = ("postgresql", "postgresql+psycopg2", "postgresql+psycopg", "sqlite")


_SECRET_KEY = re.compile(r"pass|pwd|secret|token|key|auth|cred", re.IGNORECASE)
"""Query parameters that hold a secret: libpq's password and sslpassword, a driver's token, ..."""


def redact(url: str) -> str:
    """A database URL fit to print, the one door every message about a URL goes through: the
    password of `user:password@` and the value of any secret query parameter (`?password=`) as `***`."""
    try:
        parts = urlsplit(url)
        if parts.password is not None:
            user, _, host = parts.netloc.rpartition("@")
            parts = parts._replace(netloc=f"{user.partition(':')[0]}:***@{host}")
    except ValueError:
        return "(a database URL)"
    query = "&".join(f"{key}=***" if sep and _SECRET_KEY.search(unquote(key)) else f"{key}{sep}{value}"
                     for key, sep, value in (item.partition("=") for item in parts.query.split("&")))
    shown = parts._replace(query=query)
    return url if shown == urlsplit(url) else shown.geturl()  # geturl() rewrites sqlite:////abs


def url_secrets(url: str) -> set[str]:
    """The secrets a URL holds as they may be echoed back (as written and unquoted): what `redact`
    hides, for masking a driver's message that quotes them."""
    try:
        parts = urlsplit(url)
        found = [parts.password] if parts.password else []
    except ValueError:
        return set()
    found += [value for key, _, value in (item.partition("=") for item in parts.query.split("&"))
              if value and _SECRET_KEY.search(unquote(key))]
    return {s for secret in found for s in (secret, unquote(secret), unquote_plus(secret)) if s}


def _read_storage(value: Any, reader: ConfigReader) -> str:
    """"" or a database URL Optuna's RDBStorage opens; never echoes a password back."""
    expected = ('expected "postgresql://user@host:5432/db" (several boxes share it), '
                '"sqlite:///path/to/tune.db" (one box), or no key (the session\'s journal file)')
    if not isinstance(value, str):
        raise reader.fail("tune.storage", f"must be a string: {expected}")
    url = value.strip()
    if not url:
        return ""
    scheme = url.partition("://")[0].lower() if "://" in url else ""
    shown = redact(url)
    if scheme in ("postgres", "postgres+psycopg2"):
        raise reader.fail("tune.storage", f"{shown!r}: write postgresql:// (SQLAlchemy does not know "
                          "postgres://)")
    if scheme not in STORAGE_SCHEMES:
        raise reader.fail("tune.storage", f"{shown!r} is not a database URL cockpit can share a study "
                          f"through ({expected})")
    if scheme == "sqlite":
        return _sqlite_url(url, shown, reader)
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  (raises on a port that is not a number)
    except ValueError as exc:
        raise reader.fail("tune.storage", f"{shown!r}: {str(exc).replace(url, shown)} ({expected})") from None
    if not parts.path.strip("/"):
        raise reader.fail("tune.storage", f"{shown!r} names no database: add /dbname, "
                          "e.g. postgresql://user@host:5432/cockpit_tune")
    return url


def _sqlite_url(url: str, shown: str, reader: ConfigReader) -> str:
    """A SQLite URL (one box) that names its file."""
    if not url.startswith("sqlite:///") or len(url) == len("sqlite:///"):
        raise reader.fail("tune.storage", f"{shown!r}: name the file, e.g. sqlite:///build/tune.db "
                          "(relative) or sqlite:////abs/tune.db")
    return url


def _read_study(value: Any, reader: ConfigReader) -> str:
    if not isinstance(value, str) or len(value) > 200 or any(ord(c) < 32 for c in value):
        raise reader.fail("tune.study", f"{value!r} is not allowed (expected a name of at most 200 "
                          "printable characters, the same on every box)")
    return value.strip()
