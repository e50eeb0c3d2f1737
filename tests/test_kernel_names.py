"""Kernel names as an engineer reads them: every symbol our builds and recorded failures contain
is demangled the way c++filt spells it, even on a machine without c++filt, and shortened to
the kernel and its template arguments for the tables."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from cockpit.hardware import symbols
from cockpit.hardware.itanium import itanium_demangle
from cockpit.hardware.symbols import demangle_all, function_parts, short_name

FIXTURES = Path(__file__).parent / "fixtures"
# Shapes our builds do not produce today but a kernel edit easily could.
EXTRA = ["_ZN3foo3barIiE3bazIcEEvT_", "_ZN2ns1AIiE1fIS1_EEvRKT_", "_Z1fIiEvT_S0_", "_ZN2ns1BE",
         "_Z3maxILin5ELj3EEvv", "_ZN3c106detail14torchCheckFailEPKcS2_jRKSs",
         "_ZNK5torch8autograd4Node4nameB5cxx11Ev", "_Z6kernelIN3cub3CubEEvPKT_Pv"]


def recorded_symbols() -> list[str]:
    found: set[str] = set()
    for path in [*FIXTURES.rglob("*.log"), *FIXTURES.rglob("*.json")]:
        found.update(re.findall(r"_Z[A-Za-z0-9_]+", path.read_text(errors="replace")))
    return sorted(found)


def test_the_built_in_reader_spells_every_recorded_symbol_as_cxxfilt_does() -> None:
    if shutil.which("c++filt") is None:
        pytest.fail("c++filt (binutils) is not on PATH: the CI machine has g++ and binutils")
    names = recorded_symbols() + EXTRA
    assert len(names) > 30  # the H200 build logs alone hold 24 kernels
    want = subprocess.run(["c++filt", *names], capture_output=True, text=True, check=True).stdout.splitlines()
    assert {n: itanium_demangle(n) or n for n in names} == dict(zip(names, want, strict=True))


def test_without_cxxfilt_the_built_in_reader_names_the_kernels(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(symbols, "_demangler", lambda: None)
    kernel = ("_ZN12cockpit_attn45_GLOBAL__N__ba0288b0_12_attention_cu_3767b3e715attn_fwd_kernelI"
              "6__halfLi64ELi128ELi64ELi8ELi2ELb1EEEvNS_10AttnParamsEf")
    names = demangle_all([kernel, "plain_c_function", "_Zunreadable"])
    assert names[kernel] == ("void cockpit_attn::(anonymous namespace)::attn_fwd_kernel<__half, 64, 128, "
                             "64, 8, 2, true>(cockpit_attn::AttnParams, float)")
    assert names["plain_c_function"] == "plain_c_function" and names["_Zunreadable"] == "_Zunreadable"
    assert short_name(names[kernel]) == "attn_fwd_kernel<half, 64, 128, 64, 8, 2, true>"


def test_a_short_name_drops_return_type_namespaces_and_parameters() -> None:
    name = ("void cockpit_attn::(anonymous namespace)::attn_fwd_kernel<__nv_bfloat16, 128, 128, 128, 8, 1,"
            " false>(cockpit_attn::AttnParams, float)")
    assert short_name(name) == "attn_fwd_kernel<bf16, 128, 128, 128, 8, 1, false>"
    assert function_parts(name) == ("attn_fwd_kernel", ("__nv_bfloat16", "128", "128", "128", "8", "1", "false"))
    assert function_parts("void ns::A<int>::f<ns::A<int> >(ns::A<int> const&)") == ("f", ("ns::A<int>",))
    assert short_name("big(float*)") == "big"
    assert short_name("torch::autograd::Node::name[abi:cxx11]() const") == "name[abi:cxx11]"


# The profile panel's kernel name: what ncu and our builds recorded, as an engineer reads it.

H100_PROFILE = next((FIXTURES / "sessions" / "h100-tui" / "sessions").glob("*/journal.jsonl"))


def recorded_profile() -> dict:
    import json

    events = [json.loads(line) for line in H100_PROFILE.read_text().splitlines()]
    return next(e["result"] for e in events if e["type"] == "gate_finished" and e["gate"] == "profile")


def test_ncus_kernel_names_read_as_the_function_and_its_template_arguments() -> None:
    from cockpit.analysis.ncu import parse_ncu_csv
    from cockpit.ui.widgets.kernel_name import readable_kernel

    launch = parse_ncu_csv((FIXTURES / "gpu" / "ncu" / "ours-d64.csv").read_text()).launches[0]
    assert launch.name.startswith("void unnamed>::attn_fwd_kernel<__half, 64")
    assert readable_kernel(launch.name) == "attn_fwd_kernel<half, 64, 128, 64, 8, 2, 0>"
    assert readable_kernel("void (anonymous namespace)::attn_fwd_kernel<64, 64, 128, true>"
                           "(float const*, float*, int)") == "attn_fwd_kernel<64, 64, 128, true>"
    assert readable_kernel("void unnamed>::attn_fwd_kernel<...>") == "attn_fwd_kernel<...>"


def test_a_builds_mangled_names_read_the_same_way() -> None:
    import json

    from cockpit.ui.widgets.kernel_name import readable_kernel

    build = json.loads((FIXTURES / "gpu" / "h100" / "gate-build.json").read_text())
    names = [readable_kernel(k["name"]) for k in build["result"]["kernels"]]
    assert names[:2] == ["attn_fwd_kernel<bf16, 128, 128, 128, 8, 1, true>",
                         "attn_fwd_kernel<bf16, 128, 128, 128, 8, 1, false>"]


def test_a_triton_kernels_name_stays_as_it_is() -> None:
    from cockpit.ui.widgets.kernel_name import fit_kernel_name, readable_kernel

    assert readable_kernel("_layer_norm_fwd") == "_layer_norm_fwd"
    assert readable_kernel("_attn_fwd_inner_0d1d2d3d") == "_attn_fwd_inner_0d1d2d3d"
    assert fit_kernel_name("_layer_norm_fwd", 10) == "_layer_no…"


def test_a_narrow_panel_cuts_the_template_arguments_not_the_kernels_name() -> None:
    from cockpit.ui.widgets.kernel_name import fit_kernel_name

    name = "attn_fwd_kernel<half, 64, 128, 64, 8, 2, 0>"
    assert fit_kernel_name(name, 80) == name
    assert fit_kernel_name(name, len(name)) == name
    assert fit_kernel_name(name, len(name) - 1) == "attn_fwd_kernel<half, 64, 128, 64, 8, …>"
    assert fit_kernel_name(name, 30) == "attn_fwd_kernel<half, 64, …>"
    assert fit_kernel_name(name, 19) == "attn_fwd_kernel<…>"
    assert fit_kernel_name(name, 12) == "attn_fwd_ke…"
    assert all(len(fit_kernel_name(name, w)) <= w for w in range(1, 60))


@pytest.mark.parametrize("width", [60, 100, 160])
def test_the_profile_panel_shows_the_recorded_kernel_readably(width: int) -> None:
    from rich.console import Console

    from cockpit.gates.catalog import read_result
    from cockpit.ui.widgets.gate_results import render_result

    console = Console(width=width, record=True, color_system=None)
    console.print(render_result("profile", read_result("profile", recorded_profile())))
    kernel_line = next(line for line in console.export_text().splitlines() if line.lstrip().startswith("kernel"))
    assert "unnamed" not in kernel_line and "void" not in kernel_line and "(" not in kernel_line
    assert "attn_fwd_kernel<half, 64" in kernel_line
    if width >= 100:
        assert "attn_fwd_kernel<half, 64, 128, 64, 8, 2, 0>" in kernel_line
