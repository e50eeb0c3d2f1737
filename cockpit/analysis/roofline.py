"""Where a kernel sits on the roofline of the card it ran on: from the workload's own FLOP and byte
counts at one shape, the bench's measured time there, and the card's datasheet peaks
(cockpit/hardware/peaks.py). Arithmetic intensity (FLOPs per byte the call must move) against the
ridge point (peak FLOP/s over peak bytes/s): left of the ridge only fewer bytes or a faster memory
path help; right of it, fewer or cheaper instructions. It also says whether the kernel does matrix
math at all: tensor cores are no fix for a layer norm (1.75 FLOP per byte)."""

from __future__ import annotations

from dataclasses import dataclass

from cockpit.hardware.peaks import Peak

MATRIX_INTENSITY = 16.0
"""FLOPs per byte from which a kernel can be a matrix product. Elementwise and reduction kernels do
a few per byte (softmax ~1.3, layer norm ~1.75 in fp16); an n x n x n product in fp16 does ~n/3, so
every GEMM worth a tensor core (n >= 64) is far above this, and no reduction reaches it."""


@dataclass(frozen=True)
class Roofline:
    """One kernel on its card's roofline."""

    intensity: float
    """FLOPs per byte, from the workload's counts."""
    ridge: float
    """The card's peak FLOP/s (for this dtype) over its peak bytes/s."""
    gbps: float
    tflops: float
    pct_memory: float
    pct_compute: float
    ms: float
    peak_tflops: float
    peak_gbps: float
    dtype: str | None

    @property
    def side(self) -> str:
        return "memory" if self.intensity < self.ridge else "compute"

    @property
    def matrix_math(self) -> bool:
        return self.intensity >= MATRIX_INTENSITY

    @property
    def ceiling_ms(self) -> float:
        """The least time the card allows for this call: its bytes at peak bandwidth or its FLOPs at
        peak compute, whichever is longer."""
        return self.ms * max(self.pct_memory, self.pct_compute) / 100

    def line(self) -> str:
        """'1.75 FLOP/B, memory side of the 295 FLOP/B ridge (fp16): 2101 GB/s = 63 % of HBM,
        3.7 TFLOP/s = 0.4 % of compute; the card allows 0.0213 ms, the bench measured 0.0338 ms'."""
        what = f" ({self.dtype})" if self.dtype else ""
        return (f"{self.intensity:.3g} FLOP/B, {self.side} side of the {self.ridge:.3g} FLOP/B ridge{what}: "
                f"{self.gbps:.0f} GB/s = {self.pct_memory:.0f} % of HBM, {self.tflops:.3g} TFLOP/s = "
                f"{self.pct_compute:.1f} % of compute; the card allows {self.ceiling_ms:.4g} ms, the bench "
                f"measured {self.ms:.4g} ms")

    def as_json(self) -> dict[str, object]:
        return {"intensity": self.intensity, "ridge": self.ridge, "gbps": self.gbps, "tflops": self.tflops,
                "pct_memory": self.pct_memory, "pct_compute": self.pct_compute, "ms": self.ms,
                "peak_tflops": self.peak_tflops, "peak_gbps": self.peak_gbps, "dtype": self.dtype,
                "side": self.side, "matrix_math": self.matrix_math, "line": self.line()}


def place(ms: float, flops: float | None, nbytes: float | None, dtype: str | None,
          peak: Peak | None) -> Roofline | None:
    """The kernel on the roofline, or None when a count, the time or the card's peak is unknown
    (fp32 without a dtype: the FP32 pipe's peak)."""
    top = peak.tflops_for(dtype or "fp32") if peak is not None else None
    if peak is None or not flops or not nbytes or ms <= 0 or not top or not peak.memory_gbps:
        return None
    seconds = ms * 1e-3
    gbps, tflops = nbytes / seconds / 1e9, flops / seconds / 1e12
    return Roofline(flops / nbytes, ridge(top, peak.memory_gbps), gbps, tflops,
                    100 * gbps / peak.memory_gbps, 100 * tflops / top, ms, top, peak.memory_gbps, dtype)


def ridge(peak_tflops: float, peak_gbps: float) -> float:
    """The ridge point in FLOP/byte: where the memory roof meets the compute roof."""
    return peak_tflops * 1e12 / (peak_gbps * 1e9)
