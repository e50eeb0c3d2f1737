"""The status line and its cadence."""

from __future__ import annotations

from cockpit.config import Config, PhaseSpec
from cockpit.session import events as ev
from cockpit.session import timer
from cockpit.session.state import fold
from cockpit.session.status import (
    Activity,
    compose_status,
    fmt_against,
    fmt_duration,
    minutes_against,
    next_status_due,
    terminal_title,
)
from tests.test_timer import PHASES, T0

WARN = Config().phase_warn_fraction


def _state(*extra):  # type: ignore[no-untyped-def]
    return fold([ev.session_started(T0, "007-vectorize", "x", "optimize", PHASES, 0.0),
                 ev.phase_started(T0, "Environment"), *extra])


def test_durations_read_like_a_clock() -> None:
    assert [fmt_duration(s) for s in (0, 5, 65, 751, 3600, 3723, -3)] == [
        "0:00", "0:05", "1:05", "12:31", "1:00:00", "1:02:03", "0:00"]


def test_a_time_against_a_budget_has_one_format_on_both_sides() -> None:
    assert fmt_against(196, 11400) == "0:03:16/3:10:00"  # not 3:16/3:10:00, nearly all of it
    assert fmt_against(751, 1800) == "12:31/30:00"
    assert fmt_against(3723, 1800) == "1:02:03/0:30:00"
    assert minutes_against(300, 5400) == "0 h 05/1 h 30"  # the header's: not "5 min/1 h 30"
    assert minutes_against(720, 1800) == "12/30 min"
    assert minutes_against(3900, 3000) == "1 h 05/0 h 50"


def test_a_status_in_a_phase_of_hours_says_hours_on_both_sides() -> None:
    state = fold([ev.session_started(T0, "007-vectorize", "x", "optimize", (PhaseSpec("Fix", 5400),), 0.0),
                  ev.phase_started(T0, "Fix")])
    line = compose_status(state, timer.timer_view(state, T0 + 720, WARN))
    assert line == "12:00 elapsed · FIX 0:12:00/1:30:00 · 1:18:00 left in phase"


def test_status_names_elapsed_phase_budget_and_time_left() -> None:
    state = _state()
    line = compose_status(state, timer.timer_view(state, T0 + 135, WARN))
    assert line == "2:15 elapsed · ENVIRONMENT 2:15/10:00 · 7:45 left in phase"


def test_status_with_a_running_gate_shows_what_and_its_eta() -> None:
    state = _state()
    view = timer.timer_view(state, T0 + 135, WARN)
    line = compose_status(state, view, Activity("ncu on flash_fwd", eta_s=90, fraction=0.4))
    assert line == "2:15 elapsed · ENVIRONMENT 2:15/10:00 · now: ncu on flash_fwd 40% · ~1:30 left"


def test_status_says_over_budget_and_paused() -> None:
    state = _state(ev.event(ev.TIMER_PAUSED, T0 + 700))
    line = compose_status(state, timer.timer_view(state, T0 + 800, WARN))
    assert line == "11:40 elapsed · ENVIRONMENT 11:40/10:00 PAUSED · OVER BUDGET by 1:40"


def test_the_next_status_is_due_one_period_after_the_last_or_after_attaching() -> None:
    state = _state()
    assert next_status_due(state, 150, since_t=T0) == T0 + 150
    assert next_status_due(state, 150, since_t=T0 + 1000) == T0 + 1150  # reopened later
    posted = _state(ev.status(T0 + 1200, "x", auto=False))
    assert next_status_due(posted, 150, since_t=T0 + 1000) == T0 + 1350


def test_terminal_title_is_an_osc2_sequence_with_no_control_characters() -> None:
    title = terminal_title(_state(), "line with \x1b]52;evil\x07 inside")
    assert title.startswith("\x1b]2;cockpit 007 · line with ")
    assert title.endswith("\x07")
    assert "\x1b" not in title[1:-1] and "\x07" not in title[:-1]
