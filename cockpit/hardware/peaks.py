"""What a GPU can do at most, so a bench row reads as a share of it: dense tensor-core FLOP/s per
input type, plain FP32 FLOP/s, and memory bandwidth.

Sources: NVIDIA's product datasheets, dense figures (the "with sparsity" ones halved):
- L4: "NVIDIA L4 Tensor Core GPU" datasheet — FP16/BF16 tensor 121 TFLOPS, FP8 242.5, TF32 60,
  FP32 30.3, GDDR6 300 GB/s.
- H100 SXM5 80 GB: "NVIDIA H100 Tensor Core GPU" datasheet — FP16/BF16 tensor 989.4, FP8 1,978.9,
  TF32 494.7, FP32 66.9, HBM3 3.35 TB/s. H100 PCIe 80 GB: 756.5, 1,513, 378, 51.2, HBM2e 2.0 TB/s.
- H200 SXM 141 GB: "NVIDIA H200 Tensor Core GPU" datasheet — compute as the H100 SXM, HBM3e 4.8 TB/s.
A card is found by its NVML/torch name; an unknown card has no peak (rows show no share).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Peak:
    gpu: str
    tflops: Mapping[str, float]
    """Input dtype -> dense TFLOP/s: tensor cores for fp16/bf16/fp8/tf32, the FP32 pipe for fp32."""
    memory_gbps: float
    source: str

    def tflops_for(self, dtype: str | None) -> float | None:
        return self.tflops.get(dtype or "", None)


PEAKS: tuple[tuple[str, Peak], ...] = (
    # Most specific name first: "H100 PCIe" before "H100".
    ("L4", Peak("L4", {"fp16": 121.0, "bf16": 121.0, "fp8": 242.5, "tf32": 60.0, "fp32": 30.3}, 300.0,
                "NVIDIA L4 datasheet (dense)")),
    ("H100 PCIe", Peak("H100 PCIe", {"fp16": 756.5, "bf16": 756.5, "fp8": 1513.0, "tf32": 378.0,
                                     "fp32": 51.2}, 2000.0, "NVIDIA H100 datasheet, PCIe (dense)")),
    ("H100", Peak("H100 SXM", {"fp16": 989.4, "bf16": 989.4, "fp8": 1978.9, "tf32": 494.7, "fp32": 66.9},
                  3350.0, "NVIDIA H100 datasheet, SXM5 (dense)")),
    ("H200", Peak("H200 SXM", {"fp16": 989.4, "bf16": 989.4, "fp8": 1978.9, "tf32": 494.7, "fp32": 66.9},
                  4800.0, "NVIDIA H200 datasheet, SXM (dense)")),
)


def peak_for(name: str | None) -> Peak | None:
    """The peak of a card named as NVML or torch names it ("NVIDIA H100 80GB HBM3")."""
    if not name:
        return None
    for key, peak in PEAKS:
        if f" {key} " in f" {name.replace('NVIDIA', '').strip()} " or name.strip().endswith(key):
            return peak
    return None


def share_of_peak(peak: Peak | None, dtype: str | None, tflops: float | None,
                  gbps: float | None) -> dict[str, float] | None:
    """{"compute": %, "memory": %} of what the card can do; None when the card is unknown."""
    if peak is None:
        return None
    out: dict[str, float] = {}
    top = peak.tflops_for(dtype)
    if tflops is not None and top:
        out["compute"] = round(100.0 * tflops / top, 1)
    if gbps is not None and peak.memory_gbps:
        out["memory"] = round(100.0 * gbps / peak.memory_gbps, 1)
    return out or None
