# A problem in KernelBench's format (a level-2 problem: a GEMM and its epilogue), written for the
# cockpit's examples: a linear layer, a scale, and GELU.
import torch
import torch.nn as nn


class Model(nn.Module):
    """y = GELU(scale * (x @ W^T + b))."""

    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x):
        x = self.gemm(x)
        x = x * self.scale
        return torch.nn.functional.gelu(x)


batch_size = 1024
in_features = 8192
out_features = 8192
scale = 0.5


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, scale]
