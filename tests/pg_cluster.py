"""A throwaway PostgreSQL cluster for the tests of a tune shared between boxes: `initdb` into a
temporary folder, `pg_ctl start` on a unix socket in that folder and a free localhost port,
stopped and removed at teardown. initdb refuses to run as root, so as root the cluster belongs to
the `postgres` system user (its folder chowned to it, the commands run through runuser). Without
the server binaries (a GPU box: no PostgreSQL, no network) the tests skip, saying how to get them."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

NOT_INSTALLED = "PostgreSQL server not installed (the README's test command installs it)"
USER = "postgres"


def server_bin() -> Path | None:
    """The newest Debian/Ubuntu server install (/usr/lib/postgresql/N/bin), else pg_ctl on PATH."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"),
                   key=lambda p: [int(x) if x.isdigit() else 0 for x in Path(p).parts[-3].split(".")])
    if found:
        return Path(found[-1]).parent
    on_path = shutil.which("pg_ctl")
    return Path(on_path).resolve().parent if on_path else None


@dataclass(frozen=True)
class Cluster:
    port: int
    socket_dir: Path

    def url(self, db: str = "postgres", password: str = "") -> str:
        secret = f":{password}" if password else ""
        return f"postgresql://{USER}{secret}@127.0.0.1:{self.port}/{db}"

    def create_db(self, name: str) -> str:
        """A fresh database; its URL."""
        import psycopg

        with psycopg.connect(host="127.0.0.1", port=self.port, user=USER, dbname="postgres",
                             autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')  # type: ignore[arg-type]
        return self.url(name)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def running_cluster(base: Path) -> Iterator[Cluster]:
    """Skips (pytest) where the server or the driver is missing."""
    bindir = server_bin()
    if bindir is None:
        pytest.skip(NOT_INSTALLED)
    pytest.importorskip("psycopg", reason="psycopg (the tune-db driver) not installed: pip install -e '.[test]'")
    as_root = os.geteuid() == 0
    if as_root:
        if shutil.which("runuser") is None:
            pytest.skip("running as root and no runuser to start PostgreSQL as the postgres user")
        try:
            import pwd

            owner = pwd.getpwnam(USER)
        except KeyError:
            pytest.skip("running as root and no `postgres` system user to run PostgreSQL as")
        # pytest's tmp_path is root's alone (0700): the cluster lives where postgres can reach it
        base = Path(tempfile.mkdtemp(prefix="cockpit-pg-"))
        os.chown(base, owner.pw_uid, owner.pw_gid)
    else:
        base.mkdir(parents=True, exist_ok=True)
    data, log = base / "data", base / "server.log"
    sockets = base / "sock"
    sockets.mkdir()
    if as_root:
        os.chown(sockets, owner.pw_uid, owner.pw_gid)
    prefix = ["runuser", "-u", USER, "--"] if as_root else []

    def run(*argv: str) -> None:
        out = subprocess.run([*prefix, *argv], capture_output=True, text=True, timeout=120, cwd=base)
        if out.returncode != 0:
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise RuntimeError(f"{argv[0]} failed ({out.returncode}): {out.stderr.strip()} {tail}")

    port = free_port()
    run(str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", USER, "-E", "UTF8", "--locale=C",
        "--no-sync")
    run(str(bindir / "pg_ctl"), "-D", str(data), "-l", str(log), "-w", "-t", "60", "-o",
        f"-k {sockets} -p {port} -h 127.0.0.1 -F -c max_connections=60", "start")
    try:
        yield Cluster(port, sockets)
    finally:
        try:
            run(str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(base, ignore_errors=True)
