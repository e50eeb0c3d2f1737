"""The gate pane never cuts a value: the recorded H200 bench's table at the widths of an 80x24,
120x40 and 160x48 terminal shows every number whole (at 80x24 each one read `0.…`, at 120x40 the
config was folded into a column two cells wide)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from rich.console import Console

from cockpit.gates.catalog import read_result, view_of
from cockpit.ui.widgets.gate_results import render_result

FIXTURES = Path(__file__).parent / "fixtures" / "gpu"
BENCH = json.loads((FIXTURES / "gates" / "gate-bench.json").read_text())["result"]
ENV = json.loads((FIXTURES / "env-result-h200.json").read_text())
PANE_WIDTHS = {(80, 24): 36, (120, 40): 63, (160, 48): 100}
"""The gate pane's inner width at each terminal size (the right column less its border and padding)."""


def shown(result: object, gate: str, width: int) -> str:
    console = Console(width=width, record=True, color_system=None)
    console.print(render_result(gate, read_result(gate, result)))
    return console.export_text()


@pytest.mark.parametrize("size", list(PANE_WIDTHS))
def test_every_number_of_the_recorded_bench_is_shown_whole_at_every_size(size) -> None:  # type: ignore[no-untyped-def]
    text = shown(BENCH, "bench", PANE_WIDTHS[size])
    view = view_of("bench", read_result("bench", BENCH))
    assert view is not None
    [table] = view.tables
    words = set(text.split())
    for row in table.rows:
        config = row[0].text
        assert config in " ".join(text.split()), f"{config} is cut at {size}"
        for column, cell in zip(table.columns, row, strict=True):
            if column.numeric:
                assert cell.text in words, f"{column.title} {cell.text} of {config} is cut at {size}"
    assert "…" not in text
    assert all(len(line) <= PANE_WIDTHS[size] for line in text.splitlines())


def test_a_wide_pane_keeps_the_bench_table_and_a_narrow_one_says_each_number_with_its_column() -> None:
    wide = shown(BENCH, "bench", PANE_WIDTHS[(160, 48)])
    assert re.search(r"config +ours +SDPA +FLASH +cuDNN +vs SDPA +vs FLASH", wide)  # one header, a row a line
    assert re.search(r"B4 H16 S32 D64 fp16 full +0\.0066 +0\.0086", wide)
    narrow = shown(BENCH, "bench", PANE_WIDTHS[(80, 24)])
    assert "B4 H16 S32 D64 fp16 full\n  ours 0.0066  SDPA 0.0086" in narrow  # a card: config, then pairs
    assert "vs SDPA 1.30x" in " ".join(narrow.split())


def whole(value: str, text: str) -> bool:
    """Every character of `value` is in `text`, in order: a value folded over lines (between other
    columns' cells) is whole, one cut with "…" is not."""
    rest = iter("".join(text.split()))
    return all(char in rest for char in "".join(value.split()))


@pytest.mark.parametrize("size", list(PANE_WIDTHS))
def test_the_recorded_env_checks_are_never_cut(size) -> None:  # type: ignore[no-untyped-def]
    """The env gate's values (which Python ran, its torch) and fixes, whole at every size."""
    view = view_of("env", read_result("env", ENV))
    assert view is not None
    text = shown(ENV, "env", PANE_WIDTHS[size])
    for table in view.tables:
        for row in table.rows:
            for column, cell in zip(table.columns, row, strict=True):
                if not column.status:
                    assert whole(cell.text, text), f"{cell.text!r} cut at {size}"
    assert "…" not in text
