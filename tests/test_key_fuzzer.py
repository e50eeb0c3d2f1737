"""No key ends the app, in any state, at any size: the key fuzzer (tests/key_fuzz.py) sends seeded
random keys, pastes and resizes into the TUI in each state a session can be in (none, no workload,
open, paused, ended here, ended before, a gate running, a dialog open) at 80x24, 120x40 and
160x48, and after every one checks that the app is up, that nothing but app_* was journaled after
a session's end, and that SESSION.md holds exactly what was typed or pasted into the editor.

A break names its seed, state and size (bench/key_fuzzer.py --seed replays it). COCKPIT_FUZZ_SEED
picks another seed; bench/key_fuzzer.py runs many more keys and seeds.
"""

from __future__ import annotations

import os

import pytest

from tests.key_fuzz import SIZES, STATES, FuzzBreak, Fuzzer

SEED = int(os.environ.get("COCKPIT_FUZZ_SEED", "43"))
STEPS = 90  # keys and pastes per state and size: 8 states x 3 sizes x 90 = 2,160 a run


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_no_key_in_any_state_ends_the_app_or_writes_where_it_should_not(tmp_path, size) -> None:
    sent = 0
    for state in STATES:
        fuzzer = Fuzzer(SEED, state, size, STEPS, tmp_path / state)
        (tmp_path / state).mkdir()
        tally = await fuzzer.run()
        sent += tally.keys + tally.pastes
    assert sent >= len(STATES) * STEPS * 0.95  # the resizes are the rest


async def test_the_fuzzer_catches_a_key_typed_outside_the_editor_that_lands_in_it(tmp_path, monkeypatch) -> None:
    """The fuzzer's own check: with the typing guard's old habit back (text typed outside the
    editor put into it), a run breaks and names its seed."""
    from cockpit.ui.screens.main_screen import MainScreen

    def type_it(self: MainScreen, what: str) -> None:
        self.cockpit.editor.insert("x")

    monkeypatch.setattr(MainScreen, "refuse_text", type_it)
    (tmp_path / "open").mkdir()
    with pytest.raises(FuzzBreak, match=r"outside the editor.* seed 7, state open"):
        await Fuzzer(7, "open", (120, 40), 400, tmp_path / "open").run()


async def test_the_fuzzer_catches_a_gate_journaled_after_the_end(tmp_path, monkeypatch) -> None:
    """And with the journal's guard gone and the keys offering r after the end, a gate started
    after session_ended breaks the run."""
    from cockpit.session import live
    from cockpit.ui.controllers import key_states

    monkeypatch.setattr(live, "after_the_end", lambda is_open, events: None)
    monkeypatch.setattr(key_states, "ENDED", None)
    monkeypatch.setattr("cockpit.ui.controllers.gate_board._refused", lambda gate, live, config: None)
    (tmp_path / "ended").mkdir()
    with pytest.raises(FuzzBreak, match="after session_ended"):
        await Fuzzer(3, "ended-here", (120, 40), 400, tmp_path / "ended").run()
