"""What one rebuild of the editor pane's markdown highlighting costs: Textual calls
TextArea._build_highlight_map after every edit, so this is the price of a keystroke.

    python3 bench/highlight_cost.py [--sizes 100000 1000000] [--repeat 20]

For each size, a realistic SESSION.md (the template, then a log of timestamped notes, status
lines, gate tables and fenced compiler output) is highlighted four ways: on opening (nothing
read yet), after typing one character at the end of the log (the common edit), after typing one
in the plan near the top, and after opening a code fence above the log (every line below it
changes state, so all are read again). Medians of --repeat runs; with tree-sitter installed, its
re-parse and highlight query after the same end-of-log keystroke is shown for comparison.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from cockpit.session.workspace import session_md
from cockpit.ui.editor.markdown_marks import MarkdownMarks

NOTE = "- {h:02d}:{m:02d} BASELINE: run {i}, BLOCK_N={n}, regs 96 -> 128, spills 0; {ms:.4f} ms vs SDPA"
STATUS = "> {m}:00 elapsed · PROFILE {m}:00/20:00 · now: ncu on attn_fwd_kernel (run {i}), waiting"
TABLE = ("| gate | result | detail |\n|---|---|---|\n| build | pass | run {i}: 41 s, 31 kernels <= 110 regs |"
         "\n| bench | 0.71x | run {i}: vs SDPA at B4 H16 S1024 D128 bf16 |")
BUILD = ("```\n[1/3] nvcc -O3 -arch=sm_90a -c attn_fwd_{i}.cu -o attn_fwd_{i}.o\n"
         "ptxas info    : Used {r} registers, 0 bytes spill stores, 0 bytes spill loads\n"
         "[2/3] c++ -shared attn_fwd_{i}.o -o attn_{i}.so\n```")


def session_text(size: int) -> str:
    """A SESSION.md of about `size` characters: the template, then an hour-by-hour log."""
    parts = [session_md("20261123-1200-d3m0-bench", "Vectorize K loads", "optimize", (), 0.0)]
    total, step = len(parts[0]), 0
    while total < size:
        h, m = divmod(step, 60)
        block = "\n".join([f"### {h:02d}:{m:02d} run {step}" if m % 30 == 0 else "",
                           NOTE.format(h=h % 24, m=m, i=step, n=64 << step % 3, ms=0.5 / (1 + step % 7)),
                           STATUS.format(m=m, i=step), TABLE.format(i=step) if step % 5 == 0 else "",
                           BUILD.format(i=step, r=96 + step % 64) if step % 7 == 0 else "",
                           ""])
        parts.append(block)
        total, step = total + len(block) + 1, step + 1
    return "\n".join(parts)


def median_ms(run: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        run()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def edited(lines: list[str], index: int, text: str) -> list[str]:
    copy = list(lines)
    copy[index] = text
    return copy


def one_edit_ms(lines: list[str], changed: list[str]) -> float:
    """One rebuild after an edit, the document before it already highlighted."""
    marks = MarkdownMarks()
    marks.update(lines)
    t0 = time.perf_counter()
    marks.update(changed)
    return (time.perf_counter() - t0) * 1000


def tree_sitter_ms(text: str, repeat: int) -> float | None:
    """Textual's own markdown highlighting: one edit, then its re-parse and highlight query."""
    try:
        from textual.widgets import TextArea

        area = TextArea(text, language="markdown")
    except Exception:
        return None
    if not area.is_syntax_aware:
        return None
    end = area.document.end

    def one_edit() -> None:
        area.document.replace_range(end, end, "x")  # tree-sitter re-parses this edit incrementally
        area._build_highlight_map()

    return median_ms(one_edit, repeat)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    print(f"# {time.strftime('%Y-%m-%d %H:%M')}, {platform.node()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}")
    print(f"{'chars':>9} {'lines':>7} {'open ms':>8} {'end ms':>8} {'top ms':>8} {'fence ms':>9} "
          f"{'tree-sitter ms':>15}")
    for size in args.sizes:
        print(measure(size, args.repeat))


def measure(size: int, repeat: int) -> str:
    """One row of the table: the costs for a SESSION.md of about `size` characters."""
    lines = session_text(size).split("\n")
    opening = median_ms(lambda: MarkdownMarks().update(lines), repeat)
    edits = {"end": edited(lines, len(lines) - 2, lines[-2] + "x"), "top": edited(lines, 8, lines[8] + "x"),
             "fence": edited(lines, 22, "```")}
    ms = {name: statistics.median(one_edit_ms(lines, changed) for _ in range(repeat))
          for name, changed in edits.items()}
    ts = tree_sitter_ms("\n".join(lines), min(repeat, 5))
    return (f"{size:>9} {len(lines):>7} {opening:>8.1f} {ms['end']:>8.2f} {ms['top']:>8.2f} "
            f"{ms['fence']:>9.1f} {'n/a' if ts is None else f'{ts:.1f}':>15}")


if __name__ == "__main__":
    main()
