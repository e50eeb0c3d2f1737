"""The first `cockpit workload show` waits on a child that imports torch (15-40 s on a fresh box):
it says at once, on stderr, what it is doing and in which Python (and why that one), then the
time so far, a line every few seconds into a pipe or a counter in place on a terminal. stdout
holds the answer alone, `--json` one JSON object. The slow child here is a shell script that
answers only once it has been announced and a tick has been said: never torch."""

from __future__ import annotations

import io
import json
import sys
import time
from pathlib import Path

import pytest

from cockpit.cli import main, waiting
from cockpit.gates.interpreter import forget
from cockpit.probes.workload_load import manifest_json
from cockpit.workload.spec import Reference, Workload, axes
from tests.trusted import trust

WAIT_S = 30
"""How long the fake child waits to be announced before it gives up (a generous deadline)."""


class Stderr(io.StringIO):
    """stderr as a pipe or a terminal: what was written, and a file touched for each thing said,
    which the fake child waits for."""

    def __init__(self, said: Path, tty: bool = False) -> None:
        super().__init__()
        self.said, self.tty = said, tty

    def write(self, text: str) -> int:
        if text.startswith("cockpit: describing the workload"):
            (self.said / "announced").touch()
        if text.startswith(("cockpit: still describing the workload: ", "\r  ")):
            (self.said / "ticked").touch()
        return super().write(text)

    def isatty(self) -> bool:
        return self.tty


def slow_python(tmp_path: Path) -> Path:
    """A gates' Python with a CUDA torch, whose describe child answers only after it was announced
    and a tick was said (WAIT_S at most: then it fails, as a silent wait would)."""
    w = Workload(name="scale", candidates={"ours": lambda x: x},
                 references=(Reference("fp64", lambda x: x, oracle=True),),
                 make_inputs=lambda seed, **shape: (), test_grid=axes(N=[7]), bench_grid=axes(N=[4096]))
    (tmp_path / "manifest.json").write_text(json.dumps(manifest_json(w, "workloads/scale.py")))
    exe = tmp_path / "python"
    exe.write_text(f"""#!/bin/sh
if [ "$1" = "-c" ]; then echo 2.5.0 12.4 3.11.9; exit 0; fi
i=0
while [ ! -f "{tmp_path}/announced" ] || [ ! -f "{tmp_path}/ticked" ]; do
  i=$((i + 1)); [ $i -gt {WAIT_S * 20} ] && {{ echo "never told while it waited"; exit 1; }}
  sleep 0.05
done
printf 'MANIFEST '; cat "{tmp_path}/manifest.json"
""")
    exe.chmod(0o755)
    return exe


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    forget()
    monkeypatch.setattr(waiting, "LINE_EVERY_S", 0.2)  # a tick soon: the child waits for one
    monkeypatch.setattr(waiting, "COUNT_EVERY_S", 0.1)
    ws = tmp_path / "ws"
    (ws / "workloads").mkdir(parents=True)
    (ws / "workloads" / "scale.py").write_text("WORKLOAD = None  # read by the child only\n")
    (ws / "cockpit.toml").write_text(f'[workload]\nmodule = "workloads/scale.py"\n\n'
                                     f'[gates]\npython = "{slow_python(tmp_path)}"\n')
    return trust(ws)


def test_the_first_workload_show_says_what_it_waits_on_and_counts_into_a_pipe(
        ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    err = Stderr(tmp_path)
    monkeypatch.setattr(sys, "stderr", err)
    assert main(["--workspace", str(ws), "workload", "show", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["name"] == "scale"  # stdout: the answer alone
    lines = [line for line in err.getvalue().splitlines()  # a loaded box may tick while it asks too
             if not line.startswith("cockpit: still finding the gates' Python")]
    python = tmp_path / "python"
    assert lines[0] == (f"cockpit: finding the gates' Python: asking {python} whether torch imports "
                        "(once: the answer is kept in your cache)")
    assert lines[1] == (f"cockpit: describing the workload in {python} ([gates] python ({ws}/cockpit.toml:5); "
                        "torch 2.5.0 (CUDA 12.4)): a child that imports torch and the workload, 15-40 s the "
                        "first time, then kept until a file it reads changes")
    assert lines[2].startswith("cockpit: still describing the workload: ") and lines[2].endswith(" s")
    assert "\r" not in err.getvalue()  # a pipe gets lines, never a counter in place


def test_a_described_workload_answers_at_once_and_says_nothing(
        ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "stderr", Stderr(tmp_path))
    assert main(["--workspace", str(ws), "workload", "show"]) == 0
    assert "workload   scale" in capsys.readouterr().out
    err = Stderr(tmp_path)
    monkeypatch.setattr(sys, "stderr", err)
    assert main(["--workspace", str(ws), "workload", "show"]) == 0  # nothing changed: no child
    assert err.getvalue() == "" and "workload   scale" in capsys.readouterr().out


def test_on_a_terminal_the_time_so_far_is_one_counter_rewritten_in_place(
        ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    err = Stderr(tmp_path, tty=True)
    monkeypatch.setattr(sys, "stderr", err)
    assert main(["--workspace", str(ws), "workload", "show", "--fresh"]) == 0
    said = err.getvalue()
    waited = said[said.index("cockpit: describing the workload"):].split("\n", 1)[1]
    assert waited.startswith("\r  0 s so far\x1b[K") or waited.startswith("\r  1 s so far\x1b[K")
    assert waited.endswith(" s\x1b[K\n") and "\r  took " in waited and waited.count("\n") == 1
    assert "workload   scale" in capsys.readouterr().out


def test_the_counter_stops_when_the_wait_ends_even_when_it_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(waiting, "LINE_EVERY_S", 0.05)
    out = io.StringIO()
    with pytest.raises(RuntimeError), waiting.said_while("describing the workload", " in /x/python", out):
        deadline = time.monotonic() + WAIT_S
        while "still" not in out.getvalue():
            assert time.monotonic() < deadline
            time.sleep(0.01)
        raise RuntimeError("the child failed")
    said = out.getvalue()
    time.sleep(0.2)
    assert out.getvalue() == said  # nothing more once it ended
    assert said.startswith("cockpit: describing the workload in /x/python\ncockpit: still describing")
