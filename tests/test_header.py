"""The header in a narrow pane: the phase, its time left and the time elapsed are always there;
the objective gives way first (cut with "…" into the room left), then the id."""

from __future__ import annotations

from cockpit.config import Config
from cockpit.session import timer
from cockpit.session.workspace import Workspace, create_session, load_state
from cockpit.ui.widgets.header import HeaderParts, fit_header, header_parts, header_text, id_stem

LONG = ("Vectorize the K loads in the QK^T loop of the attention kernel and keep two blocks per SM "
        "on the H100 without spilling")
T = 1_795_000_000.0


def parts(ws: Workspace, objective: str = LONG, at_s: float = 300, pause: bool = False) -> HeaderParts:
    ref = create_session(ws, Config(), objective, "optimize", T)
    state = load_state(ref)
    now = T + at_s
    if pause:
        from cockpit.session.live import LiveSession

        live = LiveSession(ref)
        live.append(timer.toggle_pause(live.state, now))
        live.close()
        state = load_state(ref)
    return header_parts(state, timer.timer_view(state, now, 0.8), now, patterns=14)


def line(p: HeaderParts, width: int) -> str:
    text = header_text(fit_header(p, width))
    assert text.cell_len <= width
    return text.plain


GLANCE = ("ENVIRONMENT 5/10 min", "5 min left", "5 min elapsed")


def test_at_80_columns_the_phase_time_left_and_elapsed_stay_and_the_objective_goes(ws) -> None:
    p = parts(ws)
    shown = fit_header(p, 80)
    assert shown.objective is None and shown.session_id == "20261118-1106-c0de"
    assert all(part in line(p, 80) for part in GLANCE)
    assert line(p, 80) == " 20261118-1106-c0de │ ENVIRONMENT 5/10 min · 5 min left │ 5 min elapsed │ $0.06"


def test_at_100_columns_the_objective_is_cut_into_the_room_left(ws) -> None:
    p = parts(ws)
    shown = fit_header(p, 100)
    assert shown.objective is not None and shown.objective.endswith("…")
    assert LONG.startswith(shown.objective[:-1]) and len(shown.objective) >= 12
    assert shown.session_id == "20261118-1106-c0de" and shown.patterns is None
    assert all(part in line(p, 100) for part in GLANCE)


def test_at_160_columns_everything_but_the_long_objective_is_whole(ws) -> None:
    p = parts(ws)
    shown = fit_header(p, 160)
    text = line(p, 160)
    assert all(part in text for part in (*GLANCE, "$0.06", "patterns 0/14", "20261118-1106-c0de "))
    assert shown.objective is not None and shown.objective.endswith("…") and not shown.badge
    assert len(text) >= 155  # the objective takes the room there is


def test_a_usual_objective_fits_whole_at_160_columns(ws) -> None:
    p = parts(ws, "Vectorize K loads in the QK^T loop")
    assert line(p, 160) == (" 20261118-1106-c0de Vectorize K loads in the QK^T loop │ "
                            "ENVIRONMENT 5/10 min · 5 min left │ 5 min elapsed │ $0.06 │ patterns 0/14")


def test_a_wide_window_shows_the_whole_id(ws) -> None:
    p = parts(ws)
    assert fit_header(p, 400) == p
    assert "20261118-1106-c0de-vectorize-the-k-loads" in line(p, 400) and LONG in line(p, 400)


def test_below_80_columns_the_cost_goes_before_the_glance(ws) -> None:
    p = parts(ws)
    assert line(p, 56) == " ENVIRONMENT 5/10 min · 5 min left │ 5 min elapsed"


def test_over_budget_is_said(ws) -> None:
    assert "ENVIRONMENT 12/10 min · 2 min over" in line(parts(ws, at_s=754), 80)


def test_a_paused_clock_says_so_at_80_columns(ws) -> None:
    text = line(parts(ws, pause=True), 80)
    assert "ENVIRONMENT 5/10 min PAUSED · 5 min left" in text and "5 min elapsed" in text


def test_the_id_stem_is_its_date_time_and_tag() -> None:
    assert id_stem("20261123-0915-a3f1-vectorize-k-loads") == "20261123-0915-a3f1"
    assert id_stem("007-old-style") == "007"
    assert id_stem("something-else") == "something-else"


def test_a_short_objective_keeps_the_whole_id_at_140_columns(ws) -> None:
    text = line(parts(ws, "vectorize K loads"), 140)
    assert "20261118-1106-c0de-vectorize-k-loads vectorize K loads │ ENVIRONMENT" in text
    assert text.endswith("patterns 0/14")


def test_a_phase_budget_in_hours_puts_hours_on_both_sides(ws) -> None:
    from cockpit.session.live import LiveSession

    ref = create_session(ws, Config(), "Vectorize K loads", "optimize", T)
    live = LiveSession(ref)
    for i in range(3):  # Environment, Baseline and Profile done: Fix (90 min) runs
        live.append(timer.advance(live.state, T + i))
    live.close()
    state = load_state(ref)
    p = header_parts(state, timer.timer_view(state, T + 2 + 300, 0.8), T + 2 + 300)
    assert p.phase.plain == "FIX 0 h 05/1 h 30"  # not "5 min/1 h 30"
