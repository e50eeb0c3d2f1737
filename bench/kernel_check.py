"""Build, check and time the cockpit's attention kernel (csrc/) on the local GPU.

    python3 bench/kernel_check.py [--skip-speed] [--arch 8.9]

--arch 8.9 builds for the L4 (sm_89 code and its PTX): on a Hopper card the driver JIT-compiles
that PTX, so the L4's code path (its tile configuration, its 99 KB shared-memory bound) is
checked and timed on the card at hand, the best proxy there is for an L4 without one.

1. builds the `cockpit_attn` extension with torch.utils.cpp_extension.load (the build gate's
   flags, TORCH_CUDA_ARCH_LIST pinned to this GPU, a temporary build directory);
2. correctness against a float32 reference for fp16/bf16, D in {64, 128}, causal or not and
   sequence lengths on and off the tile edges; plus the binding's input validation;
3. speed against torch SDPA's FLASH backend (CUDA events, median of 30 after 10 warm-ups).

Exit 0 when every correctness case passes, 1 otherwise (2 when it cannot run at all).
"""

from __future__ import annotations

import argparse
import functools
import glob
import math
import os
import statistics
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CSRC = os.path.join(REPO, "csrc")
FLAGS = ["-O3", "-Xptxas=-v", "-lineinfo", "--use_fast_math"]
REL_TOL = 1e-2


def build(arch=None):
    import torch
    from torch.utils.cpp_extension import load

    major, minor = torch.cuda.get_device_capability()
    os.environ["TORCH_CUDA_ARCH_LIST"] = f"{arch}+PTX" if arch else f"{major}.{minor}"
    sources = sorted(glob.glob(os.path.join(CSRC, "*.cu")) + glob.glob(os.path.join(CSRC, "*.cpp")))
    build_dir = tempfile.mkdtemp(prefix="cockpit_attn_build_")
    t0 = time.perf_counter()
    mod = load(
        name="cockpit_attn",
        sources=sources,
        extra_cuda_cflags=FLAGS,
        build_directory=build_dir,
        verbose=False,
    )
    dt = time.perf_counter() - t0
    print(
        f"build: {dt:.1f} s  (TORCH_CUDA_ARCH_LIST={os.environ['TORCH_CUDA_ARCH_LIST']}, "
        f"sources={[os.path.basename(s) for s in sources]}, dir={build_dir})",
        flush=True,
    )
    return mod, build_dir


def reference(q, k, v, causal, scale):
    import torch

    s = q.float() @ k.float().transpose(-1, -2) * scale
    if causal:
        n = q.shape[-2]
        mask = torch.ones(n, n, dtype=torch.bool, device=q.device).triu(1)
        s = s.masked_fill(mask, float("-inf"))
    return torch.softmax(s, -1) @ v.float()


def check_correctness(mod) -> int:
    import torch

    print("\n== correctness (B=2, H=4, random normal, seed 0; PASS: rel L2 <= 1e-2, finite)")
    print(f"{'dtype':>8} {'D':>4} {'causal':>6} {'S':>5} {'max_abs':>10} {'rel_l2':>10}  result")
    failures = 0
    for dtype in (torch.float16, torch.bfloat16):
        for d in (64, 128):
            for causal in (False, True):
                for s in (32, 65, 127, 128, 1024, 4096):
                    g = torch.Generator(device="cuda").manual_seed(0)
                    q, k, v = (
                        torch.randn(2, 4, s, d, device="cuda", dtype=dtype, generator=g) for _ in range(3)
                    )
                    scale = 1.0 / math.sqrt(d)
                    out = mod.forward(q, k, v, causal)
                    torch.cuda.synchronize()
                    ref = reference(q, k, v, causal, scale)
                    outf = out.float()
                    finite = bool(torch.isfinite(outf).all())
                    max_abs = (outf - ref).abs().max().item() if finite else float("nan")
                    rel = ((outf - ref).norm() / ref.norm()).item() if finite else float("nan")
                    ok = finite and rel <= REL_TOL and out.shape == q.shape and out.dtype == q.dtype
                    failures += not ok
                    name = str(dtype).replace("torch.", "")
                    print(
                        f"{name:>8} {d:>4} {causal!s:>6} {s:>5} {max_abs:>10.3e} {rel:>10.3e}"
                        f"  {'PASS' if ok else 'FAIL'}",
                        flush=True,
                    )
    # Explicit scales, and keyword arguments: the kernel folds the scale into its exp2 FMAs, so a
    # negative scale (Q negated in shared memory) and zero (uniform weights) are checked too.
    g = torch.Generator(device="cuda").manual_seed(1)
    q, k, v = (torch.randn(1, 2, 200, 64, device="cuda", dtype=torch.float16, generator=g) for _ in range(3))
    for scale in (0.3, -0.3, 0.0):
        for causal in (True, False):
            out = mod.forward(q, k, v, causal=causal, scale=scale)
            ref = reference(q, k, v, causal, scale)
            rel = ((out.float() - ref).norm() / ref.norm()).item()
            ok = bool(torch.isfinite(out).all()) and rel <= REL_TOL
            failures += not ok
            verdict = "PASS" if ok else "FAIL"
            print(f"explicit scale={scale}, S=200, causal={causal}: rel_l2 {rel:.3e}  {verdict}")
    print(f"correctness: {'all passed' if failures == 0 else f'{failures} FAILED'}", flush=True)
    return failures


_VALIDATION_CHILD = r"""
import sys
import torch
sys.path.insert(0, sys.argv[1])
import cockpit_attn as mod
x = torch.randn(1, 2, 16, 64, device="cuda", dtype=torch.float16)
x96 = torch.randn(1, 2, 16, 96, device="cuda", dtype=torch.float16)
cases = {
    "float32": lambda: mod.forward(x.float(), x.float(), x.float(), False),
    "cpu": lambda: mod.forward(x.cpu(), x.cpu(), x.cpu(), False),
    "head_dim 96": lambda: mod.forward(x96, x96, x96, False),
    "rank 3": lambda: mod.forward(x[0], x[0], x[0], False),
    "non-contiguous": lambda: mod.forward(x.transpose(1, 2), x.transpose(1, 2), x.transpose(1, 2), False),
    "shape mismatch": lambda: mod.forward(x, x[:, :, :8].contiguous(), x, False),
    "dtype mismatch": lambda: mod.forward(x, x.bfloat16(), x, False),
}
try:
    cases[sys.argv[2]]()
except RuntimeError as e:
    print("raised: " + str(e).splitlines()[0][:110])
    sys.exit(0)
print("DID NOT RAISE")
sys.exit(1)
"""


def check_validation(build_dir: str) -> int:
    """Each bad input must raise a clear RuntimeError; each case runs in its own process,
    so a crash (segfault) in one is reported as a failure instead of killing this script."""
    import subprocess

    print("\n== input validation (each must raise a clear error; one process per case)")
    cmd = [sys.executable, "-X", "faulthandler", "-c", _VALIDATION_CHILD, build_dir]
    names = ("float32", "cpu", "head_dim 96", "rank 3", "non-contiguous", "shape mismatch", "dtype mismatch")
    procs = {
        n: subprocess.Popen([*cmd, n], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for n in names
        if n
    }
    failures = 0
    for name, proc in procs.items():
        out, err = proc.communicate(timeout=120)
        ok = proc.returncode == 0 and out.startswith("raised: ")
        failures += not ok
        print(f"  {name:<15} {out.strip() or '(no output)'}  {'' if ok else f'FAIL (rc {proc.returncode})'}")
        if not ok:
            for line in err.strip().splitlines()[-15:]:
                print(f"      | {line}")
    return failures


def time_ms(fn, warmup=10, iters=30) -> float:
    import torch

    for _ in range(warmup):
        fn()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    for i in range(iters):
        starts[i].record()
        fn()
        ends[i].record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends, strict=True))


def check_speed(mod) -> None:
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    b, h = 4, 16
    print(f"\n== speed (B={b}, H={h}; median of 30 after 10 warm-ups; flops = 4*B*H*S^2*D, half for causal)")
    print(f"{'dtype':>5} {'S':>5} {'D':>4} {'causal':>6} {'ours ms':>9} {'flash ms':>9} "
          f"{'ours TF/s':>10} {'flash TF/s':>10} {'ratio':>6}")
    for dtype in (torch.float16, torch.bfloat16):
        for d in (64, 128):
            for causal in (False, True):
                for s in (1024, 2048, 4096, 8192):
                    g = torch.Generator(device="cuda").manual_seed(0)
                    q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=dtype, generator=g)
                               for _ in range(3))
                    flops = 4 * b * h * s * s * d * (0.5 if causal else 1.0)
                    ours = time_ms(functools.partial(mod.forward, q, k, v, causal))
                    try:
                        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                            flash = time_ms(functools.partial(F.scaled_dot_product_attention, q, k, v,
                                                              is_causal=causal))
                    except RuntimeError as e:  # backend unavailable
                        print(f"  flash unavailable: {str(e).splitlines()[0][:100]}")
                        flash = float("nan")
                    name = "fp16" if dtype == torch.float16 else "bf16"
                    print(f"{name:>5} {s:>5} {d:>4} {causal!s:>6} {ours:>9.3f} {flash:>9.3f} "
                          f"{flops / ours / 1e9:>10.1f} {flops / flash / 1e9:>10.1f} {flash / ours:>6.2f}",
                          flush=True)
    print("ratio = flash ms / ours ms (1.00 = as fast as FLASH)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--skip-speed", action="store_true", help="correctness only")
    ap.add_argument("--arch", help="build for this arch and its PTX, e.g. 8.9 (the L4's path, JIT on Hopper)")
    args = ap.parse_args()
    try:
        import torch
    except ImportError:
        print("kernel_check: torch is not importable", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("kernel_check: no CUDA GPU visible to torch", file=sys.stderr)
        return 2
    print(
        f"torch {torch.__version__} (CUDA {torch.version.cuda}), "
        f"GPU {torch.cuda.get_device_name()} sm_{''.join(map(str, torch.cuda.get_device_capability()))}"
    )
    mod, build_dir = build(args.arch)
    failures = check_correctness(mod)
    failures += check_validation(build_dir)
    if not args.skip_speed:
        check_speed(mod)
    print(f"\nkernel_check: {'PASS' if failures == 0 else f'FAIL ({failures} failures)'}")
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
