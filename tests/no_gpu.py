"""This machine as one without a GPU, whatever it has, for the tests about that machine (CI's): a
GPU box runs the same suite and passes it.

`no_gpu_env()` is the environment for a child: tests/fixtures/no_gpu first on PYTHONPATH (NVML's
library not found through the real pynvml, a CPU-only torch) and no CUDA device. The `no_gpu`
fixture (conftest.py) does the same for the test's own process and its children.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import pytest

NO_GPU = Path(__file__).resolve().parent / "fixtures" / "no_gpu"


def no_gpu_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ if base is None else base)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(NO_GPU), env.get("PYTHONPATH")) if p)
    env["CUDA_VISIBLE_DEVICES"] = ""
    return env


def hide_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """In this process (pynvml's library not found) and in every child it starts."""
    for key, value in no_gpu_env().items():
        if os.environ.get(key) != value:
            monkeypatch.setenv(key, value)
    try:
        import pynvml
    except ImportError:
        return

    def no_library(*args: object, **kwargs: object) -> None:
        raise OSError("libnvidia-ml.so.1: cannot open shared object file (tests/no_gpu.py)")

    monkeypatch.setattr(pynvml, "nvmlLib", None)
    monkeypatch.setattr(pynvml, "CDLL", no_library)
