"""`cockpit history` and the History screen fit the width they have: the outcome (the best valid
speedup and its level) first, then the speedups against the references, the long ids and objectives
last, cut with "…", never wrapped. Both ask one engine (report/history_columns.py) for the columns."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cockpit.cli import main
from cockpit.report.history_columns import HistoryColumn, cell_width, cut, fit_columns, history_columns
from cockpit.ui.screens.history_screen import HistoryScreen
from tests.test_history_screen import fixture_app

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
CLI_ORDER = ["OUTCOME", "DATE", "DURATION", "1ST VALID", "FIX → REALIZED", "MISTAKES", "PATTERNS", "WORKLOAD", "SESSION",
             "OBJECTIVE"]


@pytest.fixture
def examples(tmp_path: Path) -> Path:
    shutil.copytree(EXAMPLES, tmp_path / "examples")
    return tmp_path / "examples"


def history(ws: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> list[str]:
    """The table's lines (header and a row per session), without the trend under it."""
    assert main(["--workspace", str(ws), "history", *extra]) == 0
    out = capsys.readouterr().out
    return out.split("\n\n")[0].splitlines()


def titles(header: str) -> list[str]:
    return [t.strip() for t in header.split("  ") if t.strip()]


@pytest.mark.parametrize("columns", [80, 120, 200])
def test_history_fits_the_terminal_with_the_outcome_and_speedup_first(
        examples: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, columns: int) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    lines = history(examples, capsys)
    assert len(lines) == 5 and max(cell_width(line) for line in lines) <= columns  # 240 before
    shown = titles(lines[0])
    assert shown[0] == "OUTCOME" and shown == [t for t in CLI_ORDER if t in shown]
    assert [line.split()[:2] for line in lines[1:]] == [["0.70x", "HIGH"], ["0.70x", "HIGH"], ["0.77x", "HIGH"],
                                                      ["1.11x", "MEDIUM"]]
    assert "SESSION" in shown  # the id, cut to its stem at the least, still names the session
    assert "20261123-0849-2108" in lines[1]
    if columns < 200:  # the long names cut with an ellipsis, on the row's one line
        assert "…" in lines[1] and "reach-sdpa-s-flash-backend-with-the " not in lines[1]


def test_history_into_a_file_fits_100_columns_and_wide_prints_every_column_whole(
        examples: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)  # capsys: stdout is no terminal
    lines = history(examples, capsys)
    assert max(cell_width(line) for line in lines) <= 100
    wide = history(examples, capsys, "--wide")
    assert titles(wide[0]) == CLI_ORDER
    assert "20261123-0849-2108-reach-sdpa-s-flash-backend-with-the" in wide[1]
    assert wide[1].endswith("Reach SDPA's FLASH backend with the attention kernel on an H100: baseline, profile, "
                            "one fix, evaluate")


def test_history_json_is_the_same_at_any_width(
        examples: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    printed = []
    for columns in ("80", "200"):
        monkeypatch.setenv("COLUMNS", columns)
        assert main(["--workspace", str(examples), "history", "--json"]) == 0
        printed.append(json.loads(capsys.readouterr().out))
    assert printed[0] == printed[1] and round(printed[0]["sessions"][0]["best_speedup"], 2) == 0.70


def test_a_narrow_width_leaves_out_whole_columns_the_least_read_first_and_keeps_the_outcome() -> None:
    columns = history_columns(58, [("sdpa", "SDPA")])
    assert [c.key for c in columns][:2] == ["outcome", "vs:sdpa"]
    for room in (20, 40, 80, 120, 160, 400):
        fitted = fit_columns(columns, room)
        assert fitted[0][0].key == "outcome" and fitted[0][1] >= 16
        if room >= 40:
            assert sum(w for _, w in fitted) + 2 * (len(fitted) - 1) <= room
            assert [c.key for c, _ in fitted][:2] == ["outcome", "vs:sdpa"]
    assert [c.key for c, _ in fit_columns(columns, 400)] == [c.key for c in columns]
    assert dict((c.key, w) for c, w in fit_columns(columns, 400))["session"] == 58


def test_a_cell_is_cut_to_its_columns_cells_with_an_ellipsis() -> None:
    assert cut("20261123-0849-2108-reach", 19) == "20261123-0849-2108…"
    assert cut("0.70x HIGH", 19) == "0.70x HIGH"
    assert cut("注意力核", 5) == "注意…" and cell_width(cut("注意力核", 5)) == 5
    never_cut = HistoryColumn("vs:x", "vs x", 5, 5, 1)
    assert fit_columns([never_cut], None) == [(never_cut, 5)]


async def test_the_history_screen_shows_the_outcome_and_speedups_at_80_120_and_160_columns(tmp_path: Path) -> None:
    app, _ = fixture_app(tmp_path)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("H")
        await app.workers.wait_for_complete()
        screen = app.screen
        assert isinstance(screen, HistoryScreen)
        for width, height in ((160, 48), (120, 40), (80, 24)):
            await pilot.resize_terminal(width, height)
            grid = screen.query_one("DataTable")
            for _ in range(300):  # laid out again for the new width
                await pilot.pause(0.05)
                if screen.table is not None and screen.laid_for == width - 6 and grid.size.width == width - 2:
                    break
            labels = [str(c.label) for c in grid.ordered_columns]  # type: ignore[attr-defined]
            assert labels[:3] == ["outcome", "vs SDPA", "vs FLASH"], (width, labels)
            rest = [t.upper() for t in labels[3:]]
            assert rest == [t for t in CLI_ORDER if t in rest]  # the CLI's order
            assert grid.virtual_size.width <= grid.size.width, width  # nothing to scroll sideways to
            row = [str(cell) for cell in grid.get_row_at(0)]  # type: ignore[attr-defined]
            assert row[0].startswith("no valid bench (1 sus") and row[1:3] == ["—", "—"]
