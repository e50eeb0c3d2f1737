"""What results written before workloads existed mean: the first sessions benchmarked one kernel, the
attention example in csrc/, against PyTorch's scaled_dot_product_attention and its backends, and
their journals and result files did not say so. Old journals, report.json and the committed sessions
still read through these names; nothing else in the cockpit knows that kernel. Standard library only."""

from __future__ import annotations

WORKLOAD = "attention"
"""The workload of a result that names none."""
BASELINE = "sdpa"
"""The reference its speedups were stated against."""
REFERENCES = ("sdpa", "flash")
"""The references its clocks were compared with (validity)."""
LABELS = {"ours": "ours", "sdpa": "SDPA", "flash": "FLASH", "cudnn": "cuDNN", "efficient": "EFFICIENT"}
"""How its implementations are shown."""
PATHS = ("csrc/",)
"""What git may touch for a keep/revert that named no paths."""
TUNE_GROUP = "head_dim"
"""The key a tune's `tune_started` spaces named their group by (its group read "D=<value>")."""
