"""Build the workload extension (csrc/*.cu, csrc/*.cpp) with ninja, then check it imports and
record how it launches its kernels (its `launch_info()`: threads, dynamic shared memory, and on
a GPU the CUDA runtime's blocks per SM), which ptxas cannot see.

    python build_probe.py --workspace DIR --out RESULT.json [--name cockpit_attn]

Run in a CHILD python by the Build gate. Standard library only at the top: torch is imported
only when build.ninja has to be (re)generated through torch.utils.cpp_extension. Once it
exists, ninja runs directly, so a no-op build is a ninja no-op, not a torch import.
The arch is pinned: $TORCH_CUDA_ARCH_LIST if set, else the GPU's (nvidia-smi), never "all".
Exit 0 built and imports, 1 the build or the import failed, 2 it could not run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

WIRE = 1
"""The version of this result file: cockpit/workload/result_wire.py's WIRE (this probe runs by its
path, with nothing of the cockpit; tests/test_result_wire.py holds the two equal)."""

CUDA_FLAGS = ["-O3", "-Xptxas=-v", "-lineinfo", "--use_fast_math", "-std=c++17", "-DCOCKPIT_TUNED_FLAGS=1"]
"""The gate's own nvcc flags. COCKPIT_TUNED_FLAGS says the kept winner of the GPU built for comes as
-D knobs (the workload's tuned file), so a kernel reading its tuned header takes only other archs'."""
CXX_FLAGS = ["-O3", "-std=c++17"]
STAMP = "cockpit-build.json"


def say(text: str) -> None:
    print(f"cockpit-build: {text}", flush=True)


def detect_arch() -> str | None:
    """'9.0' for the first GPU, from nvidia-smi (fast) or torch (slow); None without a GPU."""
    if shutil.which("nvidia-smi"):
        try:
            out = subprocess.run(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"],
                                 capture_output=True, text=True, timeout=10)
            caps = [c.strip() for c in out.stdout.splitlines() if c.strip()]
            if out.returncode == 0 and caps:
                return caps[0]
        except (OSError, subprocess.TimeoutExpired):
            pass
    try:
        import torch

        if torch.cuda.is_available():
            major, minor = torch.cuda.get_device_capability()
            return f"{major}.{minor}"
    except ImportError:
        pass
    return None


def stale_lock(build_dir: Path) -> Path | None:
    lock = build_dir / "lock"
    return lock if lock.exists() else None


def run_ninja(build_dir: Path, jobs: int) -> int:
    ninja = shutil.which("ninja")
    if ninja is None:
        say("ninja not found on PATH; pip install ninja")
        return 2
    return subprocess.call([ninja, "-v", "-C", str(build_dir), "-j", str(jobs)])


def generate_and_build(name: str, sources: list[Path], build_dir: Path, includes: list[str] | None = None,
                       cuda_flags: list[str] | None = None) -> int:
    """First build (or after sources/arch/flags changed): torch writes build.ninja and runs it."""
    try:
        from torch.utils.cpp_extension import load
    except ImportError as exc:
        say(f"cannot import torch.utils.cpp_extension ({exc}); install the CUDA build of torch")
        return 2
    try:
        load(name=name, sources=[str(s) for s in sources], extra_cuda_cflags=cuda_flags or CUDA_FLAGS,
             extra_cflags=CXX_FLAGS, extra_include_paths=includes or None, build_directory=str(build_dir),
             verbose=True)
    except Exception as exc:  # the compiler's own output is already in the log above
        lines = str(exc).strip().splitlines()
        say(f"build failed: {type(exc).__name__}: {lines[-1] if lines else ''}")
        return 1
    return 0


# Runs in a fresh python: imports the library after torch (as a user would), then asks it how
# it launches its kernels and, on a GPU, what the CUDA runtime makes of them.
IMPORT_CHECK = """
import importlib.util, json, sys, torch

spec = importlib.util.spec_from_file_location(sys.argv[1], sys.argv[2])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
print('exports:', ', '.join(n for n in dir(mod) if not n.startswith('_')))
launch = {'error': 'the extension exports no launch_info() (docs/workloads.md says what it returns)'}
if hasattr(mod, 'launch_info'):
    try:
        launch = {'kernels': mod.launch_info(), 'gpu': None}
    except Exception as exc:
        launch = {'error': f'launch_info() raised {type(exc).__name__}: {exc}'}
if 'kernels' in launch and torch.cuda.is_available():
    p = torch.cuda.get_device_properties(torch.cuda.current_device())
    slots = getattr(p, 'max_threads_per_multi_processor', 0) // 32
    launch['gpu'] = {'name': p.name, 'arch': f'sm_{p.major}{p.minor}', 'sms': p.multi_processor_count,
                     'max_warps_per_sm': slots or None, 'uuid': str(getattr(p, 'uuid', '')) or None}
print('launch:', json.dumps(launch))
"""


def import_check(name: str, so: Path) -> tuple[bool, str, dict[str, object] | None]:
    """(imports, what it said, its launch table) from a fresh python that imports the library."""
    try:
        out = subprocess.run([sys.executable, "-c", IMPORT_CHECK, name, str(so)], capture_output=True,
                             text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return False, "the import did not finish within 120 s", None
    lines = [line for line in (out.stdout + out.stderr).splitlines() if line.strip()]
    if out.returncode != 0 and "No module named 'torch'" in (lines or [""])[-1]:
        return False, (f"torch does not import in {sys.executable}: install torch's CUDA build in "
                       "this python, or start the cockpit from the environment that has it"), None
    if out.returncode != 0:
        return False, lines[-1] if lines else f"exit {out.returncode}", None
    exports = next((line for line in lines if line.startswith("exports:")), "")
    found = next((line.removeprefix("launch: ") for line in lines if line.startswith("launch: ")), "")
    try:
        launch = json.loads(found)
    except ValueError:
        launch = {"error": f"the import check printed no launch table ({found[:200] or 'nothing'})"}
    return True, exports, launch


def describe_launch(launch: dict[str, object] | None) -> str:
    """One log line about the launch table."""
    if not launch:
        return "launch_info: not asked (the import failed)"
    if launch.get("error"):
        return f"launch_info: {launch['error']}"
    kernels = launch.get("kernels") or []
    gpu = launch.get("gpu")
    where = (f"on {gpu['name']} ({gpu['arch']})" if isinstance(gpu, dict)
             else "no GPU: runtime occupancy not asked")
    return f"launch_info: {len(kernels) if isinstance(kernels, list) else 0} kernels, {where}"


def resource_usage(so: Path) -> str | None:
    """`cuobjdump --dump-resource-usage` of the library (per-kernel registers and smem)."""
    cuda_home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or "/usr/local/cuda"
    tool = shutil.which("cuobjdump") or shutil.which("cuobjdump", path=str(Path(cuda_home) / "bin"))
    if tool is None:
        return None
    try:
        out = subprocess.run([tool, "--dump-resource-usage", str(so)], capture_output=True,
                             text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout if out.returncode == 0 else None


def sources_at(workspace: Path, revision: str, sources: list[str], includes: list[str], dest: Path) -> Path:
    """The folders holding `sources` and `includes`, as committed at `revision`, unpacked under
    `dest` (`git archive`): an earlier version of the kernel, built beside the current one."""
    import io
    import shutil as sh
    import tarfile

    folders = sorted({str(Path(s).parent) for s in sources} | set(includes))
    out = subprocess.run(["git", "-C", str(workspace), "archive", "--format=tar", revision, "--",
                          *folders], capture_output=True, timeout=60)
    if out.returncode != 0:
        said = out.stderr.decode(errors="replace").strip().splitlines()
        raise ValueError(said[-1] if said else "git archive failed")
    if dest.exists():
        sh.rmtree(dest)
    dest.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(out.stdout)) as tar:
        tar.extractall(dest, filter="data")
    return dest


class Stop(Exception):
    """The probe cannot go on: it says why and exits with `code`, writing no result."""

    def __init__(self, code: int, why: str) -> None:
        super().__init__(why)
        self.code = code


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--workspace", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--name", default="cockpit_attn")
    p.add_argument("--sources", default=None, help="JSON list of workspace-relative sources "
                   "(default: csrc/*.cu and csrc/*.cpp)")
    p.add_argument("--include-dirs", default="[]", help="JSON list, workspace-relative")
    p.add_argument("--cuda-flags", default="[]", help="JSON list, after the gate's own flags")
    p.add_argument("--revision", default=None, help="build the sources as committed at this git revision")
    p.add_argument("--build-dir", type=Path, default=None, help="default: WORKSPACE/build/NAME")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    started = time.monotonic()
    try:
        return build_and_check(args, started)
    except Stop as stop:
        say(str(stop))
        return stop.code


def build_and_check(args: argparse.Namespace, started: float) -> int:
    """Build, check the library imports and how it launches, write the result file; the exit code."""
    src_root = source_root(args)
    sources = find_sources(args, src_root)
    includes = [str(src_root / d) for d in json.loads(args.include_dirs)]
    cuda_flags = [*CUDA_FLAGS, *json.loads(args.cuda_flags)]
    build_dir: Path = args.build_dir or args.workspace / "build" / args.name
    build_dir.mkdir(parents=True, exist_ok=True)
    arch = pin_arch()
    jobs = pin_jobs()
    say(f"building {args.name} for arch {arch} with MAX_JOBS={jobs} in {build_dir}")
    refuse_stale_lock(build_dir)
    wanted: dict[str, object] = {"arch": arch, "sources": [str(s) for s in sources], "cuda_flags": cuda_flags,
              "include_dirs": includes, "cxx_flags": CXX_FLAGS, "python": sys.executable}
    stamp = read_stamp(build_dir / STAMP)
    fast = (build_dir / "build.ninja").exists() and stamp.get("config") == wanted
    code = run_ninja(build_dir, jobs) if fast else generate_and_build(args.name, sources, build_dir,
                                                                      includes, cuda_flags)
    so = build_dir / f"{args.name}.so"
    result: dict[str, object] = {
        "name": args.name, "arch": arch, "jobs": jobs, "build_dir": str(build_dir),
        "so": str(so), "sources": [s.name for s in sources], "regenerated": not fast,
    }
    if code == 0 and so.exists():
        code = check_library(args.name, so, stamp, wanted, build_dir / STAMP, result)
    result["exit"] = code
    result["duration_s"] = round(time.monotonic() - started, 2)
    write_result(args.out, result)
    return code


def source_root(args: argparse.Namespace) -> Path:
    """Where the sources are read from: the workspace, or its sources as committed at --revision
    (the build folder stays in the workspace)."""
    if args.revision is None:
        return Path(args.workspace)
    try:
        root = sources_at(args.workspace, args.revision, json.loads(args.sources or "[]"),
                          json.loads(args.include_dirs), args.workspace / "build" / args.name / "src")
    except (OSError, ValueError, subprocess.SubprocessError) as exc:
        raise Stop(2, f"cannot take the sources at {args.revision}: {exc}") from exc
    say(f"sources as committed at {args.revision}, in {root}")
    return root


def find_sources(args: argparse.Namespace, src_root: Path) -> list[Path]:
    """The sources named (each must exist), else csrc/*.cu and csrc/*.cpp."""
    if args.sources is None:
        csrc = src_root / "csrc"
        sources = sorted([*csrc.glob("*.cu"), *csrc.glob("*.cpp")])
    else:
        sources = [src_root / s for s in json.loads(args.sources)]
        missing = [s for s in sources if not s.is_file()]
        if missing:
            raise Stop(2, f"{missing[0]}: no such source; fix the workload's Extension(sources=...)")
    if not sources:
        raise Stop(2, f"no csrc/*.cu or csrc/*.cpp in {args.workspace}; name the sources in the "
                   "workload's Extension")
    return sources


def pin_arch() -> str:
    """The arch to build for, pinned in $TORCH_CUDA_ARCH_LIST: as set, else the GPU's."""
    arch = os.environ.get("TORCH_CUDA_ARCH_LIST") or detect_arch()
    if not arch:
        raise Stop(2, "no GPU found to build for; set TORCH_CUDA_ARCH_LIST (e.g. 8.9 for an L4, "
                   "9.0 for an H100)")
    os.environ["TORCH_CUDA_ARCH_LIST"] = arch
    return arch


def pin_jobs() -> int:
    """ninja's parallel jobs, pinned in $MAX_JOBS: as set, else one per CPU."""
    jobs = int(os.environ.get("MAX_JOBS") or os.cpu_count() or 4)
    os.environ["MAX_JOBS"] = str(jobs)
    return jobs


def refuse_stale_lock(build_dir: Path) -> None:
    """An earlier build's lock file would make torch wait for ever: stop and say how to clear it."""
    lock = stale_lock(build_dir)
    if lock is not None:
        age = time.time() - lock.stat().st_mtime
        raise Stop(1, f"error: a lock file from an earlier build is in the way: {lock} "
                   f"({age / 60:.0f} min old); if no build is running, delete it: rm {lock}")


def read_stamp(path: Path) -> dict[str, Any]:
    """What the last build here was configured with and what its import check found."""
    try:
        stamp = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return stamp if isinstance(stamp, dict) else {}


def check_library(name: str, so: Path, stamp: dict[str, Any], wanted: dict[str, object],
                  stamp_path: Path, result: dict[str, object]) -> int:
    """Check the built library imports (unless it has not changed since it last did) and read how
    it launches; fill `result` and the stamp. The exit code: 0 it imports, 1 it does not."""
    st = so.stat()
    key = f"{st.st_mtime_ns}:{st.st_size}"
    if stamp.get("import_ok_for") == key and stamp.get("launch"):
        ok, detail, launch = True, "unchanged since its last import check", stamp["launch"]
    else:
        ok, detail, launch = import_check(name, so)
    say(f"import {'ok' if ok else 'FAILED'}: {detail}")
    say(describe_launch(launch))
    result["import"] = {"ok": ok, "detail": detail}
    result["launch"] = launch
    result["cuobjdump"] = resource_usage(so)
    stamp_path.write_text(json.dumps({"config": wanted, "import_ok_for": key if ok else None,
                                      "launch": launch if ok else None}))
    return 0 if ok else 1


def write_result(out: Path, result: dict[str, object]) -> None:
    """The result file, whole or not at all (written beside, then renamed)."""
    tmp = out.with_suffix(".tmp")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp.write_text(json.dumps({"wire": WIRE, **result}, indent=1))
    os.replace(tmp, out)


if __name__ == "__main__":
    sys.exit(main())
