"""The key fuzzer: seeded random keys, pastes and resizes driven into the TUI through Textual's
pilot, in each state a session can be in, with three invariants checked after every one:

1. the app is up (a key may open a dialog, never end the app: quitting is asked and answered y,
   and the fuzzer counts that as the one way out and keeps the app up);
2. no journal event after `session_ended` but a cockpit's own `app_*`;
3. SESSION.md holds exactly what was typed or pasted into the editor: a key or a paste outside
   it changes nothing there; a printable key in it inserts its character at the cursor; a paste
   in it inserts its text once, line breaks kept; Escape (or alt+key, Escape read together with
   the next key) changes nothing; and what the editor holds is what is on disk once saved.

Used by tests/test_key_fuzzer.py (a few thousand keys) and bench/key_fuzzer.py (the figures for
bench/RESULTS.md, more seeds, the live NVML panel on a GPU box). A break raises `FuzzBreak` with
the seed, the state, the size and the last keys: `python bench/key_fuzzer.py --seed N` replays it.
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from textual.document._document import Document
from textual.keys import key_to_character

from cockpit.clock import FakeClock
from cockpit.config import Config
from cockpit.config.gates import GateConfig
from cockpit.printable import printable
from cockpit.session import events as ev
from cockpit.session import timer
from cockpit.session.live import LiveSession
from cockpit.session.workspace import SessionRef, Workspace, create_session
from cockpit.ui.app import CockpitApp

STATES = ("no-session", "no-workload", "open", "paused", "ended-here", "ended-before", "gate-running",
          "dialog-open")
SIZES = ((80, 24), (120, 40), (160, 48))
T0 = 1_795_000_000.0

LETTERS = [*"abcdefghijklmnopqrstuvwxyz", *"ABCDEFGHIJKLMNOPQRSTUVWXYZ", *"0123456789"]
PUNCTUATION = ["full_stop", "slash", "question_mark", "comma", "minus", "space", "colon", "equals_sign",
               "underscore", "exclamation_mark", "left_square_bracket", "number_sign"]
SPECIAL = ["enter", "escape", "tab", "shift+tab", "backspace", "delete", "up", "down", "left", "right",
           "pageup", "pagedown", "home", "end", "ctrl+n", "ctrl+f", "ctrl+p", "ctrl+t", "ctrl+l", "ctrl+g",
           "ctrl+z", "ctrl+y", "ctrl+c", "ctrl+q", "ctrl+a", "ctrl+e", "ctrl+k", "ctrl+u", "ctrl+w",
           "ctrl+s", "ctrl+r", "ctrl+x", "ctrl+d", "f1", "f5", "insert", "alt+j", "alt+x", "alt+q",
           "alt+shift+e"]
KEYS = LETTERS + PUNCTUATION + SPECIAL
ACTION_KEYS = [*"nKgpsrxloANERHqjky", "full_stop", "slash", "question_mark", "enter", "tab", "ctrl+n",
               "ctrl+p", "ctrl+f", "down", "up", *["escape"] * 6]
"""The cockpit's own keys and the ones that answer its dialogs: a third of the keys sent, so the
states they lead to (gates running, sessions ended, dialogs over dialogs) come up often; Escape
often enough that the main screen is where most keys land."""
PASTES = ["PASTE-A\nPASTE-B", "line one\r\nline two\rline three", "\x1b[31mred\x1b[0m and \x1b]52;c;Y3VybA==\x07",
          "r", "nkxqE", "\x1b[201~\x1b[200~nested", "tab\there", "ünïcode ✓ 漢字"]
BIG_PASTE = "".join(f"{i:06d} the quick brown fox ran past the kernel at {i} µs\n" for i in range(1600))
"""~100 KB: pasted whole, at once."""


class FuzzBreak(AssertionError):
    """An invariant broke: the message says which, with what to replay it."""


@dataclass
class Tally:
    """What one run sent and saw."""

    keys: int = 0
    pastes: int = 0
    resizes: int = 0
    quits_asked: int = 0
    gates_started: int = 0
    screens: set[str] = field(default_factory=set)


def fake_gate(seconds: float) -> GateConfig:
    """A gate whose command is a short child of the test's own Python (no probe, no torch)."""
    code = f"import time; print('checking', flush=True); time.sleep({seconds}); print('done')"
    return GateConfig(command=(sys.executable, "-c", code))


def config_for(state: str) -> Config:
    """Every gate a quick child of its own; with no workload, the gates that need one are left as
    they are (they refuse), env is still a quick child."""
    quick = {"env": fake_gate(0.05)}
    if state != "no-workload":
        quick |= {name: fake_gate(0.05) for name in ("build", "correctness", "profile", "sanitize")}
        quick["bench"] = fake_gate(2.0 if state == "gate-running" else 0.05)
    return Config(gates=quick, status_every_s=10**6)


def workspace_for(state: str, root: Path) -> tuple[Workspace, SessionRef | None]:
    ws = Workspace(root)
    if state == "no-session":
        return ws, None
    ref = create_session(ws, Config(), "Fuzz the keys", "optimize", T0)
    if state == "ended-before":
        live = LiveSession(ref)
        live.append(timer.end_session(live.state, T0 + 30))
        live.close()
    return ws, ref


async def settle(pilot: object, until: Callable[[], bool], rounds: int = 400) -> bool:
    """Pause until `until()` holds (a state, not a time); False if it never did."""
    for _ in range(rounds):
        if until():
            return True
        await pilot.pause()  # type: ignore[attr-defined]
    return until()


async def enter_state(app: CockpitApp, pilot: object, state: str) -> None:
    """Drive the app into `state` the way a person would."""
    press = pilot.press  # type: ignore[attr-defined]
    await settle(pilot, lambda: app.screen is not None)
    if state == "paused":
        await press("p")
    elif state == "ended-here":
        await press("E")
        await press("y")
        await settle(pilot, lambda: app.read_only)
    elif state == "gate-running":
        app.gate_panel.selected = "bench"
        await press("r")
        await settle(pilot, lambda: app.gates.run is not None)
    elif state == "dialog-open":
        await press("s")


def journal_breaks(root: Path) -> str | None:
    """The first event written after a session's end that is not a cockpit's own app_*."""
    for journal in sorted((root / "sessions").glob("*/journal.jsonl")):
        ended = False
        for line in journal.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                kind = str(json.loads(line).get("type"))
            except ValueError:
                continue
            if ended and not kind.startswith("app_"):
                return f"{journal.parent.name}: {kind} after session_ended"
            ended = ended or kind == ev.SESSION_ENDED
    return None


def typed(key: str) -> str | None:
    """The character a key types into a text area (no modifier), else None."""
    if "+" in key:
        return None
    char = key_to_character(key)
    return char if char is not None and len(char) == 1 and char.isprintable() else None


def inserted(text: str, selection: tuple[tuple[int, int], tuple[int, int]], insert: str) -> str:
    """`text` with `selection` replaced by `insert`, as a text area does."""
    doc = Document(text)
    doc.replace_range(selection[0], selection[1], insert)
    return doc.text


def pasted(text: str) -> str:
    return printable(text.replace("\r\n", "\n").replace("\r", "\n"))


class Fuzzer:
    """One seeded run of `steps` keys in one state at one size."""

    def __init__(self, seed: int, state: str, size: tuple[int, int], steps: int, root: Path,
                 typing_gap_s: float = 0.0, live_gpu: bool = False) -> None:
        self.seed, self.state, self.size, self.steps = seed, state, size, steps
        self.rng = random.Random(f"{seed}:{state}:{size}")
        self.root = root
        self.typing_gap_s = typing_gap_s
        self.live_gpu = live_gpu
        self.sent: list[str] = []
        self.tally = Tally()

    def app(self) -> CockpitApp:
        ws, ref = workspace_for(self.state, self.root)
        gpu = {} if self.live_gpu else {"gpu_every_s": 0}
        app = CockpitApp(ws, config_for(self.state), ref, clock=FakeClock(T0 + 60), tick_s=1.0,
                         typing_gap_s=self.typing_gap_s, **gpu)  # type: ignore[arg-type]
        tally = self.tally

        async def quit_asked_and_answered() -> None:  # the one way out: counted, the app kept up
            tally.quits_asked += 1

        app.quit_now = quit_asked_and_answered  # type: ignore[method-assign]
        return app

    def fail(self, what: str) -> FuzzBreak:
        return FuzzBreak(f"{what} — seed {self.seed}, state {self.state}, size {self.size[0]}x{self.size[1]}, "
                         f"after {len(self.sent)} steps; the last: {self.sent[-12:]} "
                         f"(replay: python bench/key_fuzzer.py --seed {self.seed} --state {self.state} "
                         f"--size {self.size[0]}x{self.size[1]})")

    async def run(self) -> Tally:
        app = self.app()
        async with app.run_test(size=self.size) as pilot:
            await enter_state(app, pilot, self.state)
            for _ in range(self.steps):
                await self.step(app, pilot)
            await self.settle_and_check_disk(app, pilot)
        self.tally.gates_started = sum(
            line.count('"type":"gate_started"') for line in
            (j.read_text(encoding="utf-8", errors="replace") for j in (self.root / "sessions").glob("*/journal.jsonl")))
        if app._exception is not None:
            raise self.fail(f"the app raised {app._exception!r}")
        return self.tally

    async def step(self, app: CockpitApp, pilot: object) -> None:
        roll = self.rng.random()
        editor = app.editor
        in_editor = (app.screen is app.main_screen and app.focused is editor.area and not editor.area.read_only)
        before, selection, path = editor.area.text, editor.area.selection, editor.path
        expected: str | None = before
        if roll < 0.05:
            text = BIG_PASTE if self.rng.random() < 0.05 else self.rng.choice(PASTES)
            self.sent.append(f"paste {text[:20]!r}")
            self.tally.pastes += 1
            await self.paste(app, pilot, text)
            if in_editor:
                expected = inserted(before, selection, pasted(text))
        elif roll < 0.06:
            width, height = self.rng.choice(SIZES)
            self.sent.append(f"resize {width}x{height}")
            self.tally.resizes += 1
            await pilot.resize_terminal(width, height)  # type: ignore[attr-defined]
        else:
            key = self.rng.choice(ACTION_KEYS if self.rng.random() < 0.35 else KEYS)
            self.sent.append(key)
            self.tally.keys += 1
            await pilot.press(key)  # type: ignore[attr-defined]
            if in_editor:
                char = typed(key)
                expected = inserted(before, selection, char) if char is not None else (
                    before if key == "escape" or key.startswith("alt+") or key == "tab" else None)
        self.check(app, before, expected, path)

    async def paste(self, app: CockpitApp, pilot: object, text: str) -> None:
        from textual import events

        app.post_message(events.Paste(text))  # as the driver does: the app hands it to the focused widget
        await pilot.pause()  # type: ignore[attr-defined]

    def check(self, app: CockpitApp, before: str, expected: str | None, path: Path | None) -> None:
        if not app.is_running or app._exception is not None:
            raise self.fail(f"the app is down ({app._exception!r})")
        self.tally.screens.add(type(app.screen).__name__)
        broken = journal_breaks(self.root)
        if broken is not None:
            raise self.fail(f"the journal has {broken}")
        now = app.editor.area.text
        if app.editor.path != path:
            return  # another session's SESSION.md was opened: a new text
        if expected is not None and now != expected:
            where = "outside the editor" if expected == before else "in the editor"
            raise self.fail(f"SESSION.md changed by a key {where}: {before[-40:]!r} -> {now[-40:]!r}, "
                            f"expected {expected[-40:]!r}")

    async def settle_and_check_disk(self, app: CockpitApp, pilot: object) -> None:
        """What the editor holds is what is on disk once it is saved."""
        await settle(pilot, lambda: app.gates.run is None, rounds=200)
        editor = app.editor
        editor.flush()
        if editor.path is None or editor.area.read_only or editor.dirty:
            return  # nothing to save, or a question about the disk still open
        on_disk = printable(editor.path.read_text(encoding="utf-8"))
        if on_disk != editor.area.text:
            raise self.fail("SESSION.md on disk is not what the editor holds")
