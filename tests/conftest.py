"""Shared fixtures: a fresh workspace, a fake clock, UTC so on-screen times are stable, and
session ids without chance in them (their four hex digits pinned) so screens compare."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from cockpit.clock import FakeClock
from cockpit.config import Config
from cockpit.session.workspace import SessionRef, Workspace, create_session

os.environ["TZ"] = "UTC"
time.tzset()

T0 = 1_795_000_000.0
TAG = "c0de"


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Saved folds (session/saved_state.py) go to a cache of the test's own, never the user's."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))


@pytest.fixture(autouse=True)
def private_state(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Trust answers (session/trust.py) and rescued text go to a state folder of the test's own:
    no workspace is trusted at a test's start, and the user's answers are never read or written."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))


@pytest.fixture(autouse=True)
def pinned_session_tag(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("cockpit.session.workspace.session_tag", lambda: TAG)


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return Workspace(tmp_path)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(T0)


@pytest.fixture
def session(ws: Workspace, clock: FakeClock) -> SessionRef:
    return create_session(ws, Config(), "Vectorize K loads", "optimize", clock.now())


@pytest.fixture
def no_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """This machine without NVIDIA's driver or a CUDA torch, here and in children (tests/no_gpu.py)."""
    from tests.no_gpu import hide_gpu

    hide_gpu(monkeypatch)
