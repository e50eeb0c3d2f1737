"""The house's layers (docs/architecture.md): declared as import-linter contracts in pyproject.toml
and kept; the core never imports Textual, nor itself in a circle; the UI never imports torch; the
TUI's first frame stays light."""

from __future__ import annotations

import ast
import graphlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

import cockpit

PACKAGE = Path(cockpit.__file__).parent
ROOT = PACKAGE.parent
CORE = sorted(p for p in PACKAGE.rglob("*.py")
              if not {"ui", "cli"} & set(p.relative_to(PACKAGE).parts) and p.name != "__main__.py")


def test_the_package_layers_in_pyproject_are_kept() -> None:
    # pyproject.toml's [tool.importlinter] contracts: a `layers` contract from cli down to the
    # ground modules (every package named in it), the UI's rooms in layers of their own, no Textual
    # in the core, no torch outside probes, probes on their own. `lint-imports` runs them in the
    # README's test command too.
    out = subprocess.run(
        [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports; "
         "sys.exit(lint_imports(no_cache=True, no_logo=True))"],
        cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert "6 kept, 0 broken" in out.stdout


def imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_core_modules_never_import_textual_or_rich() -> None:
    offenders = {str(p.relative_to(PACKAGE)): sorted(imported_modules(p) & {"textual", "rich"})
                 for p in CORE}
    offenders = {k: v for k, v in offenders.items() if v}
    assert offenders == {}


def test_only_the_verbs_that_draw_import_the_ui() -> None:
    drawing = {"tui.py", "screenshot.py"}
    for path in sorted((PACKAGE / "cli").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        modules = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        ui = sorted(m for m in modules if m.startswith(("cockpit.ui", "textual", "rich")))
        assert bool(ui) == (path.name in drawing), (path.name, ui)


def _modules_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys; print('\\n'.join(sys.modules))"],
        capture_output=True, text=True, check=True, timeout=60,
    ).stdout
    return {line.split(".")[0] for line in out.splitlines()}


def test_importing_the_whole_core_loads_no_textual() -> None:
    names = [".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts) for p in CORE]
    code = "\n".join(f"import {n}" for n in names if not n.endswith("__main__"))
    assert "textual" not in _modules_after(code)


def test_the_ui_never_imports_torch_nor_heavy_modules_before_the_first_frame() -> None:
    loaded = _modules_after("import cockpit.ui.app")
    assert "torch" not in loaded
    assert not loaded & {"numpy", "pynvml"}, "keep the first frame's import path light"


def test_what_an_idle_cockpit_never_uses_loads_when_first_used() -> None:
    # Each of these is code an idle session never runs; together ~1.5 MiB of the 10 MiB the
    # cockpit may hold above Textual (bench/telemetry.py): gate parsers load with the first run,
    # the pattern library (and YAML) with the first match or the browser, the tune's fold and
    # its chart (and `statistics`) with the first search, the palette's pattern search with it;
    # the gate runner with the first run. `hashlib` maps OpenSSL's libcrypto (~0.55 MiB).
    out = subprocess.run(
        [sys.executable, "-c", "import cockpit.ui.app, sys; print('\\n'.join(sys.modules))"],
        capture_output=True, text=True, check=True, timeout=60).stdout.split()
    lazy = {"cockpit.gates.bench.gate", "cockpit.gates.correctness.gate", "cockpit.gates.build.gate", "cockpit.gates.profile.gate",
            "cockpit.gates.sanitize.gate", "cockpit.gates.sanitize.findings",
            "cockpit.gates.env.gate", "cockpit.hardware.limits", "cockpit.hardware.occupancy",
            "cockpit.hardware.symbols", "cockpit.hardware.itanium", "cockpit.telemetry.validity",
            "cockpit.patterns.library", "yaml", "cockpit.ui.screens.patterns", "cockpit.ui.widgets.gate_results",
            "cockpit.tune.progress", "statistics", "textual.widgets._sparkline",
            "cockpit.gates.process", "cockpit.gates.log_follow", "cockpit.gates.log_cap", "hashlib",
            # the crash screen's traceback: pygments, importlib.metadata (email) and attrs, ~3 MiB
            "rich.traceback", "pygments", "email", "attr"}
    assert "cockpit.ui.controllers.gate_board" in out and sorted(lazy & set(out)) == []


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_core_modules_never_import_in_a_circle_not_even_for_type_hints() -> None:
    modules = {_module_name(p): p for p in CORE}
    imports: dict[str, set[str]] = {}
    for name, path in modules.items():
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.update(f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules else node.module
                             for a in node.names)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
        imports[name] = {m for m in found if m in modules and m != name}

    try:
        tuple(graphlib.TopologicalSorter(imports).static_order())
    except graphlib.CycleError as exc:
        pytest.fail("import circle: " + " -> ".join(exc.args[1]))


HEADLESS_SESSION = """
import asyncio, json, sys, tempfile
from pathlib import Path
from cockpit.clock import FakeClock
from cockpit.config import Config
from cockpit.telemetry.recording import ReplaySampler
from cockpit.ui.app import CockpitApp
from cockpit.session.workspace import Workspace, create_session

async def main() -> None:
    ws, clock = Workspace(Path(tempfile.mkdtemp())), FakeClock(1_795_000_000.0)
    ref = create_session(ws, Config(), "Vectorize K loads", "optimize", clock.now())
    replay = ReplaySampler.from_path(Path(sys.argv[1]), clock)
    app = CockpitApp(ws, Config(status_every_s=10**6), ref, clock=clock, tick_s=3600, typing_gap_s=0,
                     telemetry=replay, gpu_every_s=3600)
    async with app.run_test(size=(160, 48)) as pilot:
        for _ in range(12):
            await app.gpu_polled()
            await pilot.pause()
            clock.advance(1)
            app.gpu.poll()
        await app.gpu_polled()
        await pilot.press("n", "y", "o", "escape", "H")
        await pilot.pause()
        await pilot.press("escape")
    types = [json.loads(line)["type"] for line in ref.journal.read_text().splitlines()]
    print(json.dumps({"gpu_summary": types.count("gpu_summary"),
                      "modules": sorted({m.split(".")[0] for m in sys.modules})}))

asyncio.run(main())
"""


def test_a_headless_session_with_replayed_telemetry_never_loads_numpy_nor_the_report_stack() -> None:
    # The TUI's own path: GPU panel and sparklines fed from a recording, a phase ended (its GPU
    # summary journaled), the pattern browser and the History screen opened and closed.
    recording = Path(__file__).parent / "fixtures" / "telemetry" / "loaded-h200.jsonl"
    out = subprocess.run([sys.executable, "-c", HEADLESS_SESSION, str(recording)],
                         capture_output=True, text=True, check=True, timeout=120).stdout
    seen = json.loads(out.splitlines()[-1])
    assert seen["gpu_summary"] == 1
    loaded = set(seen["modules"])
    assert "textual" in loaded and "cockpit" in loaded
    assert sorted(loaded & {"numpy", "matplotlib", "jinja2", "optuna", "torch", "pynvml"}) == []
