"""A stranger's workspace cannot hang the cockpit: a FIFO (or a folder, a socket) where the journal,
SESSION.md, a gate log or a pattern file should be is one line naming the file and what it is, and
every verb and the TUI go on. Before, `open` waited for a writer for ever: the TUI's main thread with
it (no `q`, no ctrl+c), and `status`, `export`, `history` and `gate env` never returned.

Each test runs under a watchdog that opens the FIFOs for writing once the deadline has passed: a
reader stuck in `open` then gets an empty file, so a regression fails the test instead of hanging
the suite."""

from __future__ import annotations

import os
import socket
import sys
import threading
import time
from pathlib import Path

import pytest

from cockpit.cli import main
from cockpit.config import load_config
from cockpit.files import RefusedFile, open_file, read_file, read_head, read_tail, regular_fd
from cockpit.session import events as ev
from cockpit.session.journal import JournalWriter
from cockpit.session.workspace import SessionRef, Workspace, create_session
from tests.trusted import trust

from .conftest import T0

RETURNS_WITHIN_S = 5.0
"""Each verb returns in well under 2 s here; 5 s leaves a busy 2-core box room (before: never)."""
TUI_WITHIN_S = 15.0
"""The TUI up, the keys pressed and `q` taken (about 3 s here)."""


class Watchdog:
    """From `after_s` on, opens each FIFO for writing and closes it again, until the block ends: a
    reader blocked in `open` (or `read`) gets an empty file and goes on. `unblocked` names the FIFOs
    it had to open: a reader was stuck on them."""

    def __init__(self, fifos: list[Path], after_s: float) -> None:
        self.fifos, self.after_s = fifos, after_s
        self.unblocked: list[Path] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Watchdog:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        if self._stop.wait(self.after_s):
            return
        while not self._stop.is_set():
            for fifo in self.fifos:
                try:
                    fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)  # ENXIO while no reader waits
                except OSError:
                    continue
                os.close(fd)
                self.unblocked.append(fifo)
            self._stop.wait(0.05)


def workspace(tmp_path: Path) -> tuple[Workspace, SessionRef]:
    """A workspace whose env gate is a fake command, with a session that ran it once (its log
    logs/001-env.log, so the history's pattern triggers read it)."""
    (tmp_path / "cockpit.toml").write_text(f'[gates.env]\ncommand = ["{sys.executable}", "-c", "print(1)"]\n')
    trust(tmp_path)  # the test's own: its command may run
    ws = Workspace(tmp_path)
    ref = create_session(ws, load_config(tmp_path), "a clone of someone's work", "optimize", T0)
    log = ref.path / "logs" / "001-env.log"
    log.parent.mkdir()
    log.write_text("ok\n")
    writer = JournalWriter(ref.journal)
    writer.append(ev.gate_started(T0 + 1, "001-env", "env", ("python",), f"sessions/{ref.id}/logs/001-env.log", 1))
    writer.append(ev.gate_finished(T0 + 2, "001-env", "env", "pass", "all checks pass", 1.0, 0,
                                   f"sessions/{ref.id}/logs/001-env.log", {}))
    writer.close()
    return ws, ref


def fifo_in_place_of(ws: Workspace, ref: SessionRef, which: str) -> Path:
    path = {"journal": ref.journal, "SESSION.md": ref.log_md, "gate log": ref.path / "logs" / "001-env.log",
            "pattern": ws.patterns_dir / "42-a-fifo.md"}[which]
    path.parent.mkdir(exist_ok=True)
    path.unlink(missing_ok=True)
    os.mkfifo(path)
    return path


VERBS = (("status",), ("export",), ("history",), ("gate", "env"), ("pattern", "list"))
NAMED_BY = {"journal": {"status", "export", "history", "gate"}, "SESSION.md": {"export"},
            "gate log": {"history", "export"}, "pattern": {"pattern"}}
"""The verbs that read the file, and so name it; the others never open it."""


def said(ws: Workspace, ref: SessionRef, out: str) -> list[str]:
    """What a verb said, on its stdout and stderr, and in the report `export` wrote."""
    lines = out.splitlines()
    report = ref.path / "REPORT.md"
    if report.exists():
        lines += report.read_text().splitlines()
    return lines


@pytest.mark.parametrize("which", list(NAMED_BY))
@pytest.mark.parametrize("argv", VERBS, ids=" ".join)
def test_every_verb_returns_and_names_a_fifo_in_place_of_a_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], which: str, argv: tuple[str, ...]) -> None:
    ws, ref = workspace(tmp_path)
    fifo = fifo_in_place_of(ws, ref, which)
    capsys.readouterr()
    started = time.monotonic()
    with Watchdog([fifo], RETURNS_WITHIN_S) as watchdog:
        main(["--workspace", str(ws.root), *argv])
    took = time.monotonic() - started
    assert not watchdog.unblocked and took < RETURNS_WITHIN_S, f"{' '.join(argv)} was stuck on {fifo.name}"
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    naming = [line for line in said(ws, ref, captured.out + captured.err) if fifo.name in line and "FIFO" in line]
    if argv[0] in NAMED_BY[which]:
        assert len(naming) == 1, naming
        assert "a FIFO, not a file: remove it or put the file back" in naming[0]
    else:
        assert naming == []
    assert fifo.exists() and not fifo.is_file()  # left as it is: nothing replaced it


def test_a_fifo_journal_is_one_line_for_the_session_named_by_id(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    ws, ref = workspace(tmp_path)
    fifo = fifo_in_place_of(ws, ref, "journal")
    capsys.readouterr()
    with Watchdog([fifo], RETURNS_WITHIN_S) as watchdog:
        assert main(["--workspace", str(ws.root), "--session", ref.id, "gate", "env"]) == 2
    assert not watchdog.unblocked
    err = capsys.readouterr().err
    assert err == f"cockpit: {fifo} is a FIFO, not a file: remove it or put the file back\n"
    assert not (ref.path / "logs" / "002-env.log").exists()  # refused before the gate ran


# The TUI ----------------------------------------------------------------------------------------

async def run_tui(ws: Workspace, ref: SessionRef | None, fifo: Path, select_env: bool = False) -> list[str]:
    """The TUI on `ref` under the watchdog: up, the pattern library and history opened and closed,
    then `q`; the toasts it showed, and the gate pane's text when `select_env`."""
    from cockpit.clock import FakeClock
    from cockpit.ui.app import CockpitApp

    app = CockpitApp(ws, load_config(ws.root), ref, clock=FakeClock(T0 + 5), tick_s=3600, typing_gap_s=0,
                     gpu_every_s=0)
    toasts: list[str] = []
    app.notify = lambda message, **kw: toasts.append(message)  # type: ignore[method-assign]
    started = time.monotonic()
    with Watchdog([fifo], TUI_WITHIN_S) as watchdog:
        async with app.run_test(size=(160, 48)) as pilot:
            await pilot.pause()
            if select_env:
                app.gates.select("env")
                await pilot.pause()
                toasts += [str(line) for line in app.gate_detail.output_log.lines]
            for key in ("o", "escape", "H", "escape", "q"):
                await pilot.press(key)
                await pilot.pause()
    assert not watchdog.unblocked and time.monotonic() - started < TUI_WITHIN_S, f"the TUI was stuck on {fifo}"
    return toasts


@pytest.mark.parametrize("which", ["journal", "SESSION.md", "gate log", "pattern"])
async def test_the_tui_opens_beside_a_fifo_and_names_it_once(tmp_path: Path, which: str) -> None:
    ws, ref = workspace(tmp_path)
    fifo = fifo_in_place_of(ws, ref, which)
    toasts = await run_tui(ws, ref, fifo, select_env=which == "gate log")
    naming = [t for t in toasts if fifo.name in t and "a FIFO, not a file" in t]
    assert len(naming) == 1, toasts


async def test_the_tui_with_no_session_names_the_one_whose_journal_is_a_fifo(tmp_path: Path) -> None:
    ws, ref = workspace(tmp_path)
    fifo = fifo_in_place_of(ws, ref, "journal")
    toasts = await run_tui(ws, None, fifo)
    naming = [t for t in toasts if ref.id in t]
    relative = fifo.relative_to(ws.root).as_posix()  # as cockpit export names it (the same words)
    assert len(naming) == 1 and f"{relative} is a FIFO, not a file" in naming[0], toasts


# The door itself --------------------------------------------------------------------------------

def test_only_a_regular_file_is_opened_and_each_other_kind_is_named(tmp_path: Path) -> None:
    fifo, folder, sock, link = (tmp_path / n for n in ("fifo", "folder", "sock", "link"))
    os.mkfifo(fifo)
    folder.mkdir()
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(sock))
    (tmp_path / "file").write_text("text\n")
    link.symlink_to(tmp_path / "file")
    with Watchdog([fifo], RETURNS_WITHIN_S) as watchdog:
        for path, kind in ((fifo, "a FIFO"), (folder, "a folder"), (sock, "a socket")):
            with pytest.raises(RefusedFile) as refused:
                open_file(path)
            assert str(refused.value) == f"{path} is {kind}, not a file: remove it or put the file back"
            assert isinstance(refused.value, OSError)  # a reader's `except OSError` still says "cannot read"
    assert not watchdog.unblocked
    server.close()
    assert read_file(link, 100, "a test file may be") == b"text\n"  # a symlink is followed, by default
    with pytest.raises(RefusedFile, match="is a symlink, not a file"):
        open_file(link, follow=False)
    with pytest.raises(FileNotFoundError):
        open_file(tmp_path / "missing")
    with pytest.raises(RefusedFile, match=r"is 5 bytes, over the 4 bytes a test file may be: not read"):
        read_file(tmp_path / "file", 4, "a test file may be")


def test_a_journal_writer_refuses_a_fifo_instead_of_waiting_for_a_reader(tmp_path: Path) -> None:
    fifo = tmp_path / "journal.jsonl"
    os.mkfifo(fifo)
    with Watchdog([fifo], RETURNS_WITHIN_S) as watchdog, pytest.raises(RefusedFile, match="a FIFO"):
        regular_fd(fifo, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    with pytest.raises(RefusedFile, match="a FIFO"):
        JournalWriter(fifo)
    assert not watchdog.unblocked


def test_the_head_and_the_tail_of_a_sparse_3_gb_file_read_only_what_is_asked(tmp_path: Path) -> None:
    big = tmp_path / "big"
    with open(big, "wb") as f:
        f.truncate(3 << 30)  # costs no disk
    head, st = read_head(big, 4096)
    tail, size = read_tail(big, 4096)
    assert len(head) == len(tail) == 4096 and st.st_size == size == 3 << 30
    with pytest.raises(RefusedFile, match="is 3 GB, over the 16 MB a test file may be"):
        read_file(big, 16 << 20, "a test file may be")
