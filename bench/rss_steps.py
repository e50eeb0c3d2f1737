"""Resident memory of a process like the cockpit TUI, after each import step, on this machine.

    python3 bench/rss_steps.py

Shows what a Textual + NVML process costs before the cockpit creates a widget (needs a GPU and
its driver for the NVML steps; they fail in one line elsewhere). Numbers are cumulative MiB from
/proc/self/status, with the step's increase, anonymous and file-backed parts, and the threads.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def rss() -> tuple[float, float, float, int]:
    with open("/proc/self/status") as f:
        fields = dict(line.split(":", 1) for line in f if ":" in line)

    def mib(key: str) -> float:
        return int(fields[key].split()[0]) / 1024

    return mib("VmRSS"), mib("RssAnon"), mib("RssFile"), int(fields["Threads"])


def step(name: str, fn: Callable[[], object]) -> None:
    before = rss()[0]
    try:
        fn()
    except Exception as exc:  # no driver here: say so and go on
        print(f"   {name} failed: {exc}")
    total, anon, file, threads = rss()
    print(f"{name:<28} {total:7.1f} MiB (+{total - before:5.1f})  anon {anon:6.1f} file {file:6.1f}  "
          f"threads {threads}")


def nvml_init() -> None:
    import pynvml

    pynvml.nvmlInit()


def device_queries() -> None:
    import pynvml

    h = pynvml.nvmlDeviceGetHandleByIndex(0)
    pynvml.nvmlDeviceGetName(h)
    pynvml.nvmlDeviceGetComputeRunningProcesses(h)
    pynvml.nvmlDeviceGetMaxClockInfo(h, 0)


def tree_sitter_markdown() -> None:
    from textual._tree_sitter import get_language

    get_language("markdown")


def trim() -> None:
    from cockpit.memory import release_free_memory

    release_free_memory()


def main() -> None:
    step("python", lambda: None)
    step("rich", lambda: __import__("rich.console"))
    step("textual app", lambda: __import__("textual.app"))
    step("textual widgets", lambda: __import__("textual.widgets"))
    step("psutil", lambda: __import__("psutil"))
    step("pynvml import", lambda: __import__("pynvml"))
    step("nvmlInit", nvml_init)
    step("device queries", device_queries)
    step("numpy", lambda: __import__("numpy"))
    step("tree-sitter markdown", tree_sitter_markdown)
    step("cockpit.ui.app", lambda: __import__("cockpit.ui.app"))
    step("gc + malloc_trim", trim)


if __name__ == "__main__":
    main()
