"""Reading Nsight Compute's raw CSV (`ncu --csv --page raw --print-units base`): one row per
profiled launch, a units row under the header, numbers with thousands separators, and — when
ncu printed to stdout — the program's own output and `==PROF==` lines before the header.
Pure functions over text."""

from __future__ import annotations

import csv
import io
import math
import re
from dataclasses import dataclass

from cockpit.errors import CockpitError
from cockpit.hardware.symbols import function_parts

# The columns that say which launch a row is; every other column is a metric.
IDENTITY_COLUMNS = ("ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context",
                    "Stream", "Block Size", "Grid Size", "Device", "CC")
_ABSENT = {"", "n/a", "no data", "nan", "-"}
_NUMBER = re.compile(r"^[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?$")
_DIMS = re.compile(r"^\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\)$")
_NS_PER = {"ns": 1.0, "nsecond": 1.0, "us": 1e3, "usecond": 1e3, "ms": 1e6, "msecond": 1e6,
           "s": 1e9, "second": 1e9}

EXPORT_HINT = "ncu --import FILE.ncu-rep --csv --page raw --print-units base > FILE.csv"

# Other names ncu versions and architectures give the same quantity, tried in order. Besides
# these, `<counter>_v2` (a counter some architectures, e.g. sm_89, carry under a new version)
# is tried for every name.
ALTERNATIVES: dict[str, tuple[str, ...]] = {
    "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed": (
        "dram__throughput.avg.pct_of_peak_sustained_elapsed",),
    "dram__throughput.avg.pct_of_peak_sustained_elapsed": (
        "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",),
    "sm__throughput.avg.pct_of_peak_sustained_elapsed": (
        "sm__inst_executed.avg.pct_of_peak_sustained_elapsed", "sm__sol_pct"),
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed": (
        "gpu__compute_memory_sol_pct",),
    "l1tex__throughput.avg.pct_of_peak_sustained_active": (
        "l1tex__throughput.avg.pct_of_peak_sustained_elapsed",),
    "l1tex__throughput.avg.pct_of_peak_sustained_elapsed": (
        "l1tex__throughput.avg.pct_of_peak_sustained_active",),
    "lts__throughput.avg.pct_of_peak_sustained_elapsed": (
        "ltc__throughput.avg.pct_of_peak_sustained_elapsed",),
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed": (
        "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed",
        "sm__inst_executed_pipe_tensor.avg.pct_of_peak_sustained_elapsed"),
    "gpu__time_duration.sum": ("gpu__time_duration.avg",),
}


def candidates(name: str) -> tuple[str, ...]:
    """The names to try for a metric, best first: itself, its alternatives, then their `_v2`s."""
    names = (name, *ALTERNATIVES.get(name, ()))
    return names + tuple(_v2(n) for n in names)


def _v2(name: str) -> str:
    counter, dot, rest = name.partition(".")
    return f"{counter}_v2{dot}{rest}"


@dataclass(frozen=True)
class KernelLaunch:
    """One profiled launch: who it is, and every metric ncu recorded for it (absent ones left out)."""

    id: int
    name: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    device: str
    cc: str
    metrics: dict[str, float | str]
    units: dict[str, str]

    def find(self, name: str) -> tuple[str, float] | None:
        """(the name ncu used, its value) for the first numeric candidate of `name`, else None."""
        for candidate in candidates(name):
            value = self.metrics.get(candidate)
            if isinstance(value, float):
                return candidate, value
        return None

    def value(self, name: str) -> float | None:
        found = self.find(name)
        return None if found is None else found[1]

    def unit(self, name: str) -> str:
        return self.units.get(name, "")

    @property
    def short_name(self) -> str:
        """`attn_fwd_kernel` for `void (anon)::attn_fwd_kernel<__half, 64>(AttnParams, float)`."""
        return short_kernel_name(self.name)

    @property
    def duration_ns(self) -> float | None:
        found = self.find("gpu__time_duration.sum")
        if found is None:
            return None
        scale = _NS_PER.get(self.unit(found[0]).strip().lower(), 1.0)  # base units are ns
        return found[1] * scale


@dataclass(frozen=True)
class NcuReport:
    launches: tuple[KernelLaunch, ...]
    preamble: tuple[str, ...] = ()
    """Lines before the CSV header: the program's own output, `==PROF==` and `==WARNING==` lines."""

    @property
    def kernel_names(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(launch.short_name for launch in self.launches))


def short_kernel_name(name: str) -> str:
    """A demangled kernel name without return type, namespace, template arguments or parameters."""
    return function_parts(name)[0]


def parse_value(cell: str) -> float | str | None:
    """`1,322,432` -> 1322432.0, `85.00` -> 85.0, `n/a`/empty/`no data`/`nan` -> None, else text."""
    text = cell.strip()
    if text.lower() in _ABSENT:
        return None
    if _NUMBER.match(text):
        number = float(text.replace(",", ""))
        return number if math.isfinite(number) else None
    return text


def _dims(cell: str, metrics: dict[str, float | str], prefix: str) -> tuple[int, int, int]:
    m = _DIMS.match(cell.strip())
    if m:
        return int(m.group(1)), int(m.group(2)), int(m.group(3))
    parts = [metrics.get(f"launch__{prefix}_dim_{axis}") for axis in "xyz"]
    x, y, z = (int(p) if isinstance(p, float) else 1 for p in parts)
    return x, y, z


def _header_index(lines: list[str]) -> int | None:
    for i, line in enumerate(lines):
        if line.startswith('"ID","Process ID"'):
            return i
    for i, line in enumerate(lines):
        if '"Kernel Name"' in line:
            return i
    return None


def parse_ncu_csv(text: str) -> NcuReport:
    """Every launch in an ncu raw-page CSV, tolerating what comes before the header and rows that
    are not launches. Raises CockpitError when the text holds no ncu CSV header."""
    lines = text.splitlines()
    start = _header_index(lines)
    if start is None:
        kernels = parse_no_match(text)
        if kernels is not None:
            listing = ", ".join(kernels) if kernels else "none"
            raise CockpitError(f"ncu profiled no kernel (its filter matched nothing; kernels that ran: "
                               f"{listing}); rerun ncu with --kernel-name set to one of them")
        raise CockpitError("no ncu CSV header (\"ID\",\"Process ID\",...) in the input; export one with: "
                           + EXPORT_HINT)
    rows = list(csv.reader(io.StringIO("\n".join(lines[start:]))))
    header = [h.strip() for h in rows[0]]
    units: dict[str, str] = {}
    launches: list[KernelLaunch] = []
    for row in rows[1:]:
        if len(row) != len(header):
            continue  # program output or ==PROF== lines after the table
        cells = dict(zip(header, row, strict=True))
        ident = cells.get("ID", "").strip().replace(",", "")
        if not ident.isdigit():
            if not launches and not units and not cells.get("Kernel Name", "").strip():
                units = {k: v.strip() for k, v in cells.items() if v.strip()}
            continue
        launches.append(_launch(cells, units))
    return NcuReport(tuple(launches), tuple(lines[:start]))


def _launch(cells: dict[str, str], units: dict[str, str]) -> KernelLaunch:
    metrics: dict[str, float | str] = {}
    for key, cell in cells.items():
        if key in IDENTITY_COLUMNS:
            continue
        value = parse_value(cell)
        if value is not None:
            metrics[key] = value
    return KernelLaunch(
        id=int(cells["ID"].strip().replace(",", "")),
        name=cells.get("Kernel Name", "").strip() or str(metrics.get("launch__kernel_name", "?")),
        grid=_dims(cells.get("Grid Size", ""), metrics, "grid"),
        block=_dims(cells.get("Block Size", ""), metrics, "block"),
        device=cells.get("Device", "").strip(),
        cc=cells.get("CC", "").strip(),
        metrics=metrics,
        units={k: v for k, v in units.items() if k in metrics},
    )


_LISTED = re.compile(r"^\s*\d+\.\s+(\S.*?)\s*$")


def parse_no_match(text: str) -> list[str] | None:
    """The kernels ncu lists after "No kernels were profiled. Available Kernels:", or None when the
    text is not such a report ([] when ncu listed none)."""
    lines = text.splitlines()
    at = next((i for i, line in enumerate(lines) if "No kernels were profiled" in line), None)
    if at is None:
        return None
    kernels: list[str] = []
    listing = False
    for line in lines[at:]:
        if "Available Kernels:" in line:
            listing = True
            continue
        m = _LISTED.match(line)
        if listing and m:
            kernels.append(m.group(1))
        elif listing and line.strip() and not line.startswith("=="):
            break
    return kernels
