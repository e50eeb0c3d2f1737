# A problem in KernelBench's format (a level-1 problem: one operator), written for the cockpit's
# examples: softmax over the rows of a (batch_size, dim) float32 matrix.
import torch
import torch.nn as nn


class Model(nn.Module):
    """Softmax over dim 1."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)


batch_size = 4096
dim = 393216


def get_inputs():
    x = torch.rand(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
