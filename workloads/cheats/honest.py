"""The honest twin of the catalogue's cheats: the same op, computed by kernels of its own, on every
call, into the output it is given. It must pass every gate with every check on: a check that fails
it is a check that fails honest kernels."""

from __future__ import annotations

from cheat_kit import right, softmax_workload

CPU_OK = True

WORKLOAD = softmax_workload("honest", right)
