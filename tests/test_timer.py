"""The phase timer keeps time per phase against its budget; pauses are not counted."""

from __future__ import annotations

import pytest

from cockpit.config import Config, PhaseSpec
from cockpit.session import events as ev
from cockpit.session import timer
from cockpit.session.journal import Event
from cockpit.session.state import SessionState, fold
from cockpit.session.timer import TimerError

T0 = 1_000.0
PHASES = (PhaseSpec("Environment", 600), PhaseSpec("Baseline", 900), PhaseSpec("Document", 300))


class Session:
    """A session driven the way the app drives it: intents become events, events become state."""

    def __init__(self, start_timer: bool = True) -> None:
        self.events: list[Event] = [ev.session_started(T0, "001-x", "x", "baseline", PHASES, 0.68)]
        if start_timer:
            self.events.append(ev.phase_started(T0, "Environment"))

    @property
    def state(self) -> SessionState:
        return fold(self.events)

    def do(self, intent, at: float, *args) -> list[Event]:  # type: ignore[no-untyped-def]
        new = intent(self.state, T0 + at, *args)
        self.events.extend(new)
        return new

    def view(self, at: float) -> timer.TimerView:
        return timer.timer_view(self.state, T0 + at, Config().phase_warn_fraction)


def test_elapsed_counts_per_phase_and_in_total() -> None:
    s = Session()
    s.do(timer.advance, 300)
    v = s.view(420)
    assert [(p.name, p.elapsed_s, p.progress) for p in v.phases] == [
        ("Environment", 300, "done"), ("Baseline", 120, "running"), ("Document", 0, "pending")]
    assert v.total_elapsed_s == 420
    assert v.current is not None and v.current.name == "Baseline"


def test_paused_time_is_excluded_from_phase_and_total() -> None:
    s = Session()
    s.do(timer.toggle_pause, 100)
    assert s.view(200).paused
    assert s.view(200).phases[0].progress == "paused"
    assert s.view(400).current.elapsed_s == 100  # frozen while paused
    s.do(timer.toggle_pause, 400)
    v = s.view(450)
    assert v.current.elapsed_s == 150
    assert v.total_elapsed_s == 150
    assert not v.paused


def test_advancing_while_paused_resumes_first() -> None:
    s = Session()
    s.do(timer.toggle_pause, 100)
    new = s.do(timer.advance, 200)
    assert [e["type"] for e in new] == ["timer_resumed", "phase_ended", "phase_started"]
    assert new[1]["elapsed_s"] == 100


def test_budget_is_ok_then_warn_at_80_percent_then_over() -> None:
    s = Session()
    assert s.view(479).current.budget == "ok"
    assert s.view(480).current.budget == "warn"  # 80 % of 10:00
    assert s.view(600).current.budget == "warn"
    assert s.view(601).current.budget == "over"


def test_an_overrun_is_journaled_once_per_phase_visit() -> None:
    s = Session()
    assert s.do(timer.overrun_events, 600) == []
    first = s.do(timer.overrun_events, 601)
    assert [(e["type"], e["phase"]) for e in first] == [("phase_over_budget", "Environment")]
    assert s.do(timer.overrun_events, 700) == []
    ended = s.do(timer.advance, 700)
    assert ended[0]["over_budget"] is True


def test_skip_marks_the_phase_skipped_and_goto_jumps_anywhere() -> None:
    s = Session()
    s.do(timer.skip, 10)
    assert s.view(20).phases[0].progress == "skipped"
    s.do(timer.goto, 30, "Document")
    assert s.view(40).current.name == "Document"
    s.do(timer.goto, 50, "Environment")  # revisit: time adds up over visits
    v = s.view(80)
    assert v.phases[0].elapsed_s == 10 + 30
    assert v.phases[2].progress == "done"
    with pytest.raises(TimerError, match="already in Environment"):
        s.do(timer.goto, 90, "Environment")
    with pytest.raises(Exception, match="no phase 'Lunch'"):
        s.do(timer.goto, 90, "Lunch")


def test_after_the_last_phase_the_timer_is_finished() -> None:
    s = Session()
    for at in (10, 20, 30):
        s.do(timer.advance, at)
    v = s.view(40)
    assert v.finished and v.current is None
    assert v.total_elapsed_s == 40  # the session still runs until it is ended
    with pytest.raises(TimerError, match="every phase is over"):
        s.do(timer.advance, 50)


def test_start_only_applies_to_a_timer_not_started() -> None:
    s = Session(start_timer=False)
    assert not s.view(5).started
    s.do(timer.advance, 5)  # "next phase" on a fresh timer starts the first phase
    assert s.view(10).current.name == "Environment"
    with pytest.raises(TimerError, match="already started"):
        s.do(timer.start, 20)


def test_ending_the_session_closes_phase_and_stops_the_clock() -> None:
    s = Session()
    s.do(timer.toggle_pause, 50)
    new = s.do(timer.end_session, 100)
    assert [e["type"] for e in new] == ["timer_resumed", "phase_ended", "session_ended"]
    v = s.view(5000)
    assert not s.state.is_open
    assert v.total_elapsed_s == 50
    assert timer.wall_seconds(s.state, T0 + 5000) == 100
    with pytest.raises(TimerError, match="has ended"):
        s.do(timer.toggle_pause, 200)


def test_cost_counts_wall_time_including_pauses() -> None:
    s = Session()
    s.do(timer.toggle_pause, 0)
    assert timer.cost_so_far(s.state, T0 + 3600) == pytest.approx(0.68)


def test_a_clock_stepped_back_a_day_at_a_phase_change_charges_no_day_to_the_next_phase() -> None:
    """The box's clock set back a day (by hand, or NTP) just before `n`: the change is timed at the
    journal's last event, so when the clock is right again Baseline holds its own 10 minutes, not 24 h."""
    s = Session()
    s.do(timer.advance, 300)  # Environment done at T0+300
    [ended, started] = s.do(timer.advance, 360 - 86_400)  # Baseline → Document, the clock a day behind
    assert ended["t"] == started["t"] == T0 + 300 and ended["elapsed_s"] == 0.0
    v = s.view(900)  # the clock set right: 10 minutes after Document started
    assert [(p.name, p.elapsed_s) for p in v.phases] == [("Environment", 300), ("Baseline", 0), ("Document", 600)]
    assert v.total_elapsed_s == 900
