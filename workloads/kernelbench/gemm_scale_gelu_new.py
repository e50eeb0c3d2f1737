# The engineer's answer to gemm_scale_gelu.py in KernelBench's format: cuBLAS's GEMM with the
# bias folded in (addmm), then the scale and GELU fused in one Triton pass instead of two.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _scale_gelu(x_ptr, y_ptr, n, scale, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask) * scale
    y = 0.5 * x * (1.0 + tl.math.erf(x * 0.7071067811865476))
    tl.store(y_ptr + offs, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x):
        h = torch.addmm(self.gemm.bias, x, self.gemm.weight.t())
        y = torch.empty_like(h)
        n = h.numel()
        _scale_gelu[(triton.cdiv(n, 4096),)](h, y, n, self.scale, BLOCK=4096)
        return y
