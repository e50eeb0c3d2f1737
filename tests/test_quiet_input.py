"""An idle cockpit's key reader (Textual's input thread) waits two seconds at a time instead of
a tenth; a key, or input being stopped for quit or suspend, ends the wait at once, and after a
key Textual's own short waits come back (they tell a lone Esc from an escape sequence). The
installed Textual's input loop still makes its selector where the quiet driver swaps it in, and
the swap is undone."""

from __future__ import annotations

import inspect
import os
import selectors
import threading
import time
from collections.abc import Iterator

import pytest
from textual import events
from textual.drivers import linux_driver
from textual.drivers.linux_driver import LinuxDriver
from textual.message import Message

from cockpit.ui.shims import quiet_input
from cockpit.ui.shims.quiet_input import QuietLinuxDriver, QuietSelector, quiet_driver


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


def test_with_no_key_for_a_while_the_reader_waits_two_seconds(terminal, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    selector, _, _ = terminal
    monkeypatch.setattr(quiet_input, "AWAKE_S", 0.0)
    assert quiet_input.IDLE_WAIT_S == 2.0
    monkeypatch.setattr(quiet_input, "IDLE_WAIT_S", 0.5)  # the same path, a shorter wait for the suite
    waited, events = timed_select(selector)
    assert events == [] and waited >= 0.45


# A minute's idle wait in the tests below: what ends a wait "at once" is told from it by a margin
# no busy box's scheduling comes near (a key written 50 ms on may be written a second late).
LONG_IDLE_S = 60.0


def test_a_key_ends_the_wait_and_brings_back_textuals_short_waits(terminal, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    selector, r, w = terminal
    monkeypatch.setattr(quiet_input, "AWAKE_S", 0.0)
    monkeypatch.setattr(quiet_input, "IDLE_WAIT_S", LONG_IDLE_S)
    threading.Timer(0.05, os.write, (w, b"\x1b")).start()  # a lone Esc
    waited, events = timed_select(selector)
    assert [key.fd for key, _ in events] == [r] and waited < LONG_IDLE_S / 4
    os.read(r, 1)
    monkeypatch.setattr(quiet_input, "AWAKE_S", LONG_IDLE_S)  # however long the box took to get here
    waited, events = timed_select(selector)  # the parser's tick that turns it into Esc comes soon
    assert events == [] and waited < LONG_IDLE_S / 4


def test_stopping_input_wakes_the_reader_at_once(terminal, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    selector, _, _ = terminal
    monkeypatch.setattr(quiet_input, "AWAKE_S", 0.0)
    monkeypatch.setattr(quiet_input, "IDLE_WAIT_S", LONG_IDLE_S)
    threading.Timer(0.05, selector.wake).start()
    waited, events = timed_select(selector)
    assert events == [] and waited < LONG_IDLE_S / 4


def test_only_textuals_linux_driver_is_replaced() -> None:
    assert quiet_driver(LinuxDriver) is QuietLinuxDriver
    assert quiet_driver(object) is object


def test_the_installed_textual_makes_its_input_selector_from_the_module_global_that_is_swapped() -> None:
    assert linux_driver.selectors is selectors  # the stdlib module, under the name the driver swaps
    loop = inspect.getsource(LinuxDriver.run_input_thread)
    assert "selectors.SelectSelector()" in loop and "selector.select(" in loop
    for name in ("run_input_thread", "disable_input"):
        assert inspect.signature(getattr(QuietLinuxDriver, name)) == inspect.signature(getattr(LinuxDriver, name))


@pytest.fixture
def keyboard() -> Iterator[tuple[QuietLinuxDriver, int, list[Message], threading.Event]]:
    """A quiet driver reading a pipe, outside any app: what its input thread hands on is kept."""
    r, w = os.pipe()
    driver = QuietLinuxDriver.__new__(QuietLinuxDriver)  # no app, no terminal: the input loop only
    driver.fileno, driver._debug, driver.exit_event = r, False, threading.Event()
    got: list[Message] = []
    keyed = threading.Event()

    def process_message(message: Message) -> None:
        got.append(message)
        keyed.set()

    driver.process_message = process_message  # type: ignore[method-assign]
    yield driver, w, got, keyed
    os.close(r)
    os.close(w)


async def test_textuals_input_loop_runs_on_the_quiet_selector_and_the_module_is_put_back(  # type: ignore[no-untyped-def]
        keyboard, monkeypatch) -> None:
    driver, w, got, keyed = keyboard
    monkeypatch.setattr(quiet_input, "AWAKE_S", 0.0)
    monkeypatch.setattr(quiet_input, "IDLE_WAIT_S", LONG_IDLE_S)
    monkeypatch.setattr(LinuxDriver, "disable_input", lambda self: (self.exit_event.set(),
                                                                    reader.join(LONG_IDLE_S / 4)))
    reader = threading.Thread(target=driver.run_input_thread)
    reader.start()
    os.write(w, b"a")
    assert keyed.wait(5)
    assert [m.key for m in got if isinstance(m, events.Key)] == ["a"]
    assert [type(s) for s in quiet_input._selectors] == [QuietSelector]  # Textual's loop made ours
    assert linux_driver.selectors is selectors  # put back as soon as it did
    # The reader is in its minute's idle wait now; once woken, Textual's short waits finish the
    # loop (its last select comes after the wake, within AWAKE_S, as it does in the cockpit).
    monkeypatch.setattr(quiet_input, "AWAKE_S", LONG_IDLE_S)
    driver.disable_input()  # quit: the reader is woken, not left to its minute's wait
    assert not reader.is_alive()
    assert quiet_input._selectors == [] and linux_driver.selectors is selectors


def test_the_module_is_put_back_when_textuals_loop_fails_before_it_makes_a_selector(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    def broken(self: LinuxDriver) -> None:
        raise RuntimeError("no terminal")

    monkeypatch.setattr(LinuxDriver, "run_input_thread", broken)
    with pytest.raises(RuntimeError):
        QuietLinuxDriver.__new__(QuietLinuxDriver).run_input_thread()
    assert linux_driver.selectors is selectors
