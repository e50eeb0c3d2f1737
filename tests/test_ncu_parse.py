"""Reading Nsight Compute's raw CSV as recorded on an H200 (ncu 2025.3.1, tests/fixtures/gpu/ncu):
units row, thousands separators, a program's stdout before the header, several launches, metrics
that other ncu versions name differently or do not collect, and text that is no ncu CSV at all."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

from cockpit.analysis.bottleneck import bank_conflict_ratio, verdict
from cockpit.analysis.ncu import KernelLaunch, parse_ncu_csv, parse_no_match, parse_value
from cockpit.errors import CockpitError

NCU = Path(__file__).parent / "fixtures" / "gpu" / "ncu"
RECORDED = ("ours-d64", "ours-d128", "flash-d64", "flash-d128", "cudnn-d64", "cudnn-d128", "copy", "tiny")


def text(name: str) -> str:
    return (NCU / name).read_text(encoding="utf-8")


def launch(name: str) -> KernelLaunch:
    """The one launch a recording holds (`ours-d64` or a file name)."""
    report = parse_ncu_csv(text(name if "." in name else f"{name}.csv"))
    assert len(report.launches) == 1
    return report.launches[0]


def edited(name: str, set_: Mapping[str, str] | None = None, drop: Iterable[str] = (),
           rename: Mapping[str, str] | None = None) -> KernelLaunch:
    """A recorded launch with some cells changed, columns dropped or renamed, re-parsed from CSV."""
    rows = list(csv.reader(io.StringIO(text(f"{name}.csv"))))
    header = rows[0]
    for column, value in (set_ or {}).items():
        rows[2][header.index(column)] = value
    for column in drop:
        i = header.index(column)
        for row in rows:
            del row[i]
    for old, new in (rename or {}).items():
        header[header.index(old)] = new
    out = io.StringIO()
    csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(rows)
    return parse_ncu_csv(out.getvalue()).launches[0]


@pytest.mark.parametrize(("name", "kernel", "grid", "block", "duration_ns"), [
    ("ours-d64", "attn_fwd_kernel", (32, 16, 4), (256, 1, 1), 1_322_432),
    ("ours-d128", "attn_fwd_kernel", (32, 16, 4), (256, 1, 1), 2_551_648),
    ("flash-d64", "flash_fwd_kernel", (32, 4, 16), (128, 1, 1), 1_191_392),
    ("flash-d128", "flash_fwd_kernel", (32, 4, 16), (128, 1, 1), 2_017_728),
    ("cudnn-d64", "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x64_4x1x1_"
                  "cga1x1x1_kernel0_0", (132, 1, 1), (384, 1, 1), 752_448),
    ("cudnn-d128", "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x128_4x1x1_"
                   "cga1x1x1_kernel0_0", (132, 1, 1), (384, 1, 1), 1_030_688),
    ("copy", "vectorized_elementwise_kernel", (131072, 1, 1), (128, 1, 1), 250_880),
    ("tiny", "vectorized_elementwise_kernel", (1, 1, 1), (128, 1, 1), 2_656),
])
def test_every_recording_reads_as_one_launch_with_its_shape(name: str, kernel: str, grid: tuple[int, ...],
                                                            block: tuple[int, ...], duration_ns: int) -> None:
    k = launch(name)
    assert (k.id, k.short_name, k.grid, k.block, k.device, k.cc) == (0, kernel, grid, block, "0", "9.0")
    assert k.duration_ns == duration_ns
    assert k.metrics["device__attribute_display_name"] == "NVIDIA H200"


def test_the_full_demangled_name_is_kept_and_shortened_for_display() -> None:
    k = launch("ours-d64")
    assert k.name == "void unnamed>::attn_fwd_kernel<__half, 64, 128, 64, 8, 2, 0>(AttnParams, float)"
    assert launch("flash-d128").name.startswith("void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128")


def test_thousands_separators_and_the_units_row() -> None:
    k = launch("ours-d64")
    assert k.value("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum") == 134_758_655
    assert k.value("launch__grid_size") == 2048
    assert k.value("sm__throughput.avg.pct_of_peak_sustained_elapsed") == 45.22
    assert k.unit("gpu__time_duration.sum") == "ns"
    assert k.unit("sm__throughput.avg.pct_of_peak_sustained_elapsed") == "%"
    assert k.unit("launch__occupancy_limit_registers") == "block"
    assert parse_value("1,322,432") == 1_322_432.0 and parse_value("85.00") == 85.0
    assert parse_value("-3.5e2") == -350.0 and parse_value("(256, 1, 1)") == "(256, 1, 1)"


@pytest.mark.parametrize("cell", ["n/a", "", "no data", "nan", "N/A"])
def test_values_ncu_could_not_give_are_absent_not_zero(cell: str) -> None:
    assert parse_value(cell) is None
    k = edited("ours-d64", set_={"sm__warps_active.avg.pct_of_peak_sustained_active": cell})
    assert "sm__warps_active.avg.pct_of_peak_sustained_active" not in k.metrics
    assert k.value("sm__warps_active.avg.pct_of_peak_sustained_active") is None


def test_ncu_writing_to_stdout_puts_the_programs_output_before_the_header() -> None:
    report = parse_ncu_csv(text("ours-d64-stdout.csv"))
    assert report.preamble == ("==PROF== Connected to process 1707 (/usr/bin/python3.12)",
                               "profile_target: ours launched 4 times",
                               "==PROF== Disconnected from process 1707")
    (k,) = report.launches
    assert (k.short_name, k.duration_ns) == ("attn_fwd_kernel", 1_320_224)
    # that run collected fewer sections: no achieved occupancy, no warp states, no bank conflicts
    assert k.value("sm__warps_active.avg.pct_of_peak_sustained_active") is None
    assert k.value("smsp__average_warps_issue_stalled_wait_per_issue_active.ratio") is None
    assert bank_conflict_ratio(k) is None
    assert k.value("sm__maximum_warps_per_active_cycle_pct") == 25


def test_several_kernels_and_launches_with_noise_around_them() -> None:
    rows = text("ours-d64.csv").splitlines()
    copy_row = text("copy.csv").splitlines()[2].replace('"0","', '"1","', 1)
    tiny_row = text("tiny.csv").splitlines()[2].replace('"0","', '"1,024","', 1)
    body = "\n".join(["==PROF== Connected to process 1 (/usr/bin/python3)", "==WARNING== something",
                      *rows, copy_row, tiny_row, "==PROF== Disconnected from process 1", ""])
    report = parse_ncu_csv(body)
    assert [(k.id, k.short_name) for k in report.launches] == [
        (0, "attn_fwd_kernel"), (1, "vectorized_elementwise_kernel"), (1024, "vectorized_elementwise_kernel")]
    assert report.kernel_names == ("attn_fwd_kernel", "vectorized_elementwise_kernel")
    assert [k.unit("gpu__time_duration.sum") for k in report.launches] == ["ns"] * 3


def test_a_kernel_regex_that_matched_nothing_lists_the_kernels_that_ran() -> None:
    assert parse_no_match(text("no-match.txt")) == ["vectorized_elementwise_kernel"]
    assert parse_no_match(text("ours-d64.csv")) is None
    with pytest.raises(CockpitError) as err:
        parse_ncu_csv(text("no-match.txt"))
    assert "vectorized_elementwise_kernel" in str(err.value) and "--kernel-name" in str(err.value)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("garbage", ["", "hello world\n", "a,b,c\n1,2,3\n", text("copy.stdout")])
def test_text_without_an_ncu_csv_header_says_how_to_export_one(garbage: str) -> None:
    with pytest.raises(CockpitError) as err:
        parse_ncu_csv(garbage)
    message = str(err.value)
    assert "no ncu CSV header" in message and "ncu --import" in message and "\n" not in message


def test_a_missing_metric_column_reads_as_none_and_the_verdict_still_comes() -> None:
    """copy.csv without its DRAM column (an ncu that did not collect it): no value, no crash; with
    DRAM unknown, L2 is the closest unit to the memory SOL and gets named instead."""
    dram = "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"
    k = edited("copy", drop=[dram])
    assert k.value(dram) is None and k.value("dram__throughput.avg.pct_of_peak_sustained_elapsed") is None
    v = verdict(k)
    assert v.bottleneck == "memory-bound" and "L2 leads at 92.9 %" in v.headline
    assert dram not in v.evidence


def test_older_and_versioned_metric_names_are_found_under_the_name_asked_for() -> None:
    """Renamed columns of a real row: ncu before 2023 called DRAM throughput `dram__throughput`, and
    some architectures carry a counter as `<name>_v2`."""
    k = edited("copy", rename={
        "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed": "dram__throughput.avg.pct_of_peak_sustained_elapsed",
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st_v2.sum",
    })
    assert k.find("gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed") == (
        "dram__throughput.avg.pct_of_peak_sustained_elapsed", 86.95)
    assert k.value("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum") == 0
    v = verdict(k)
    assert "DRAM leads at 87.0 %" in v.headline
    assert v.evidence["dram__throughput.avg.pct_of_peak_sustained_elapsed"].value == 86.95


def test_compute_sol_falls_back_to_instructions_executed() -> None:
    """ours-d64 without its `sm__throughput` column (an ncu without it) falls back to the issued-
    instruction SOL the same row recorded (45.22 %, equal to sm__throughput there)."""
    k = edited("ours-d64", drop=["sm__throughput.avg.pct_of_peak_sustained_elapsed"])
    assert k.find("sm__throughput.avg.pct_of_peak_sustained_elapsed") == (
        "sm__inst_executed.avg.pct_of_peak_sustained_elapsed", 45.22)
