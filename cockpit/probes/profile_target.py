"""A workload for ncu to profile, launched in a CHILD python (imports torch).

    python profile_target.py ours|flash|cudnn|copy|tiny --workspace DIR [--S 4096 --D 64 ...]

Every mode warms up, then makes the launches ncu is told to skip, then the one it profiles.
ours: the workspace's built extension; flash/cudnn: SDPA with that backend; copy: an
elementwise kernel streaming 512 MB (memory-bound); tiny: an add over 32 elements (a grid far
under one wave).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import traceback
from pathlib import Path

CANNOT_RUN = "profile_target: cannot run: "  # profile_probe.py passes this line on as its verdict
try:
    import torch
    import torch.nn.functional as F
except ImportError as missing:  # the traceback stays in the log
    traceback.print_exc()
    print(f"{CANNOT_RUN}torch does not import in {sys.executable} ({missing}); install torch's CUDA "
          "build in this python", flush=True)
    raise SystemExit(2) from None

WARMUP = 3


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=("ours", "flash", "cudnn", "copy", "tiny"))
    p.add_argument("--workspace", type=Path, default=Path.cwd())
    p.add_argument("--B", type=int, default=4)
    p.add_argument("--H", type=int, default=16)
    p.add_argument("--S", type=int, default=4096)
    p.add_argument("--D", type=int, default=64)
    p.add_argument("--dtype", choices=("fp16", "bf16"), default="fp16")
    p.add_argument("--causal", action="store_true")
    p.add_argument("--launches", type=int, default=WARMUP + 1)
    a = p.parse_args(argv)
    if not torch.cuda.is_available():
        build = "a CPU-only build" if torch.version.cuda is None else f"built for CUDA {torch.version.cuda}"
        print(f"{CANNOT_RUN}no CUDA device (torch {torch.__version__} is {build}); "
              "`cockpit gate env` says why", flush=True)
        return 2
    dtype = torch.float16 if a.dtype == "fp16" else torch.bfloat16
    g = torch.Generator(device="cuda").manual_seed(0)
    shape = (a.B, a.H, a.S, a.D)
    if a.mode in ("ours", "flash", "cudnn"):
        q, k, v = (torch.randn(shape, generator=g, device="cuda").to(dtype) for _ in range(3))
    if a.mode == "ours":
        so = a.workspace / "build" / "cockpit_attn" / "cockpit_attn.so"
        spec = importlib.util.spec_from_file_location("cockpit_attn", so)
        if spec is None or spec.loader is None or not so.exists():
            print(f"{so} is not built; run the build gate first", flush=True)
            return 2
        ext = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(ext)

        def run() -> object:
            return ext.forward(q, k, v, a.causal)
    elif a.mode in ("flash", "cudnn"):
        from torch.nn.attention import SDPBackend, sdpa_kernel

        backend = SDPBackend.FLASH_ATTENTION if a.mode == "flash" else SDPBackend.CUDNN_ATTENTION

        def run() -> object:
            with sdpa_kernel(backend):
                return F.scaled_dot_product_attention(q, k, v, is_causal=a.causal)
    elif a.mode == "copy":
        # A kernel that only streams memory (a plain copy_ would be a cudaMemcpy, not a kernel).
        src = torch.ones(128 * 1024 * 1024, device="cuda")  # 512 MB of float32
        dst = torch.empty_like(src)

        def run() -> object:
            return torch.mul(src, 2.0, out=dst)
    else:
        x = torch.ones(32, device="cuda")

        def run() -> object:
            return x.add_(1)
    for _ in range(a.launches):
        run()
    torch.cuda.synchronize()
    print(f"profile_target: {a.mode} launched {a.launches} times", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
