"""A large output is compared with the oracle's a piece at a time, in float64, and the verdict and
numbers are those of the whole: KernelBench's level-1 softmax (4096 x 393216 fp32) ran an 80 GB
H100 out of memory when its output, the oracle's and their difference were all held in float64."""

from __future__ import annotations

import math

import pytest
import torch

from cockpit.probes.workload import compare as cmp
from cockpit.workload.spec import allclose, exact, rel_l2


def whole(out: torch.Tensor, ref: torch.Tensor) -> tuple[float, float, int]:
    """The numbers computed on the whole tensors at once, as a reader would by hand."""
    o, r = out.double(), ref.double()
    diff = (o - r).nan_to_num(nan=math.inf)
    return (float(diff.abs().max()), float(diff.norm() / max(float(r.norm()), 1e-30)),
            int((~torch.isfinite(o)).sum()))


@pytest.fixture
def small_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cmp, "CHUNK", 7)  # 1000 elements: 143 pieces, the last one short


def test_max_rel_l2_and_non_finite_count_are_the_whole_tensors_in_pieces(small_pieces: None) -> None:
    g = torch.Generator().manual_seed(3)
    ref = torch.randn(10, 100, generator=g)
    out = ref + 1e-3 * torch.randn(10, 100, generator=g)
    out[4, 17] = float("nan")
    out[9, 99] = float("inf")
    got = cmp.distance(out, ref)
    want = whole(out, ref)
    assert got[0] == want[0] == math.inf and got[2] == want[2] == 2
    clean = ref + 1e-3 * torch.randn(10, 100, generator=g)
    got, want = cmp.distance(clean, ref), whole(clean, ref)
    assert got[0] == pytest.approx(want[0], rel=1e-12)
    assert got[1] == pytest.approx(want[1], rel=1e-9)


def test_allclose_fails_on_one_element_in_any_piece_and_passes_when_none_is_out(small_pieces: None) -> None:
    ref = torch.linspace(-1, 1, 1000)
    near = ref + 1e-6
    check = allclose(atol=1e-5, rtol=0.0)
    assert cmp.compare(near, ref, check, None, {}, ())["ok"]
    far = near.clone()
    far[993] += 1.0  # in the last, short piece
    said = cmp.compare(far, ref, check, None, {}, ())
    assert not said["ok"] and "outside atol" in said["what"]


def test_exact_and_rel_l2_verdicts_do_not_change_with_the_piece_size(small_pieces: None) -> None:
    ref = torch.arange(1000, dtype=torch.float32)
    assert cmp.compare(ref.clone(), ref, exact(), None, {}, ())["ok"]
    off = ref.clone()
    off[500] += 1
    assert not cmp.compare(off, ref, exact(), None, {}, ())["ok"]
    loose = cmp.compare(off, ref, rel_l2(1e-2), None, {}, ())
    assert loose["ok"] and loose["rel_l2"] == pytest.approx(1 / float(ref.double().norm()), rel=1e-9)


def test_an_empty_output_against_an_empty_reference_is_zero_apart() -> None:
    assert cmp.distance(torch.empty(0), torch.empty(0)) == (0.0, 0.0, 0)
