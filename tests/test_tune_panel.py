"""The tune panel as the engineer sees it mid-search and after it, in a small app of its own
(the lead mounts it in the cockpit), and the status line's activity."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import Sparkline, Static

from cockpit.tune import events as tev
from cockpit.tune.progress import tune_activity, tune_progress
from cockpit.ui.widgets.tune_panel import TunePanel

T0 = 1_700_000_000.0
SPACES = [{"head_dim": 64, "total": 480, "left": 136, "rejected_by": {"tile divisibility": 272, "registers": 64}}]
EVENTS = [
    tev.tune_started(T0, "tune-1", "H100 (sm_90)", ["GPU-a"], 900.0, 100, SPACES, "LHS", False),
    tev.tune_baseline(T0 + 5, "tune-1", 64, {"value": 270.0, "lo": 268.0, "hi": 272.0}),
    tev.tune_trial(T0 + 10, "tune-1", 64, 0, "BM128 BN64 8w mb2 1st O:smem", "timed", tflops=255.0, lo=254.0,
                   hi=256.0, current=True, queued=2),
    tev.tune_trial(T0 + 20, "tune-1", 64, 1, "BM128 BN128 4w mb1 2st O:smem", "timed", tflops=281.0, lo=280.0,
                   hi=282.5, queued=2),
    tev.tune_trial(T0 + 30, "tune-1", 64, 2, "BM64 BN16 4w mb1 1st O:reg", "incorrect",
                   detail="FAILS at B3 H5 S17 D64 fp16 full", queued=1),
]


class PanelApp(App[None]):
    def compose(self) -> ComposeResult:
        yield TunePanel(id="tune")


async def test_mid_search_the_panel_shows_trial_n_of_m_the_best_with_its_interval_and_the_chart() -> None:
    app = PanelApp()
    async with app.run_test(size=(100, 20)) as pilot:
        panel = app.query_one(TunePanel)
        text = str(panel.query_one("#tune-text", Static).render())
        assert text.startswith("no search in this session")
        panel.show(tune_progress(EVENTS), T0 + 60)
        await pilot.pause()
        text = str(panel.query_one("#tune-text", Static).render())
        assert "tuning trial 3 of 100  ETA 14:00 · budget left 14:00" in text
        assert "D=64 best BM128 BN128 4w mb1 2st O:smem  281.0 TFLOP/s [280.0, 282.5]  1.10× current  1.04× FLASH" \
            in text
        assert "rejected: 272 tile divisibility, 64 registers" in text and "1 incorrect" in text
        assert "compile queue 1" in text
        assert panel.query_one(Sparkline).data == [255.0, 281.0]


async def test_after_the_search_the_panel_says_what_was_kept() -> None:
    done = [*EVENTS, tev.tune_finished(T0 + 950, "tune-1", "keep", "KEEP: D=64 BM128 BN128 4w mb1 2st O:smem 1.10x")]
    app = PanelApp()
    async with app.run_test(size=(100, 20)) as pilot:
        panel = app.query_one(TunePanel)
        panel.show(tune_progress(done), T0 + 960)
        await pilot.pause()
        text = str(panel.query_one("#tune-text", Static).render())
        assert text.startswith("tuned 3 configurations measured; KEEP: D=64 BM128 BN128")


def test_the_status_line_says_tuning_n_of_m_and_the_best_against_flash() -> None:
    activity = tune_activity(tune_progress(EVENTS), T0 + 60)
    assert activity is not None
    assert activity.text == "tuning: 3/100, best 1.04× FLASH"  # the incorrect one cost GPU time too
    assert activity.fraction == 0.03 and activity.eta_s is not None and activity.eta_s > 0
    assert tune_activity(None, T0) is None


async def test_in_the_cockpit_the_panel_appears_when_a_search_starts_and_the_status_line_says_so(
        tmp_path) -> None:  # type: ignore[no-untyped-def]
    # `cockpit tune` runs in another pane and journals into the open session: the TUI, following
    # the journal, shows the panel (hidden before) and its status line names the search.
    from cockpit.clock import FakeClock
    from cockpit.config import load_config
    from cockpit.session.journal import JournalWriter
    from cockpit.session.workspace import Workspace, create_session
    from cockpit.ui.app import CockpitApp

    (tmp_path / "cockpit.toml").write_text("")
    ws, config = Workspace(tmp_path), load_config(tmp_path)
    ref = create_session(ws, config, "tile sizes", "optimize", T0 - 100)
    clock = FakeClock(T0 - 50)
    app = CockpitApp(ws, config, ref, clock=clock, typing_gap_s=0)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        panel = app.query_one(TunePanel)
        assert not panel.display
        writer = JournalWriter(ref.journal)
        for event in EVENTS:
            writer.append(event)
        writer.close()
        clock.set(T0 + 60)
        app.tick()
        await pilot.pause()
        assert panel.display
        assert "trial 3 of 100" in str(panel.query_one("#tune-text", Static).render())
        assert "tuning: 3/100, best 1.04× FLASH" in app.status_line()
