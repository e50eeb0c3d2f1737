"""The GPU panel: one compact block per GPU from NVML (or a recording), with sparklines, clock
events in words, the GPU the gates run on (found by UUID, never by CUDA ordinal), and a warning
when a process that is not the cockpit's own uses that GPU."""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from rich.text import Text

from cockpit.printable import printable
from cockpit.ui.widgets.lines import TextLines

if TYPE_CHECKING:
    from cockpit.gates.device import GateDevice
    from cockpit.telemetry.history import History
    from cockpit.telemetry.identity import GpuChoice
    from cockpit.telemetry.sample import GpuProcess, GpuSample, GpuStatic, Snapshot

SPARK = "▁▂▃▄▅▆▇█"
SPARK_EVERY_S = 2.0
"""The sparklines move on every this many seconds (nvitop redraws every 2 s); the numbers above
them every second they change."""
REASON_STYLE = {"idle": "dim", "power cap": "yellow", "HW power brake": "bold red",
                "SW thermal slowdown": "bold red", "HW thermal slowdown": "bold red",
                "HW slowdown": "bold red", "sync boost": "yellow", "app clock setting": "yellow",
                "display clock setting": "yellow"}


def sparkline(values: Sequence[float], width: int, top: float | None = None) -> str:
    """The last `width` values as block characters scaled to `top` (or their max)."""
    vals = [v for v in values[-width:] if v == v]  # drop NaN (fields that were n/a)
    if not vals:
        return " " * width
    peak = top if top else max(vals) or 1.0
    bars = "".join(SPARK[min(7, max(0, int(v / peak * 7.999)))] for v in vals)
    return bars.rjust(width)


def _n(value: float | int | None, fmt: str = "{:.0f}") -> str:
    return "n/a" if value is None else fmt.format(value)


def is_ours(pid: int, ancestors: tuple[int, ...], own: int) -> bool:
    return pid == own or own in ancestors


def gate_mark(choice: GpuChoice | None, running: str | None) -> Text:
    """After the GPU's name: which gate runs on it now, or that the gates would."""
    if choice is None:
        return Text("")
    guess = "" if choice.exact else " (assumed: CUDA's order)"
    if running:
        return Text(f"  ◆ {running} gate runs here{guess}", style="bold cyan")
    return Text(f"  ◇ gates run here{guess}", style="cyan")


def gate_marks(uuid: str | None, choice: GpuChoice | None,
               only_one: bool) -> tuple[bool | None, GpuChoice | None]:
    """Whether the gates run on this GPU (None: cannot be told) and the choice to mark on it. The
    only GPU is the gates' whatever they ask for, with no mark."""
    if only_one:
        return True, None
    if choice is None or choice.uuid is None:
        return None, None
    return uuid is not None and uuid == choice.uuid, choice


def gpu_block(static: GpuStatic | None, sample: GpuSample, history: History | None,
              width: int, own_pid: int, gate_gpu: bool | None = True, running: str | None = None,
              choice: GpuChoice | None = None) -> list[Text]:
    """The lines for one GPU: numbers, clock events, sparklines, processes. `gate_gpu`: whether
    the gates run on this GPU (None: cannot be told), which decides what a foreign process means."""
    name = (static.name or "GPU").replace("NVIDIA ", "") if static else "GPU"
    if sample.lost:
        return [Text(f"GPU{sample.index} {name}: fell off the bus (NVML: GPU is lost) — "
                     "check dmesg / nvidia-smi; the box may need a reset", style="bold white on red")]
    mem_total = static.memory_total_mib if static else None
    max_sm = static.max_sm_clock_mhz if static else None
    head = Text.assemble(
        (f"GPU{sample.index} {name}  ", "bold"), (f"{_n(sample.util_gpu)}%", "bold cyan"),
        f"  {_n(sample.temp_c)}°C  {_n(sample.power_w)}/{_n(sample.power_limit_w)} W",
    )
    if gate_gpu:
        head.append_text(gate_mark(choice, running))
    sizes = Text(f"mem {_n(sample.memory_used_mib)}/{_n(mem_total)} MiB  "
                 f"SM {_n(sample.sm_clock_mhz)}/{_n(max_sm)} MHz  P{_n(sample.pstate)}")
    lines = [head, sizes, _clock_events(sample)]
    if history is not None and history.gpu(sample.index) is not None:
        lines.append(_sparklines(history, sample, width, mem_total))
    return lines + process_lines(sample.processes, own_pid, gate_gpu)


def _clock_events(sample: GpuSample) -> Text:
    """Why the clocks are held back (full speed when nothing holds them), and uncorrected ECC errors."""
    reasons = sample.throttle_reasons
    events = Text("clocks: ", style="dim")
    if not reasons:
        events.append("full speed" if sample.throttle_mask == 0 else "n/a", style="green")
    for i, reason in enumerate(reasons):
        events.append(("" if i == 0 else ", ") + reason, style=REASON_STYLE.get(reason, "yellow"))
    if sample.ecc_uncorrected:
        events.append(f"  ECC uncorrected {sample.ecc_uncorrected}", style="bold red")
    return events


def _sparklines(history: History, sample: GpuSample, width: int, mem_total: int | None) -> Text:
    """Utilization, power and memory over the last minutes, side by side in a third of the width each."""
    w = max(6, (width - 15) // 3)
    util = history.values(sample.index, "util_gpu", w)
    power = history.values(sample.index, "power_w", w)
    mem = history.values(sample.index, "memory_used_mib", w)
    return Text.assemble(
        ("util", "dim"), (sparkline(list(util), w, 100.0), "cyan"),
        (" W", "dim"), (sparkline(list(power), w, sample.power_limit_w), "magenta"),
        (" mem", "dim"), (sparkline(list(mem), w, float(mem_total) if mem_total else None), "blue"),
    )


MAX_PROCESS_LINES = 2
"""A GPU's processes take at most this many lines (a busy box lists dozens): the ones not ours
first, the rest counted in the last line, so an 80x24 pane keeps its status history on screen."""


def process_lines(processes: Sequence[GpuProcess], own_pid: int, gate_gpu: bool | None) -> list[Text]:
    """The GPU's processes, each one line, those not ours first; over MAX_PROCESS_LINES the last
    line counts the rest (`cockpit gpu` lists every one)."""
    ordered = sorted(processes, key=lambda p: is_ours(p.pid, p.ancestors, own_pid))
    shown = ordered if len(ordered) <= MAX_PROCESS_LINES else ordered[:MAX_PROCESS_LINES - 1]
    lines = [_process_line(proc, own_pid, gate_gpu) for proc in shown]
    rest = ordered[len(shown):]
    if rest:
        foreign = sum(not is_ours(p.pid, p.ancestors, own_pid) for p in rest)
        suspect = bool(foreign and gate_gpu)
        lines.append(Text(f"{'⚠' if suspect else ' '} +{len(rest)} more processes ({foreign} not ours): "
                          "cockpit gpu lists them", style="bold yellow" if suspect else "dim"))
    return lines


def _process_line(proc: GpuProcess, own_pid: int, gate_gpu: bool | None) -> Text:
    """One process: ours (dim), or not ours, as suspect as the GPU is to the gates (`gate_gpu`:
    the gates use it; None: not known)."""
    who = f"pid {proc.pid} {printable(proc.name or '?')} {_n(proc.used_mib)} MiB"
    if is_ours(proc.pid, proc.ancestors, own_pid):
        return Text(f"  {who} (ours)", style="dim")
    if gate_gpu:
        return Text(f"⚠ {who}: not ours, bench suspect", style="bold yellow")
    if gate_gpu is None:
        return Text(f"  {who}: not ours (which GPU the gates use is not known)", style="yellow")
    return Text(f"  {who}: not ours, on a GPU the gates do not use", style="dim yellow")


def middle(values: Iterable[float]) -> float:
    """The median, without the `statistics` module (~0.2 MiB the UI process need not hold)."""
    ordered = sorted(values)
    half = len(ordered) // 2
    return ordered[half] if len(ordered) % 2 else (ordered[half - 1] + ordered[half]) / 2


class GpuPanel(TextLines):
    DEFAULT_CSS = """
    GpuPanel { height: auto; border: round $primary; padding: 0 1; }
    """
    TICK_COST_OVER = 10
    """The border's "NVML n µs/tick" is the median of the last this-many ticks (the first, with
    NVML's start-up, and the slow lane's every 10 s would read as the cost if shown alone); it
    appears after 3 ticks and is redrawn every 10, not each tick."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.border_title = "GPU"
        self._snapshot: Snapshot | None = None
        self._history: History | None = None
        self._own_pid = os.getpid()
        self._tick_us: deque[float] = deque(maxlen=self.TICK_COST_OVER)
        self._ticks = 0
        self._gate_device: GateDevice | None = None
        self._blocks: dict[int, tuple[object, list[Text]]] = {}
        self._choice: tuple[object, GpuChoice] | None = None

    def watch_gate(self, device: GateDevice | None) -> None:
        """Mark the GPU the gates run on (`gates.device.gate_device`, `GateRun.device`,
        `result_device`); None: the GPU the cockpit's own CUDA_VISIBLE_DEVICES names."""
        self._gate_device = device
        self.rebuild()

    @property
    def gpus(self) -> tuple[GpuStatic, ...]:
        """The GPUs of the last snapshot (their UUIDs), empty before the first."""
        return self._snapshot.gpus if self._snapshot is not None else ()

    def gate_choice(self) -> GpuChoice | None:
        """The GPU the gates run on among the last snapshot's, when it can be told."""
        from cockpit.gates.device import GateDevice

        if self._snapshot is None:
            return None
        # Asked every tick, the same answer until the GPUs, the gate's device or the environment
        # change: chosen again only then.
        order, visible = os.environ.get("CUDA_DEVICE_ORDER"), os.environ.get("CUDA_VISIBLE_DEVICES")
        key = (self._snapshot.gpus, self._gate_device, order, visible)
        if self._choice is None or self._choice[0] != key:
            device = self._gate_device or GateDevice(visible, pci_order=order == "PCI_BUS_ID")
            self._choice = (key, device.choose(self._snapshot.gpus))
        return self._choice[1]

    def show(self, snapshot: Snapshot, history: History | None) -> None:
        self._snapshot, self._history = snapshot, history
        if not snapshot.available:
            self.border_subtitle = ""
        else:
            self._tick_us.append(snapshot.tick_us)
            self._ticks += 1
            if self._ticks == 3 or self._ticks % self.TICK_COST_OVER == 0:
                self.border_subtitle = f"NVML {middle(self._tick_us):.0f} µs/tick"
        self.rebuild()

    def build(self, width: int) -> list[Text]:
        snapshot = self._snapshot
        if snapshot is None:
            return [Text("reading NVML…", style="dim")]
        if not snapshot.available:
            return [Text(f"No GPU telemetry: {snapshot.reason}", style="yellow")]
        lines: list[Text] = []
        choice = self.gate_choice()
        running = self._gate_device.gate if self._gate_device is not None else None
        for sample in snapshot.samples:
            gate_gpu, marked = gate_marks(snapshot.uuid(sample.index), choice, len(snapshot.samples) == 1)
            lines.extend(self._block(snapshot.static(sample.index), sample, max(40, width),
                                     gate_gpu, running, marked))
        return lines or [Text("NVML sees no GPU", style="yellow")]

    def _block(self, static: GpuStatic | None, sample: GpuSample, width: int, gate_gpu: bool | None,
               running: str | None, choice: GpuChoice | None) -> list[Text]:
        """`gpu_block`, built again only when what it shows changed: the same numbers give the
        same lines (nothing to repaint; most seconds of an idle GPU), and the sparklines move on
        every SPARK_EVERY_S (every second they would cost more than all the numbers)."""
        shown = (sample.index, sample.lost, sample.util_gpu, sample.temp_c, _n(sample.power_w),
                 sample.power_limit_w, sample.memory_used_mib, sample.sm_clock_mhz, sample.pstate,
                 sample.throttle_mask, sample.ecc_uncorrected, sample.processes)
        key = (static, shown, int(sample.t // SPARK_EVERY_S), width, gate_gpu, running, choice)
        built = self._blocks.get(sample.index)
        if built is None or built[0] != key:
            built = self._blocks[sample.index] = (key, gpu_block(
                static, sample, self._history, width, self._own_pid, gate_gpu, running, choice))
        return built[1]
