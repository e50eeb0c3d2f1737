"""Side by side: versions of csrc/attention.cu (and their -D knobs) against SDPA's FLASH backend.

    python3 bench/kernel_variants.py --variant base=/tmp/csrc-head \\
        --variant fa2=csrc:-DCOCKPIT_ATTN_D128_BN=64,-DCOCKPIT_ATTN_D128_WARPS=4 [--json F]

Each variant is a folder holding attention.cu/.h, plus optional nvcc flags after a colon (comma
separated). Each is compiled alone for this GPU as `cockpit tune` compiles a configuration
(cockpit/tune/compile.py's flags, in parallel), checked against a float32 reference on ragged
shapes (fp16 and bf16, D 64 and 128, causal or not), then timed with the bench gate's method
(settled blocks, L2 flushed before each call, every variant and FLASH interleaved) on the
target grid: B=4 H=16, S 1k/2k/4k/8k, D 64/128, fp16/bf16, causal or not. Prints, per shape,
FLASH's TFLOP/s and each variant's FLASH ms / variant ms (above 1 = faster than FLASH), then
each variant's worst and geometric mean. A variant that fails a check is reported and not timed.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "cockpit" / "probes"))

from cockpit.tune.compile import NVCC_FLAGS, arch_flags  # noqa: E402

TARGET = [{"B": 4, "H": 16, "S": s, "D": d, "dtype": dt, "causal": c}
          for d in (64, 128) for dt in ("fp16", "bf16") for c in (False, True)
          for s in (1024, 2048, 4096, 8192)]
CHECKS = [{"B": 2, "H": 3, "S": s, "D": d, "dtype": dt, "causal": c}
          for d in (64, 128) for dt in ("fp16", "bf16") for c in (False, True) for s in (1, 77, 1029)]


def parse_variant(text: str) -> tuple[str, Path, list[str]]:
    name, _, rest = text.partition("=")
    folder, _, flags = rest.partition(":")
    if not name or not folder:
        raise SystemExit(f"--variant {text!r}: write NAME=FOLDER[:FLAG,FLAG...]")
    return name, Path(folder), [f for f in flags.split(",") if f]


def compile_variant(name: str, folder: Path, flags: list[str], arch: str,
                    out: Path) -> tuple[str, Path | None, str, float]:
    lib = out / f"{name}.so"
    cmd = ["nvcc", *NVCC_FLAGS, *arch_flags(arch), *flags, "-o", str(lib), str(folder / "attention.cu")]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    report = "\n".join(line for line in done.stderr.splitlines() if "registers" in line or "spill" in line
                       or "error" in line)
    return name, (lib if done.returncode == 0 else None), report, dt


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variant", action="append", required=True, help="NAME=FOLDER[:FLAGS]")
    ap.add_argument("--json", help="write every row here")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--budget-s", type=float, default=0.2, help="GPU time per shape and variant")
    ap.add_argument("--only", help="a substring a shape's name must hold, e.g. 'D128 fp16 full'")
    args = ap.parse_args()

    import torch
    from attention import configs, correctness, timing
    from tune_probe import Library

    major, minor = torch.cuda.get_device_capability()
    arch = f"sm_{major}{minor}"
    out = Path(os.environ.get("KV_BUILD", "/tmp/kernel_variants"))
    out.mkdir(parents=True, exist_ok=True)
    variants = [parse_variant(v) for v in args.variant]
    with ThreadPoolExecutor(max_workers=min(8, len(variants))) as pool:
        built = list(pool.map(lambda v: compile_variant(*v, arch, out), variants))
    libs: dict[str, dict[int, Library]] = {}
    for name, lib, report, dt in built:
        spills = [line for line in report.splitlines()
                  if "spill" in line and " 0 bytes spill stores" not in line]
        print(f"compile {name}: {dt:.1f} s, {'ok' if lib else 'FAILED'}; spilling kernels: {len(spills)}")
        if lib is None:
            print(report[-2000:])
            continue
        libs[name] = {d: Library(str(lib), d) for d in (64, 128)}
        print(f"  D64 {libs[name][64].config}\n  D128 {libs[name][128].config}")

    good: dict[str, dict[int, Library]] = {}
    for name, by_d in libs.items():
        ok = True
        for d in (64, 128):
            rows, passed = correctness.correctness(by_d[d], [c for c in CHECKS if c["D"] == d], "cuda",
                                                  correctness.TOLERANCE)
            if not passed:
                print(f"check {name} D{d}: FAIL at {rows[-1]['config']}")
                ok = False
        if ok:
            print(f"check {name}: {len(CHECKS)} shapes correct")
            good[name] = by_d

    shapes = [c for c in TARGET if not args.only or args.only in configs.config_name(c)]
    flash = timing.sdpa_impls()["flash"]
    table = []
    for cfg in shapes:
        impls = {"flash": flash, **{n: by_d[cfg["D"]] for n, by_d in good.items()}}
        row = timing.bench(impls, [cfg], args.reps, 3, 2, budget_s=args.budget_s, settle_ms=50,
                               rounds=2)[0]
        table.append(row)
    names = list(good)
    print(f"\n{'shape':<34} {'FLASH TF/s':>10} " + " ".join(f"{n:>10}" for n in names))
    for row in table:
        f_ms = row["impl"]["flash"]["median_ms"]
        cells = " ".join(f"{f_ms / row['impl'][n]['median_ms']:>10.3f}" for n in names)
        print(f"{row['config']:<34} {row['impl']['flash']['tflops']:>10.1f} {cells}")
    print()
    for n in names:
        ratios = [row["impl"]["flash"]["median_ms"] / row["impl"][n]["median_ms"] for row in table]
        worst = min(range(len(ratios)), key=ratios.__getitem__)
        geo = math.exp(sum(map(math.log, ratios)) / len(ratios))
        print(f"{n:<10} geomean {geo:.3f}x FLASH, worst {ratios[worst]:.3f}x at {table[worst]['config']}")
    if args.json:
        Path(args.json).write_text(json.dumps({"variants": [(n, str(f), fl) for n, f, fl in variants],
                                               "device": torch.cuda.get_device_name(), "rows": table}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
