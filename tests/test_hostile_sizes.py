"""A stranger's workspace cannot flood the cockpit: every file it reads is read up to a stated cap,
and every text it copies is cut with a count. Measured before: a 3 GB sparse result file (it costs
no disk) took `export` to 6.3 GB of memory and the bench row to 3.9 GB; three 10 MB strings in the
journal took the TUI's first frame 22 s and 584 MB; a 10 MB gate summary was copied whole into each
report; a 50 MB SESSION.md took 37 s to the first frame and 15 s a key. The user's files are never
changed: a cut is only ever in what is shown."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from cockpit.cli import main
from cockpit.clock import FakeClock
from cockpit.config import Config
from cockpit.session import events as ev
from cockpit.session.journal import JournalWriter, read_journal
from cockpit.session.logfile import MAX_EDIT_BYTES
from cockpit.session.state import fold
from cockpit.session.workspace import SessionRef, Workspace, create_session

from .conftest import T0

BIG = 10 << 20
FIRST_FRAME_S = 10.0
"""The TUI up on a journal holding 10 MB strings: ~1 s here, 44 s before; room for a busy box."""


def with_big_result(ws: Workspace) -> tuple[SessionRef, Path]:
    """A session whose bench run names a 3 GB sparse file as its result."""
    ref = create_session(ws, Config(), "a 3 GB result", "optimize", T0)
    big = ref.path / "results" / "001-bench.verdict.json"
    big.parent.mkdir()
    with open(big, "wb") as f:
        f.truncate(3 << 30)
    writer = JournalWriter(ref.journal)
    writer.append(ev.gate_started(T0 + 1, "001-bench", "bench", ("python",), f"sessions/{ref.id}/logs/001-bench.log", 1))
    finished = ev.gate_finished(T0 + 2, "001-bench", "bench", "pass", "1.20x vs SDPA", 1.0, 0,
                                f"sessions/{ref.id}/logs/001-bench.log", {"speedup": 1.2})
    finished["result_file"] = f"sessions/{ref.id}/results/001-bench.verdict.json"
    writer.append(finished)
    writer.close()
    return ref, big


def peak_mb(script: str) -> int:
    """The peak resident memory (MB) of a child Python that runs `script`: its VmHWM, its own
    memory's high-water mark (getrusage's ru_maxrss keeps the forking test process's across exec)."""
    code = script + ("\nprint(next(int(line.split()[1]) for line in open('/proc/self/status') "
                     "if line.startswith('VmHWM:')) // 1024)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    return int(done.stdout.split()[-1])


def test_export_never_reads_a_3_gb_result_whole_and_names_it(ws: Workspace) -> None:
    ref, big = with_big_result(ws)
    peak = peak_mb(f"from cockpit.cli import main\nmain(['--workspace', {str(ws.root)!r}, 'export', {ref.id!r}])")
    assert peak < 400, f"export peaked at {peak} MB"  # 6.3 GB before
    shown = f"sessions/{ref.id}/results/001-bench.verdict.json"
    lines = [line for line in (ref.path / "REPORT.md").read_text().splitlines() if shown in line]
    assert len(lines) == 1 and "is 3 GB, over the 16 MB a gate's result may be" in lines[0]
    assert big.stat().st_size == 3 << 30


def test_the_tui_shows_the_bench_row_of_a_3_gb_result_without_reading_it(ws: Workspace) -> None:
    ref, _ = with_big_result(ws)
    script = textwrap.dedent(f"""
        import asyncio
        from pathlib import Path
        from cockpit.clock import FakeClock
        from cockpit.config import Config
        from cockpit.session.workspace import SessionRef, Workspace
        from cockpit.ui.app import CockpitApp

        async def run():
            ref = SessionRef({ref.id!r}, None, Path({str(ref.path)!r}))
            app = CockpitApp(Workspace(Path({str(ws.root)!r})), Config(), ref, clock=FakeClock({T0 + 5}),
                             tick_s=3600, typing_gap_s=0, gpu_every_s=0)
            async with app.run_test(size=(160, 48)) as pilot:
                await pilot.pause()
                app.gates.select("bench")
                await pilot.pause()
                assert "1.20x vs SDPA" in str(app.gate_detail.query_one("#gate-head").render())

        asyncio.run(run())""")
    peak = peak_mb(script)
    assert peak < 400, f"the bench row took {peak} MB"  # 3.9 GB before


def with_big_strings(ws: Workspace) -> SessionRef:
    """A session whose journal holds a 10 MB status, a 10 MB note and a 10 MB gate summary."""
    ref = create_session(ws, Config(), "10 MB strings", "optimize", T0)
    writer = JournalWriter(ref.journal)
    writer.append(ev.status(T0 + 1, "s" * BIG, False))
    writer.append(ev.note(T0 + 2, "n" * BIG))
    writer.append(ev.gate_started(T0 + 3, "001-env", "env", ("python",), f"sessions/{ref.id}/logs/001-env.log", 1))
    writer.append(ev.gate_finished(T0 + 4, "001-env", "env", "fail", "g" * BIG, 1.0, 1,
                                   f"sessions/{ref.id}/logs/001-env.log", {}))
    writer.close()
    return ref


def test_10_mb_strings_in_the_journal_are_kept_cut_with_a_count(ws: Workspace) -> None:
    ref = with_big_strings(ws)
    state = fold(read_journal(ref.journal).events)
    cut = f" … ({BIG - 2000:,} more characters cut; the whole is in the journal)"
    assert state.statuses[-1].text == "s" * 2000 + cut
    assert state.notes[-1].text == "n" * 2000 + cut
    assert state.gate_runs[-1].summary == "g" * 2000 + cut
    assert ref.journal.stat().st_size > 3 * BIG  # the journal keeps them whole


def test_a_10_mb_gate_summary_is_cut_in_every_report(ws: Workspace, capsys) -> None:
    ref = with_big_strings(ws)
    assert main(["--workspace", str(ws.root), "export", ref.id]) == 0
    for name in ("REPORT.md", "report.html", "report.json"):
        text = (ref.path / name).read_text()
        assert len(text) < 200_000, name  # each 10 MB string was copied whole before
        assert "g" * 2000 in text and "g" * 2001 not in text, name
        assert "10,483,760 more characters cut; the whole is in the journal" in text, name
    summary = json.loads((ref.path / "report.json").read_text())["gates"][0]["summary"]
    assert summary.endswith("more characters cut; the whole is in the journal)")


async def test_the_tui_opens_at_once_on_10_mb_strings_and_echoes_a_key(ws: Workspace) -> None:
    from cockpit.ui.app import CockpitApp

    ref = with_big_strings(ws)
    app = CockpitApp(ws, Config(status_every_s=10**6), ref, clock=FakeClock(T0 + 5), tick_s=3600, typing_gap_s=0,
                     gpu_every_s=0)
    started = time.monotonic()
    async with app.run_test(size=(160, 48)) as pilot:
        while app.live is None and time.monotonic() - started < FIRST_FRAME_S:
            await pilot.pause()
        await pilot.pause()
        up = time.monotonic() - started
        app.editor.area.focus()
        await pilot.press("x")
        await pilot.pause()
        assert app.editor.area.text.endswith("x")
        assert app.live is not None and len(app.live.state.statuses[-1].text) < 2100
    assert up < FIRST_FRAME_S, f"the first frame took {up:.1f} s"


def test_a_journal_line_over_16_mb_is_skipped_and_named_never_held_whole(ws: Workspace, session: SessionRef) -> None:
    huge = json.dumps({"t": T0 + 1, "type": "note", "text": "h" * (20 << 20)})
    with session.journal.open("a") as f:
        f.write(huge + "\n")
        f.write(json.dumps(ev.status(T0 + 2, "after it", False)) + "\n")
        f.write(huge)  # and one more, unterminated: cut off mid-write
    read = read_journal(session.journal)
    assert [s.text for s in fold(read.events).statuses] == ["after it"]
    long = [p.describe(Path("journal.jsonl")) for p in read.problems]
    assert len(long) == 2 and all("a line of 20 MB, over the 16 MB an event may be" in p for p in long)
    assert "\n" not in long[0] and len(long[0]) < 300


async def test_a_50_mb_session_md_opens_read_only_in_part_with_a_line(ws: Workspace, session: SessionRef) -> None:
    from cockpit.ui.app import CockpitApp

    text = "- 10:00 measured: 1.2x, BN=64, no spills\n" * ((50 << 20) // 41)
    session.log_md.write_text(text)
    before = session.log_md.stat()
    app = CockpitApp(ws, Config(status_every_s=10**6), session, clock=FakeClock(T0 + 5), tick_s=3600,
                     typing_gap_s=0, gpu_every_s=0)
    toasts: list[str] = []
    app.notify = lambda message, **kw: toasts.append(message)  # type: ignore[method-assign]
    started = time.monotonic()
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        up = time.monotonic() - started
        editor = app.editor
        assert editor.area.read_only and "too big to edit here" in editor.border_subtitle
        assert len(editor.area.text) < MAX_EDIT_BYTES
        editor.area.focus()
        await pilot.press("x")
        editor.flush()
    assert up < FIRST_FRAME_S, f"the first frame took {up:.1f} s"  # 37 s before
    said = [t for t in toasts if "SESSION.md is 50 MB" in t]
    assert len(said) == 1 and "shown read-only" in said[0] and "\n" not in said[0]
    after = session.log_md.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)  # never written


def test_a_50_mb_session_md_is_cut_in_the_report_with_what_was_left_out(ws: Workspace, session: SessionRef) -> None:
    from cockpit.report.build import build_report

    session.log_md.write_text("# notes\n" + "x" * (50 << 20))
    notes = build_report(ws, session, now=T0 + 600).notes
    assert notes is not None and len(notes) < 300_000
    assert notes.splitlines()[-1] == ("… (SESSION.md is 50 MB: cut to its first 262,144 characters; "
                                      "the whole is in SESSION.md)")


def ended_parses(monkeypatch, ref: SessionRef) -> tuple[bool, int]:  # type: ignore[no-untyped-def]
    """Whether the session's journal reads as ended (as finding the open session asks it), and
    how many lines were parsed to answer."""
    from cockpit.session import opening

    parsed: list[int] = []
    real = opening.parse_bounded

    def counted(raw: bytes) -> object:
        parsed.append(len(raw))
        return real(raw)

    monkeypatch.setattr(opening, "parse_bounded", counted)
    return opening.journal_ended(ref.journal, ref.workspace), len(parsed)


def test_a_line_holding_the_end_s_name_40000_times_is_parsed_once(ws: Workspace, session: SessionRef,
                                                                  monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A 640 KB line written by hand, listing `"session_ended"` 40,000 times, took `cockpit status`
    4 min 19 s: the line was parsed again for every copy. Once now, and a real end after it is
    still found."""
    with open(session.journal, "ab") as f:
        f.write(b'{"type": "note", "t": 1, "text": "x", "tags": [' + b'"session_ended", ' * 40_000 + b'""]}\n')
    assert ended_parses(monkeypatch, session) == (False, 1)
    writer = JournalWriter(session.journal)
    writer.append(ev.session_ended(T0 + 2, "done"))
    writer.close()
    assert ended_parses(monkeypatch, session) == (True, 2)


def test_a_2_gb_sparse_line_ending_in_the_end_s_name_is_never_copied(ws: Workspace, session: SessionRef,
                                                                     monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """One 2 GB line (a sparse file: it costs no disk) that ends in `"session_ended"` took the first
    `cockpit status` 30 s and 6.3 GB: the line was copied to be parsed. A line longer than an event
    may be is skipped as the journal's reader skips it, unparsed."""
    with open(session.journal, "ab") as f:
        f.truncate((2 << 30) + f.tell())
        f.seek(0, 2)
        f.write(b'"session_ended"}\n')
    assert ended_parses(monkeypatch, session) == (False, 0)
