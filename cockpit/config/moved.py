"""Keys of earlier versions that now live in the workload module: each is refused in one line that
says where it went, never ignored (a setting that silently stops applying is a wrong result). The
example kernel's shapes and tolerance were once cockpit.toml keys; a workload declares them now."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cockpit.config.reader import ConfigReader

MOVED: dict[str, tuple[tuple[str, ...], str]] = {
    "workload": (
        ("batch", "heads", "head_dims", "seq_lens", "dtypes", "causal", "large_seq", "large_batch",
         "tolerance", "ragged_seq_lens", "ragged_batch", "ragged_heads"),
        "the shapes, dtypes and tolerance now live in the workload module (its test_grid, bench_grid "
        "and check; docs/workloads.md): remove this key and name the module with [workload] module = \"...\"",
    ),
    "profile": (
        ("batch", "heads", "seq_len", "head_dim", "dtype", "causal"),
        "the shape the profile runs is now the workload's Profile(shape=...) (docs/workloads.md): "
        "remove this key",
    ),
    "tune": (
        ("head_dims", "seq_lens", "batch", "heads", "dtype", "causal"),
        "the shapes a tune times now live in the workload module (its tune_grid, else its bench_grid, "
        "searched per keep_per group; docs/workloads.md): remove this key",
    ),
}


def refuse_moved(table: Mapping[str, Any], section: str, reader: ConfigReader) -> None:
    """One line naming `cockpit.toml:LINE` and where the key went, for the first moved key found."""
    keys, where = MOVED[section]
    for key in keys:
        if key in table:
            raise reader.fail(f"{section}.{key}", where)
