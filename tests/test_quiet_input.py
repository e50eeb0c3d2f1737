"""An idle cockpit's key reader (Textual's input thread) waits half a second at a time instead of
a tenth; a key, or input being stopped for quit or suspend, ends the wait at once, and after a
key Textual's own short waits come back (they tell a lone Esc from an escape sequence)."""

from __future__ import annotations

import os
import selectors
import threading
import time

import pytest
from textual.drivers.linux_driver import LinuxDriver

from cockpit.ui import quiet_input
from cockpit.ui.quiet_input import QuietLinuxDriver, QuietSelector, quiet_driver


@pytest.fixture
def terminal():  # type: ignore[no-untyped-def]
    r, w = os.pipe()
    selector = QuietSelector()
    selector.register(r, selectors.EVENT_READ)
    yield selector, r, w
    selector.close()
    os.close(r)
    os.close(w)


def timed_select(selector: QuietSelector) -> tuple[float, list]:  # type: ignore[type-arg]
    t0 = time.monotonic()
    events = selector.select(0.1)  # what Textual asks for
    return time.monotonic() - t0, events


def test_with_no_key_for_a_while_the_reader_waits_half_a_second(terminal, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    selector, _, _ = terminal
    monkeypatch.setattr(quiet_input, "AWAKE_S", 0.0)
    waited, events = timed_select(selector)
    assert events == [] and waited >= 0.45


def test_a_key_ends_the_wait_and_brings_back_textuals_short_waits(terminal) -> None:  # type: ignore[no-untyped-def]
    selector, r, w = terminal
    threading.Timer(0.05, os.write, (w, b"\x1b")).start()  # a lone Esc
    waited, events = timed_select(selector)
    assert [key.fd for key, _ in events] == [r] and waited < 0.4
    os.read(r, 1)
    waited, events = timed_select(selector)  # the parser's tick that turns it into Esc comes soon
    assert events == [] and waited < 0.3


def test_stopping_input_wakes_the_reader_at_once(terminal, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    selector, _, _ = terminal
    monkeypatch.setattr(quiet_input, "AWAKE_S", 0.0)
    threading.Timer(0.05, selector.wake).start()
    waited, events = timed_select(selector)
    assert events == [] and waited < 0.4


def test_only_textuals_linux_driver_is_replaced() -> None:
    assert quiet_driver(LinuxDriver) is QuietLinuxDriver
    assert quiet_driver(object) is object
