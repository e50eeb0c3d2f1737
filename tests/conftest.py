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


@pytest.fixture
def cpu_events(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bench engine (probes/workload/timing.py) on CPU tensors: CUDA events on the host's
    clock, so a call's wall time is its "device" time, with no spin kernel and a token flush."""
    import torch

    from cockpit.probes.workload import timing

    class Event:
        def __init__(self, enable_timing: bool = False) -> None:
            self.t = 0.0

        def record(self) -> None:
            self.t = time.perf_counter() * 1e3

        def elapsed_time(self, other: Event) -> float:
            return other.t - self.t

        def synchronize(self) -> None:
            pass

        def query(self) -> bool:
            return True

    class NoSpin:
        works = False

    monkeypatch.setattr(torch.cuda, "Event", Event, raising=False)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: None)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)  # a GPU box runs these as CI does
    monkeypatch.setattr(timing, "flush_buffer", lambda: torch.empty(16, dtype=torch.int8))
    monkeypatch.setattr(timing, "flush_ms", lambda flush: 0.001)
    monkeypatch.setattr(timing, "device_memory", lambda: (1 << 20, 1 << 30))
    monkeypatch.setattr(timing, "Hold", NoSpin)
