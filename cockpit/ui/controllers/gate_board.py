"""Runs gates for the TUI: a queue, one run at a time, the panel rows and the detail view."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text

from cockpit.config import CONFIG_NAME, Config, ConfigError, load_config
from cockpit.errors import CockpitError
from cockpit.gates.catalog import GATES, measures
from cockpit.printable import printable
from cockpit.session.state import GateRunRecord
from cockpit.session.status import Activity
from cockpit.ui.controllers.gate_heads import (
    COMPACT_BELOW,
    bench_speedups,
    gate_row,
    journaled_head,
    not_run_said,
)
from cockpit.ui.controllers.gate_messages import MessagePosting
from cockpit.ui.controllers.host import CockpitHost
from cockpit.ui.controllers.python_lookup import PythonLookup
from cockpit.ui.widgets.gate_marks import verdict_toast
from cockpit.ui.widgets.gate_panel import GateRow

if TYPE_CHECKING:
    from cockpit.config.gates import Gates
    from cockpit.gates.gate import Verdict
    from cockpit.gates.interpreter import Interpreter
    from cockpit.gates.log_follow import GateOutput
    from cockpit.gates.run import GateRun
    from cockpit.patterns.library import Pattern
    from cockpit.patterns.triggers import TriggerBudget
    from cockpit.session.live import LiveSession


class GateBoard:
    """The app's gate runner. A run's reports come as messages (gate_messages.py), each handed
    here on the UI thread."""

    def __init__(self, app: CockpitHost) -> None:
        self.app = app
        self.run: GateRun | None = None
        self.unjournaled: list[GateRun] = []
        """Finished runs whose end the journal could not take yet (a full disk)."""
        self.queue: list[str] = []
        self._matches: dict[str, list[tuple[Pattern, str]]] = {}
        self._shown: tuple[str, bool] | None = None
        """The run the pane shows for the selected gate (its id, whether it had ended)."""
        self._trigger_budget: TriggerBudget | None = None
        """Kept for the app's life: a trigger that backtracks for ever is named once, then skipped."""
        self._config_seen = self._config_stamp()
        """cockpit.toml's (mtime, size) when the app's config was read: an edit applies to the next run."""
        self.python = PythonLookup(app)

    # Intents ------------------------------------------------------------------------------

    def request(self, gate: str) -> None:
        """Run `gate` now, or after the one running (several can be queued)."""
        if (self.run is not None and self.run.gate.name == gate) or gate in self.queue:
            self.app.notify(f"{gate} is already running or queued.", severity="warning")
            return
        self.queue.append(gate)
        if self.run is None:
            self._start_next()
        else:
            self.app.notify(f"{gate} queued after {self.run.gate.name}.")
        self.refresh()

    def cancel(self) -> None:
        dropped, self.queue = self.queue, []
        if self.run is None:
            if dropped:
                self.app.notify(f"Dropped from the queue: {', '.join(dropped)}.")
            return
        self.run.cancel()
        note = f"; dropped from the queue: {', '.join(dropped)}" if dropped else ""
        self.app.notify(f"Cancelling {self.run.gate.name}{note}.")

    async def stop_for_quit(self) -> None:
        """Cancel the running gate and give it a moment to be journaled as cancelled."""
        self.queue = []
        run = self.run
        if run is not None:
            run.cancel()
            await asyncio.to_thread(run.wait, 5.0)

    def abandon(self, reason: str) -> None:
        self.queue = []
        if self.run is not None:
            self.run.abandon(reason)

    def activity(self) -> Activity | None:
        return self.run.activity() if self.run is not None else None

    def find_python(self) -> None:
        """Which Python the gates run (a child per interpreter, once per workspace): found in a
        thread when the app starts, before the first gate asks for it; not before the user trusts
        what the workspace names (its `[gates] python` would run)."""
        from cockpit.gates.interpreter import gates_python
        from cockpit.session.trust import what_runs

        if not what_runs(self.app.workspace.root, self.app.config).trusted:
            return
        with contextlib.suppress(CockpitError):  # said when a gate starts
            gates_python(self.app.config.gates, self.app.workspace.root)

    def _start_next(self) -> None:
        # The runner (subprocess, threads) loads with the first run, not with the first frame.
        from cockpit.gates.gate import GateContext
        from cockpit.gates.run import GateRun, gate_command, next_run_id

        live = self.app.live
        if live is None or not self.queue:
            return
        name = self.queue.pop(0)
        gate = GATES[name]
        self._reread_config(name)
        refused = _refused(name, live, self.app.config)
        if refused is not None:  # the keys say so first; a queued run meets a changed state here
            self.app.notify(refused, severity="warning", markup=False)
            self._start_next()
            return
        from cockpit.ui.controllers.trust_prompt import asked_trust

        if asked_trust(self.app, name, self._trust_answered):  # nothing it names runs untrusted
            self.queue.insert(0, name)  # it runs once the user says yes
            return
        config = self.app.config.gate(name)
        python, how = sys.executable, ""
        if config.command is None:  # the gate's own probe: in the Python with the CUDA torch
            try:
                found = self.python.known_now()
            except CockpitError as exc:  # [gates] python names one that does not run
                self.app.notify(str(exc), severity="error", markup=False, timeout=15)
                return
            if found is None:  # being found in a thread: this gate starts when it answers
                self.queue.insert(0, name)
                return
            python, how = found.path, found.how
        try:  # its log created exclusively: a second cockpit on this session takes the next id
            run_id = next_run_id(live.state, name, live.ref.path)
        except CockpitError as exc:  # a full disk, a read-only folder
            self.app.notify(str(exc), severity="error", markup=False, timeout=15)
            return
        ctx = GateContext(self.app.workspace.root, live.ref.path, run_id, config=self.app.config,
                          objective=live.state.objective, python=python, python_how=how)
        try:  # the workload's arguments are read here: a cockpit.toml edited since can refuse them
            argv = gate_command(gate, ctx, config)
        except CockpitError as exc:
            self.app.notify(f"{name}: {exc}", severity="error", markup=False, timeout=15)
            self._start_next()
            return
        run = GateRun(gate, argv, ctx, live, self.app.clock, MessagePosting(self.app),
                      custom_command=config.command is not None)
        self.run = run
        self.select(name, live_run=True)
        try:
            run.start()
        except CockpitError as exc:  # the journal could not be written: start() killed the child
            self.run = None
            self.app.notify(str(exc), severity="error", markup=False)
            # The panel was switched to the run before it started: show what the journal holds
            # again, not a "running" run that never was.
            self.select(self.app.gate_panel.selected)
            if self.queue:  # nothing would ever start them: the next start meets the same disk
                dropped, self.queue = self.queue, []
                self.app.notify(f"Dropped from the queue: {', '.join(dropped)} — r runs them "
                                "once the journal can be written.", severity="warning", markup=False)
        else:
            self.app.gpu_panel.watch_gate(run.device)  # the panel marks the GPU this gate uses
        self.refresh()

    def python_found(self, gates: Gates, found: Interpreter | CockpitError) -> None:
        self.python.answered(gates, found)
        if self.run is None:  # else the gate running starts the next when it ends
            self._start_next()

    def _trust_answered(self, trusted: bool) -> None:
        if trusted:
            self._start_next()
            return
        dropped, self.queue = self.queue, []
        self.app.notify(f"Nothing ran ({', '.join(dropped)}): this workspace is not trusted. r asks again; "
                        "`cockpit trust show` lists what it would run.", severity="warning", markup=False)
        self.refresh()

    def _config_stamp(self) -> tuple[int, int] | None:
        try:
            st = (self.app.workspace.root / CONFIG_NAME).stat()
        except OSError:  # none (the defaults), or unreadable: load_config says which
            return None
        return st.st_mtime_ns, st.st_size

    def _reread_config(self, gate: str) -> None:
        """cockpit.toml edited since it was read: this run and the app from now on use the new one;
        one that no longer loads is said once per edit, and the run keeps the config it had."""
        stamp = self._config_stamp()
        if stamp == self._config_seen:
            return
        self._config_seen = stamp
        try:
            config = load_config(self.app.workspace.root)
        except ConfigError as exc:
            self.app.notify(f"{' '.join(str(exc).split())} — {gate} runs with the config loaded before.",
                            severity="warning", markup=False, timeout=15)
            return
        self.app.config = config
        self.app.notify(f"cockpit.toml changed: this {gate} run uses it.", markup=False)

    @contextlib.contextmanager
    def _said(self) -> Iterator[None]:
        """What the journal or a decision refuses while a report is handled is said in a toast."""
        try:
            yield
        except CockpitError as exc:
            self.app.notify(str(exc), severity="error", markup=False, timeout=15)

    # A run's reports, as messages (UI thread) ---------------------------------------------------

    def output_arrived(self, run: GateRun, output: GateOutput) -> None:
        run.follow(output)
        if self.app.is_running:  # a report handled while the app closes is drawn nowhere
            self.app.gate_detail.append(run.run_id, output)

    def stalled(self, run: GateRun, silent_s: float) -> None:
        with self._said():
            run.stalled(silent_s)
            if self.app.is_running:
                self._say_silent(run, silent_s)

    def _say_silent(self, run: GateRun, silent_s: float) -> None:
        self.app.notify(
            f"{run.gate.name}: no output for {silent_s:.0f} s — stuck, or the box was preempted? "
            "x cancels it.", title="Silent gate", severity="warning", timeout=15, markup=False,
            about=f"silent:{run.run_id}")
        self.refresh()

    def finished(self, run: GateRun, verdict: Verdict) -> None:
        if not run.end(verdict):  # judged after the run was abandoned, or told twice
            return
        if not self.app.is_running:  # journaled; the app is closing, its panes are being taken down
            return
        with self._said():
            self._ended(run, verdict)

    def _ended(self, run: GateRun, verdict: Verdict) -> None:
        from cockpit.gates.device import gate_device, reported_device

        ran_on = verdict.result.ran_on() if verdict.result is not None else None
        self.app.gpu_panel.watch_gate(reported_device(ran_on, run.gate.name)
                                      or gate_device(self.app.config, "bench", os.environ))
        self.app.drop_toasts(f"silent:{run.run_id}")  # it has ended: no longer silent
        said, severity = verdict_toast(run.gate.name, verdict.status, verdict.summary)
        self.app.notify(said, severity=severity, markup=False)
        if self.run is run:
            self.run = None
        if run.unjournaled:  # a full disk refused its end: the app's tick journals it when it can
            self.unjournaled.append(run)
        self.refresh()
        self.select(self.app.gate_panel.selected)
        record = self.app.live.state.last_run(run.gate.name) if self.app.live else None
        matches = self.matches_for(record) if record else []
        if matches:
            pattern = matches[0][0]
            self.app.notify(f"Pattern {pattern.id:02d} fits: {pattern.title} — o opens it, A marks "
                            "it applied", title="Pattern", timeout=15, markup=False)
        from cockpit.gates.bench.result import BenchResult

        bench = verdict.result if isinstance(verdict.result, BenchResult) else None
        if bench is not None and bench.keep is not None:
            from cockpit.ui.controllers.decisions import offer_bench_decision

            offer_bench_decision(self.app, bench)
        self._start_next()

    # Rendering ----------------------------------------------------------------------------

    def rows(self) -> tuple[GateRow, ...]:
        from cockpit.gates.catalog import wanting_workload

        live = self.app.live
        now = self.app.clock.now()
        wanting = wanting_workload(self.app.config)
        return tuple(gate_row(name, live.state.last_run(name) if live else None, self.run, self.queue,
                              wanting, now) for name in GATES)

    def refresh(self) -> None:
        self.app.follow_state()
        self.app.gate_panel.show(self.rows())
        self.app.gate_detail.show_count()
        self._follow_newest()

    def _follow_newest(self) -> None:
        """The pane follows the selected gate's newest run wherever it was started (a headless
        `cockpit gate` from another shell, another cockpit), and shows it again once it ends."""
        live, selected = self.app.live, self.app.gate_panel.selected
        if live is None or (self.run is not None and self.run.gate.name == selected):
            return  # our own run streams into the pane already
        record = live.state.last_run(selected)
        shown = (record.run_id, record.finished) if record else None
        if shown != self._shown:
            self.select(selected)

    def select(self, gate: str, live_run: bool = False) -> None:
        """Show `gate` in the pane: our run as it streams, else its last journaled run, else why none."""
        if live_run and self.run is not None:
            self._show_our_run(gate, self.run)
            return
        live = self.app.live
        detail = self.app.gate_detail
        record = live.state.last_run(gate) if live else None
        self._shown = (record.run_id, record.finished) if record else None
        if live is None or record is None:
            from cockpit.gates.catalog import wanting_workload

            detail.show_log_path("")
            ended = live is not None and not live.state.is_open
            wants = not ended and gate in wanting_workload(self.app.config)
            said = not_run_said(GATES[gate].title, ended, wants)
            detail.show_run(gate, None, None, Text(said, style="dim"))
            return
        detail.show_log_path(self._shown_path(record.log))
        compact = 0 < detail.size.height < COMPACT_BELOW
        head = journaled_head(record, self.matches_for(record)[:2], compact)
        from cockpit.gates.catalog import read_result
        from cockpit.ui.widgets.gate_results import fix_of, render_result  # the first finished run loads it

        result = read_result(gate, record.result)  # the journal's JSON read once, as the gate's type
        speedups = bench_speedups(live.state.gate_runs, result) if measures(gate) else []
        detail.show_run(gate, record, render_result(gate, result, speedups), head, fix=fix_of(gate, result))

    def _show_our_run(self, gate: str, run: GateRun) -> None:
        """The run this cockpit streams: what it is doing, not its command line (the log's first line)."""
        live = self.app.live
        activity = run.activity()
        head = Text.assemble(("RUNNING ", "bold cyan"), printable(activity.text))
        self.app.gate_detail.show_log_path(self._shown_path(str(run.ctx.log_path)))
        record = live.state.last_run(gate) if live else None
        if record is None or record.run_id != run.run_id:
            record = GateRunRecord(run.run_id, gate, run.started_t, None, str(run.ctx.log_path))
        self.app.gate_detail.show_run(gate, record, None, head, live=True)

    def matches_for(self, record: GateRunRecord) -> list[tuple[Pattern, str]]:
        """Patterns whose triggers fire on this run's output or verdict (cached per run)."""
        if not record.finished or not self.app.patterns:
            return []
        if record.run_id not in self._matches:
            from cockpit.patterns.triggers import TriggerBudget, match_output, match_verdict
            from cockpit.report.history import verdict_fields
            from cockpit.ui.widgets.gate_panel import tail_of_file

            lines = tail_of_file(Path(record.log), 5000)
            budget = self._trigger_budget = self._trigger_budget or TriggerBudget()
            named = set(budget.too_slow)
            found = match_output(self.app.patterns, record.gate, lines, budget)
            for pattern_id in budget.too_slow.keys() - named:
                self.app.notify(budget.too_slow[pattern_id], severity="warning", timeout=20, markup=False)
            found += match_verdict(self.app.patterns, record.gate, verdict_fields(record))
            unique: dict[int, tuple[Pattern, str]] = {}
            for p, why in found:
                unique.setdefault(p.id, (p, why))
            self._matches[record.run_id] = list(unique.values())
        return self._matches[record.run_id]

    def matched_pattern(self) -> tuple[Pattern, str] | None:
        live = self.app.live
        record = live.state.last_run(self.app.gate_panel.selected, finished=True) if live else None
        matches = self.matches_for(record) if record else []
        return matches[0] if matches else None

    def matched_pattern_id(self) -> int | None:
        match = self.matched_pattern()
        return match[0].id if match else None

    def _shown_path(self, path: str) -> str:
        """Paths inside the workspace are shown relative to it: shorter, and what `ls` shows."""
        root = self.app.workspace.root
        return printable(os.path.relpath(path, root) if Path(path).is_relative_to(root) else path)


def _refused(gate: str, live: LiveSession, config: Config) -> str | None:
    """Why `gate` cannot start in this state (the keys refuse it first; a queued run is checked
    again when its turn comes): an ended session, or a workspace with no workload for it."""
    from cockpit.gates.catalog import wanting_workload
    from cockpit.ui.controllers.key_states import ENDED, NO_WORKLOAD

    if not live.state.is_open:
        return ENDED
    return f"{gate}: {NO_WORKLOAD}" if gate in wanting_workload(config) else None
