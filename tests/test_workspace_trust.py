"""A stranger's workspace is untrusted until the user says so. A cloned cockpit.toml whose
`[gates] python` is a script, whose `[gates.env] command` writes a file, whose env adds a variable
and which names a workload module runs none of it when the cockpit opens (the TUI, its warm-up, a
status line); the first `r` lists exactly what would run and asks; after y it runs, after an edit
it asks again; headless verbs refuse in one line naming `cockpit trust allow`. Nothing is ever
found through an empty or relative PATH entry (a committed `./python3`, `./nvcc`)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest

from cockpit.cli import main
from cockpit.clock import FakeClock
from cockpit.config import Config, GateConfig, load_config
from cockpit.gates.interpreter import ask_torch, candidates, forget, gates_python
from cockpit.session.trust import trust_file, what_runs
from cockpit.session.workspace import Workspace, latest_open_session
from cockpit.tune import launch, worker
from cockpit.tune.plan import PLAN_NAME
from cockpit.tune.target import Gpu
from cockpit.ui.app import CockpitApp
from cockpit.ui.screens.dialogs import TrustDialog
from tests.tune_fakes import tile_plan
from tests.waiting import until

SIZE = (150, 44)


@pytest.fixture(autouse=True)
def fresh() -> None:
    forget()  # each test's gates' Python is found anew, not remembered from another test


def marker_script(path: Path, marker: Path) -> Path:
    """An executable that leaves `marker` behind, then behaves as a Python (so nothing else fails)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho ran >> '{marker}'\nexec '{sys.executable}' \"$@\"\n")
    path.chmod(0o755)
    return path


def clone(tmp_path: Path, command_marker: str = "command-ran") -> Path:
    """Someone else's repository: a script as `[gates] python`, an env gate command that writes a
    file (with the variable its env adds), a workload module, and one open session."""
    ws = tmp_path / "clone"
    marker_script(ws / "tools" / "python", tmp_path / "python-ran")
    (ws / "workloads").mkdir()
    (ws / "workloads" / "kernel.py").write_text(f"open({str(tmp_path / 'module-ran')!r}, 'w')\n")
    write = f"import os; open({str(tmp_path / command_marker)!r}, 'w').write(os.environ['FROM_THE_CLONE'])"
    (ws / "cockpit.toml").write_text(
        '[gates]\npython = "tools/python"\n'
        f'[gates.env]\ncommand = {json.dumps([sys.executable, "-c", write])}\n'
        'env = { FROM_THE_CLONE = "set by its cockpit.toml" }\n'
        '[workload]\nmodule = "workloads/kernel.py"\n')
    assert main(["--workspace", str(ws), "new", "look at their kernel"]) == 0
    return ws


def ran(tmp_path: Path) -> list[str]:
    return sorted(p.name for p in tmp_path.iterdir() if p.name.endswith("-ran"))


def app_on(ws: Path) -> CockpitApp:
    root = Workspace(ws.resolve())
    ref = latest_open_session(root)
    app = CockpitApp(root, load_config(root.root), ref, clock=FakeClock(), tick_s=3600, typing_gap_s=0)
    app.toasts = []  # type: ignore[attr-defined]
    real = app.notify
    app.notify = lambda message, **kw: (app.toasts.append(message), real(message, **kw))  # type: ignore[method-assign,attr-defined]
    return app


def dialog_lines(app: CockpitApp) -> str:
    assert isinstance(app.screen, TrustDialog), app.screen
    return str(app.screen.query_one("#trust-lines").render())


async def test_opening_a_strangers_clone_runs_nothing_it_names(tmp_path: Path) -> None:
    ws = clone(tmp_path)
    app = app_on(ws)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await asyncio.to_thread(app.gates.find_python)  # what a real terminal's start runs in a thread
        await pilot.pause()
        assert not isinstance(app.screen, TrustDialog)  # nothing is asked before anything would run
    assert main(["--workspace", str(ws), "status"]) == 0
    assert ran(tmp_path) == []


async def test_the_first_r_shows_what_would_run_and_runs_it_only_after_y(tmp_path: Path) -> None:
    ws = clone(tmp_path)
    app = app_on(ws)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("r")  # env: its command, with its env, in the Python it names
        await until(pilot, lambda: isinstance(app.screen, TrustDialog), "the trust question")
        shown = dialog_lines(app)
        assert '[gates] python = "tools/python"' in shown
        assert f'[gates.env] command = {json.dumps([sys.executable, "-c"])[:-1]}' in shown
        assert '[gates.env] env.FROM_THE_CLONE = "set by its cockpit.toml"' in shown
        assert '[workload] module = "workloads/kernel.py"' in shown
        assert app.gates.run is None and ran(tmp_path) == []  # asked before, not after
        await pilot.press("y")
        await until(pilot, lambda: (tmp_path / "command-ran").exists(), "the env gate's command ran")
        assert (tmp_path / "command-ran").read_text() == "set by its cockpit.toml"  # with its env
        await until(pilot, lambda: app.gates.run is None, "the env run ended")
        await asyncio.to_thread(app.gates.find_python)  # trusted now: its `[gates] python` is asked
    assert ran(tmp_path) == ["command-ran", "python-ran"]
    assert what_runs(ws, load_config(ws)).trusted  # kept for the next cockpit and `cockpit gate`
    assert trust_file().is_relative_to(os.environ["XDG_STATE_HOME"]) and trust_file().is_file()


async def test_an_edited_cockpit_toml_asks_again_and_n_runs_nothing(tmp_path: Path) -> None:
    ws = clone(tmp_path)
    assert main(["--workspace", str(ws), "trust", "allow"]) == 0
    toml = ws / "cockpit.toml"
    new_marker = tmp_path / "new-command-ran"
    toml.write_text(toml.read_text().replace("command-ran", "new-command-ran"))  # the pull changed it
    app = app_on(ws)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("r")
        await until(pilot, lambda: isinstance(app.screen, TrustDialog), "the question, asked again")
        shown = dialog_lines(app)
        assert "new-command-ran" in shown and "(new since you trusted it)" in shown
        assert shown.count("(new since you trusted it)") == 1  # only the command changed
        await pilot.press("n")
        await until(pilot, lambda: not isinstance(app.screen, TrustDialog), "the answer")
        await pilot.pause()
        assert app.gates.run is None and app.gates.queue == []
        assert any("Nothing ran (env): this workspace is not trusted" in t for t in app.toasts)  # type: ignore[attr-defined]
    assert not new_marker.exists() and ran(tmp_path) == []
    assert not what_runs(ws, load_config(ws)).trusted


@pytest.mark.parametrize("argv", [("gate", "env"), ("workload", "show"), ("tune", "--dry-run")])
def test_headless_verbs_refuse_in_one_line_until_trust_allow(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                              argv: tuple[str, ...]) -> None:
    ws = clone(tmp_path)
    journal = next((ws / "sessions").iterdir()) / "journal.jsonl"
    before = journal.read_bytes()
    capsys.readouterr()
    assert main(["--workspace", str(ws), *argv]) == 2
    out = capsys.readouterr()
    assert out.out == "" and out.err.count("\n") == 1, out.err
    assert "is not trusted yet: nothing of it ran" in out.err and "`cockpit trust allow`" in out.err
    assert "([gates] python, [gates.env] command, [gates.env] env, [workload] module)" in out.err
    assert ran(tmp_path) == [] and journal.read_bytes() == before  # no run journaled, no log made
    assert not (next((ws / "sessions").iterdir()) / "logs").exists()


def test_cockpit_gate_runs_after_trust_allow_and_refuses_again_after_an_edit(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = clone(tmp_path)
    assert main(["--workspace", str(ws), "trust", "allow"]) == 0
    assert main(["--workspace", str(ws), "gate", "env"]) == 0
    assert ran(tmp_path) == ["command-ran"]
    toml = ws / "cockpit.toml"
    toml.write_text(toml.read_text() + '[gates.build]\ncommand = ["make"]\n')
    capsys.readouterr()
    assert main(["--workspace", str(ws), "gate", "env"]) == 2
    assert "changed since you trusted it: nothing of it ran" in capsys.readouterr().err
    assert main(["--workspace", str(ws), "trust", "show", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert (shown["trusted"], shown["changed"]) == (False, True)
    assert [r["line"] for r in shown["runs"] if r["new"]] == ['[gates.build] command = ["make"]']
    assert main(["--workspace", str(ws), "trust", "revoke"]) == 0
    assert "forgotten" in capsys.readouterr().out
    assert main(["--workspace", str(ws), "trust", "show", "--json"]) == 0
    after = json.loads(capsys.readouterr().out)
    assert after["changed"] is False  # never trusted, as a new clone
    assert [r["line"] for r in after["runs"] if r["new"]] == []  # nothing is new since a trust never given


def test_trust_show_lists_each_thing_exactly_with_its_controls_escaped(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "cockpit.toml").write_text(
        '[gates.build]\ncommand = "make && ./run \\u001b[2K" \nshell = true\n'
        'env = { LD_PRELOAD = "./x.so\\u202e" }\n[workload]\ngpumode = "problems/grayscale"\n')
    assert main(["--workspace", str(tmp_path), "trust"]) == 0
    out = capsys.readouterr().out
    assert '[gates.build] command = "make && ./run \\u001b[2K" (shell)' in out  # the escape, not an erase
    assert '[gates.build] env.LD_PRELOAD = "./x.so\\u202e"' in out  # a bidi control shows as its code
    assert '[workload] gpumode = "problems/grayscale"' in out
    assert "NOT trusted: you have not allowed it" in out and "`cockpit trust allow`" in out


def test_nothing_to_trust_without_a_cockpit_toml_or_in_a_config_built_in_code(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--workspace", str(tmp_path), "trust", "show", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert (shown["needed"], shown["trusted"], shown["runs"]) == (False, True, [])
    built = Config(gates={"env": GateConfig(command=("make",))})  # a test's, or the defaults: no file
    assert what_runs(tmp_path, built).trusted and not what_runs(tmp_path, built).needed
    (tmp_path / "cockpit.toml").write_text("[cadence]\nstatus_every_s = 60\n")
    assert what_runs(tmp_path, load_config(tmp_path)).trusted  # a file naming nothing to run


def test_a_workspace_made_with_cockpit_init_is_trusted(tmp_path: Path) -> None:
    assert main(["init", str(tmp_path), "--workload", "triton", "--name", "softmax"]) == 0
    runs = what_runs(tmp_path, load_config(tmp_path))
    assert runs.needed and runs.trusted
    assert runs.lines == ('[workload] module = "workloads/softmax.py"',)


# --- PATH entries that name the workspace -------------------------------------------------------

def test_an_empty_or_relative_path_entry_never_finds_a_committed_python3(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = tmp_path / "clone"
    marker_script(ws / "python3", tmp_path / "python3-ran")
    marker_script(ws / "bin" / "python", tmp_path / "bin-python-ran")
    monkeypatch.chdir(ws)
    env = {"PATH": os.pathsep.join(["", ".", "bin", str(Path(sys.executable).parent)]), "VIRTUAL_ENV": "."}
    assert all(Path(path).is_absolute() for path, _ in candidates(env, sys.executable))
    gates_python(load_config(ws).gates, ws, env)  # every interpreter it finds is asked for its torch
    assert ran(tmp_path) == []


def test_cockpit_gate_env_in_a_clone_with_no_cockpit_toml_runs_nothing_committed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """PATH=:… and `cockpit gate env` in the clone: neither the committed ./python3 (discovery) nor
    ./nvcc (the env probe looks for it on PATH) runs: the cockpit drops such entries at start."""
    ws = tmp_path / "clone"
    marker_script(ws / "python3", tmp_path / "python3-ran")
    marker_script(ws / "nvcc", tmp_path / "nvcc-ran")
    assert main(["--workspace", str(ws), "new", "their kernel"]) == 0
    monkeypatch.chdir(ws)
    monkeypatch.setenv("PATH", os.pathsep + os.environ["PATH"])
    main(["gate", "env"])  # passes or fails with this box's toolchain; what matters is what ran
    assert ran(tmp_path) == []
    assert os.environ["PATH"] and os.pathsep + os.pathsep not in f":{os.environ['PATH']}:"


def test_asking_an_interpreter_for_its_torch_never_imports_the_workspaces_torch_py(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "torch.py").write_text(f"open({str(tmp_path / 'torch-py-ran')!r}, 'w')\n")
    monkeypatch.chdir(tmp_path)  # `python -c` puts the current folder first on sys.path
    ask_torch(sys.executable)
    assert ran(tmp_path) == []


def test_an_empty_pythonpath_entry_never_imports_the_workspaces_torch_py(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`export PYTHONPATH=$PYTHONPATH:/x` with the variable unset leaves an empty entry, which names
    the current folder: the clone, where the env probe imports torch. A committed torch.py is not
    what it imports."""
    ws = tmp_path / "clone"
    ws.mkdir()
    (ws / "torch.py").write_text(f"open({str(tmp_path / 'torch-py-ran')!r}, 'w')\n")
    assert main(["--workspace", str(ws), "new", "their kernel"]) == 0
    monkeypatch.chdir(ws)
    monkeypatch.setenv("PYTHONPATH", os.pathsep + os.environ.get("PYTHONPATH", ""))
    main(["gate", "env"])  # passes or fails with this box's toolchain; what matters is what ran
    assert ran(tmp_path) == []


@pytest.mark.parametrize("var", ["PATH", "PYTHONPATH", "LD_LIBRARY_PATH"])
def test_a_gates_child_inherits_no_search_path_entry_that_names_the_workspace(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], var: str) -> None:
    """From the user's shell: an empty, `.` or relative entry reaches no gate's child (a committed
    libcudart.so would be loaded by torch there); one with no absolute entry left is unset, since an
    empty PATH itself looks in the current folder."""
    ws = tmp_path / "ws"
    seen = tmp_path / "seen.json"
    dump = f"import json, os; json.dump(os.environ.get({var!r}), open({str(seen)!r}, 'w'))"
    ws.mkdir()
    (ws / "cockpit.toml").write_text(f'[gates.env]\ncommand = {json.dumps([sys.executable, "-c", dump])}\n')
    assert main(["--workspace", str(ws), "new", "mine"]) == 0
    assert main(["--workspace", str(ws), "trust", "allow"]) == 0
    absolute = os.environ["PATH"] if var == "PATH" else str(tmp_path / "lib")
    for given, passed in ((os.pathsep.join(["", absolute, ".", "lib", ""]), absolute), (":.:lib", None)):
        monkeypatch.setenv(var, given)
        assert main(["--workspace", str(ws), "gate", "env"]) == 0, capsys.readouterr().err
        assert json.loads(seen.read_text()) == passed


# --- what a running tune reads again --------------------------------------------------------------

def test_a_tune_worker_runs_no_python_a_pull_named_after_the_tune_began(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`cockpit tune` checked the workspace; 15 minutes in, a `git pull` brings a cockpit.toml whose
    `[gates] python` nobody approved. Each worker reads cockpit.toml again (its store, its
    interpreter): it refuses in one line naming `cockpit trust`, and the new python never runs."""
    ws = tmp_path / "ws"
    ws.mkdir()
    plan = launch.new_run(ws, tile_plan())  # no cockpit.toml yet: nothing to trust
    launch.write_plan(ws, plan)
    marker_script(ws / "tools" / "python", tmp_path / "python-ran")
    (ws / "cockpit.toml").write_text('[gates]\npython = "tools/python"\n')  # the pull
    capsys.readouterr()
    assert worker.main(["--workspace", str(ws), "--plan", str(ws / plan.run_dir / PLAN_NAME),
                        "--start", "0"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "`cockpit trust allow`" in err, err
    assert ran(tmp_path) == []


def test_a_tune_worker_never_imports_a_cockpit_package_committed_in_the_workspace(tmp_path: Path) -> None:
    """`python -m` puts the current folder first on sys.path: started in the workspace, a worker
    would be the clone's own `cockpit/tune/worker.py` (or import its `optuna.py`)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    plan = launch.new_run(ws, tile_plan())
    launch.write_plan(ws, plan)
    for package in ("cockpit", "cockpit/tune"):
        (ws / package).mkdir()
        (ws / package / "__init__.py").write_text("")
    (ws / "cockpit" / "tune" / "worker.py").write_text(f"open({str(tmp_path / 'worker-py-ran')!r}, 'w')\n")
    (ws / "cockpit.toml").write_text('[gates]\npython = "tools/python"\n')  # untrusted: the real one stops
    codes = launch.run_workers(ws, plan, [Gpu(0, "GPU-0", "H100 80GB HBM3", "sm_90")], ws / "logs", lambda: None)
    assert ran(tmp_path) == [] and codes == [2], [p.read_text() for p in (ws / "logs").iterdir()]
