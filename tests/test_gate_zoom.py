"""The zoomed gate pane (issue 36, item 3): ctrl+f on the gate's result or log fills the window with
the whole pane, its long lines wrapped instead of cut, and `/` searches it: matches highlighted, the
first scrolled into view, Enter keeps it, n the next, N the one before, esc closes the search and a
second esc leaves the zoom. `/` outside the zoom zooms the pane and opens its search; in the editor
it is a slash."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from rich.style import Style

from cockpit.config import Config
from cockpit.session import events as ev
from cockpit.session.journal import JournalWriter
from cockpit.session.workspace import SessionRef, Workspace
from cockpit.ui.app import CockpitApp
from cockpit.ui.widgets.key_bar import KeyBar
from cockpit.ui.widgets.pane_reader import CURRENT, MATCH, PaneReader, find_matches, fold

from .conftest import T0
from .waiting import until

FAR = "RuntimeError: CUDA error: an illegal memory access was encountered"
LONG = "nvcc -O3 " + " ".join(f"-I/opt/deps/include/tree{i:03d}" for i in range(40)) + " -c attention.cu"


def long_build_log(ref: SessionRef) -> None:
    """A finished build whose raw log is 3,000 lines: a 1,300-character compiler line near the top,
    the error deep in it (line 2,400) and again near the end (line 2,950)."""
    lines = [f"[{i}/3000] compiling tile {i}" for i in range(3000)]
    lines[5] = LONG
    lines[2400] = FAR
    lines[2950] = "the same " + FAR.lower()
    log = ref.path / "logs" / "001-build.log"
    log.parent.mkdir(exist_ok=True)
    log.write_text("\n".join(lines) + "\n")
    writer = JournalWriter(ref.journal)
    writer.append(ev.gate_started(T0 + 60, "001-build", "build", ("x",), str(log), 1))
    writer.append(ev.gate_finished(T0 + 100, "001-build", "build", "fail", "build failed", 40.0, 1, str(log), {}))
    writer.close()


def make_app(ws: Workspace, ref: SessionRef) -> CockpitApp:
    return CockpitApp(ws, Config(status_every_s=10**6), ref, tick_s=3600, gpu_every_s=0, typing_gap_s=0)


def row_text(reader: PaneReader, row: int) -> str:
    """What `row` of the reader's text (from its top) reads, wherever it is scrolled."""
    return reader.render_line(row - reader.scroll_offset.y).text


def row_styles(reader: PaneReader, row: int) -> list[Style]:
    """The styles drawn on `row` of the reader's text (from its top), scrolled there."""
    strip = reader.render_line(row - reader.scroll_offset.y)
    return [segment.style for segment in strip if segment.style is not None]


def highlighted(reader: PaneReader, row: int, style: Style) -> bool:
    return any(s.bgcolor == style.bgcolor for s in row_styles(reader, row))


def in_view(reader: PaneReader, row: int) -> bool:
    return reader.scroll_offset.y <= row < reader.scroll_offset.y + reader.size.height


async def test_a_long_raw_log_zoomed_is_wrapped_and_searched_deep_in_it(ws, session) -> None:
    long_build_log(session)
    app = make_app(ws, session)
    async with app.run_test(size=(120, 40)) as pilot:
        app.set_focus(app.gate_panel)
        await pilot.press("down")  # build
        await pilot.pause()
        detail = app.gate_detail
        assert detail.run_id == "001-build" and len(detail.output_log.lines) == 3000
        detail.output_log.focus()
        await pilot.press("ctrl+f")
        await pilot.pause()
        reader = detail.reader
        assert app.screen.maximized is detail and app.focused is reader
        # the header and the key bar stay, and the key bar offers the search
        assert app.header.region.height > 0 and "/ search" in app.screen.query_one(KeyBar).render().plain
        # wrapped, not cut: the 1,300-character line takes as many rows as it needs, every character drawn
        width = reader.size.width
        assert width < len(LONG) and reader.virtual_size.height >= 3000 + len(LONG) // width
        assert in_view(reader, reader.row_of((2999, 0, 0)))  # where the pane's log was: its end
        top = reader.row_of((5, 0, 0))
        drawn = "".join(row_text(reader, row) for row in range(top, top + len(fold(LONG, width))))
        assert "".join(drawn.split()) == "".join(LONG.split())

        await pilot.press("slash")
        await pilot.pause()
        assert detail.searching and app.focused is detail.search_bar.term
        await pilot.press(*"illegal memory")
        await pilot.pause()
        assert [m[0] for m in reader.matches] == [2400, 2950] and reader.current == 0
        first = reader.row_of(reader.matches[0])
        assert in_view(reader, first) and highlighted(reader, first, CURRENT)
        assert str(detail.search_bar.query_one("#search-count").render()) == "1/2"

        await pilot.press("enter")  # keeps the match; the reader takes the keys
        await pilot.pause()
        assert app.focused is reader and reader.current == 0
        await pilot.press("n")
        await pilot.pause()
        second = reader.row_of(reader.matches[1])
        assert reader.current == 1 and in_view(reader, second) and highlighted(reader, second, CURRENT)
        assert highlighted(reader, first, MATCH) and not highlighted(reader, first, CURRENT)
        await pilot.press("N")
        await pilot.pause()
        assert reader.current == 0 and in_view(reader, first)
        await pilot.press("n")
        assert reader.current == 1  # n and N did not run their commands (next phase, new pattern)
        assert app.live is not None and app.live.state.current_run.phase == "Environment"  # type: ignore[union-attr]

        await pilot.press("escape")  # closes the search, the zoom stays
        await pilot.pause()
        assert not detail.searching and app.screen.maximized is detail and not reader.matches
        assert not highlighted(reader, second, MATCH)
        await pilot.press("escape")  # leaves the zoom
        await pilot.pause()
        assert app.screen.maximized is None and app.focused is detail.output_log


async def test_slash_outside_the_zoom_zooms_the_gate_s_result_and_searches_it(ws, session) -> None:
    """The H200's recorded bench: / from the gate list opens the zoomed result, searched."""
    report = json.loads((Path(__file__).parent / "fixtures" / "gpu" / "gates" / "gate-bench.json").read_text())
    log = session.path / "logs" / "001-bench.log"
    log.parent.mkdir(exist_ok=True)
    log.write_text("the raw log\n")
    writer = JournalWriter(session.journal)
    writer.append(ev.gate_started(T0 + 60, "001-bench", "bench", ("x",), str(log), 1))
    writer.append(ev.gate_finished(T0 + 100, "001-bench", "bench", report["status"], report["summary"], 40.0, 0,
                                   str(log), report["result"]))
    writer.close()
    app = make_app(ws, session)
    async with app.run_test(size=(80, 24)) as pilot:
        app.set_focus(app.gate_panel)
        await pilot.press("down", "down", "down")
        await pilot.pause()
        await pilot.press("slash")
        await pilot.pause()
        detail, reader = app.gate_detail, app.gate_detail.reader
        assert app.screen.maximized is detail and detail.searching
        await pilot.press(*"S8192 D128 bf16 causal")
        await pilot.pause()
        assert len(reader.matches) == 1 and in_view(reader, reader.row_of(reader.matches[0]))
        assert "0.0066" in "\n".join(reader.plain)  # the result, every number whole
        await pilot.press("escape", "escape")
        await pilot.pause()
        assert app.screen.maximized is None and app.focused is detail.query_one("#gate-result")


async def test_a_slash_typed_in_the_editor_is_a_slash(ws, session) -> None:
    app = make_app(ws, session)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press("tab", *"smem/block")
        await pilot.pause()
        assert app.screen.maximized is None and not app.gate_detail.searching
        app.editor.flush()
    assert session.log_md.read_text().endswith("smem/block")


def test_matches_are_found_in_any_case_in_reading_order_and_long_lines_fold_at_spaces() -> None:
    assert find_matches(["Error here", "no", "an error, another ERROR"], "error") == [
        (0, 0, 5), (2, 3, 8), (2, 18, 23)]
    assert find_matches(["a.b"], ".") == [(0, 1, 2)]  # the term is text, not a pattern
    assert fold("short", 10) == [0]
    assert fold("aaaa bbbb cccc dddd", 10) == [0, 10]  # at the space near the edge
    assert fold("x" * 25, 10) == [0, 10, 20]  # a path with no space: at the edge


def test_a_word_that_fits_a_row_is_never_cut_wherever_its_space_is() -> None:
    assert fold("hello wonderful world", 12) == [0, 6, 16]  # was cut at 12: "hello wonder|ful"
    assert fold("ab    cd", 3) == [0, 6]  # the spaces a row ends with are not drawn on the next
    assert fold("see /a/path/longer/than/a/row here", 10) == [0, 4, 14, 24]  # a long path: at the edge
    assert fold("héllo wönderful wörld", 12) == [0, 6, 16]  # not ASCII: counted in cells, the same rule
    assert fold("日本語 日本語日本語", 8) == [0, 4, 8]  # wide characters: a word wider than a row is cut


def words_cut(line: str, rows: list[str], width: int) -> list[str]:
    """The words of `line` no wider than a row that its drawn `rows` show in two pieces."""
    pieces = iter(piece for row in rows for piece in row.split())
    cut = []
    for word in line.split():
        shown = next(pieces)
        parts = 1
        while shown != word:
            shown += next(pieces)
            parts += 1
        if parts > 1 and len(word) <= width:
            cut.append(word)
    return cut


async def test_l_then_the_zoom_at_80x24_wraps_the_raw_log_at_words(ws, session) -> None:
    """The recorded H200 env log, raw (l) and zoomed (ctrl+f) in an 80x24 pane: a word that fits a
    row is never cut at the edge (they were: "LD_LIB|RARY_PATH", "th|e", "doe|s"); only a path
    longer than a row is."""
    gpu = Path(__file__).parent / "fixtures" / "gpu"
    log = session.path / "logs" / "001-env.log"
    log.parent.mkdir(exist_ok=True)
    lines = (gpu / "env-run-h200.log").read_text().splitlines()
    log.write_text("\n".join(lines) + "\n")
    writer = JournalWriter(session.journal)
    writer.append(ev.gate_started(T0 + 60, "001-env", "env", ("x",), str(log), 1))
    writer.append(ev.gate_finished(T0 + 65, "001-env", "env", "warn", "3 warnings, 13 passed", 5.2, 0, str(log),
                                   json.loads((gpu / "env-result-h200.json").read_text())))
    writer.close()
    app = make_app(ws, session)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        detail = app.gate_detail
        detail.query_one("#gate-result").focus()
        await pilot.press("l", "ctrl+f")
        await pilot.pause()
        reader = detail.reader
        assert detail.raw_log and app.screen.maximized is detail and reader.plain == lines
        width = reader.size.width
        cut = {}
        for i, line in enumerate(lines):
            top, bottom = reader.row_of((i, 0, 0)), reader.row_of((i + 1, 0, 0)) if i + 1 < len(lines) else None
            rows = [row_text(reader, row) for row in range(top, bottom or reader.virtual_size.height)]
            cut.update(dict.fromkeys(words_cut(line, rows, width)))
        assert list(cut) == []
        assert any(len(line) > width and " " in line for line in lines)  # lines that wrap, words in them


async def test_a_running_gate_zoomed_streams_its_new_lines_into_the_reader_and_follows_them(ws, session, tmp_path) -> None:
    import sys

    from cockpit.clock import FakeClock
    from cockpit.config import GateConfig

    go = tmp_path / "go"
    code = ("import os, time\nprint(*(f'configuring {i}' for i in range(100)), sep='\\n', flush=True)\n"
            f"while not os.path.exists({str(go)!r}): time.sleep(0.02)\n"
            f"print({LONG!r}, flush=True)\ntime.sleep(30)\n")
    config = Config(gates={"env": GateConfig(command=(sys.executable, "-c", code))}, status_every_s=10**6)
    app = CockpitApp(ws, config, session, clock=FakeClock(), tick_s=3600, gpu_every_s=0, typing_gap_s=0)
    async with app.run_test(size=(100, 30)) as pilot:
        detail, reader = app.gate_detail, app.gate_detail.reader
        await pilot.press("r")
        await until(pilot, lambda: "configuring 99" in detail.output_log.lines,
                    "the gate's first 100 lines in its detail")
        detail.output_log.focus()
        await pilot.press("ctrl+f")
        await pilot.pause()
        assert app.screen.maximized is detail and len(reader.plain) == 100 and in_view(reader, 99)
        go.touch()
        await until(pilot, lambda: LONG in reader.plain, "the gate's line after them in the zoomed reader")
        last = reader.row_of((100, 0, 0))
        assert reader.virtual_size.height == 100 + len(fold(LONG, reader.scrollable_content_region.width))
        assert in_view(reader, last) and row_text(reader, last).startswith("nvcc -O3")  # it followed
        run = app.gates.run
        assert run is not None
        run.cancel()
        assert await asyncio.to_thread(run.wait, 30)
        await pilot.pause()


async def test_zoomed_in_an_80x24_pane_the_gate_s_head_is_whole_and_back_in_one_line(ws, session) -> None:
    """At 80x24 the pane gives its head one line (the result must show); the zoom has the room."""
    report = json.loads((Path(__file__).parent / "fixtures" / "gpu" / "gates" / "gate-bench.json").read_text())
    log = session.path / "logs" / "001-bench.log"
    log.parent.mkdir(exist_ok=True)
    log.write_text("the raw log\n")
    writer = JournalWriter(session.journal)
    writer.append(ev.gate_started(T0 + 60, "001-bench", "bench", ("x",), str(log), 1))
    writer.append(ev.gate_finished(T0 + 100, "001-bench", "bench", report["status"], report["summary"], 40.0, 0,
                                   str(log), report["result"]))
    writer.close()
    app = make_app(ws, session)
    async with app.run_test(size=(80, 24)) as pilot:
        app.set_focus(app.gate_panel)
        await pilot.press("down", "down", "down")
        await pilot.pause()

        def head() -> str:
            return str(app.screen.query_one("#gate-head").render())

        assert "…" in head().splitlines()[0] and "window (36 of 149 samples)" not in head()
        app.gate_detail.query_one("#gate-result").focus()
        await pilot.press("ctrl+f")
        await pilot.pause()
        await pilot.pause()
        assert app.screen.maximized is app.gate_detail
        assert "window (36 of 149 samples)" in " ".join(head().split())
        await pilot.press("ctrl+f")
        await pilot.pause()
        await pilot.pause()
        assert "…" in head().splitlines()[0] and "window (36 of 149 samples)" not in head()
