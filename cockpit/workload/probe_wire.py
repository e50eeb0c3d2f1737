"""What a probe prints that the cockpit reads, as types both sides share: the tuner's measuring
child's JSON lines (each request cockpit/tune/measure.py writes, each reply
cockpit/probes/workload/tune_serve.py prints) and the NVML window a timed run carries
(cockpit/probes/gpu_watch.py). Plain Python with no torch and nothing else of the cockpit but the
tuned file's value types: the probes import it in the user's Python."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, TypedDict

from cockpit.workload.tuned import GroupKey, KnobValues, Scalar

ShapeJson = dict[str, Scalar]
"""One point of a grid as it travels: axis name -> value."""


class VariantJson(TypedDict):
    """The build of a configuration's define knobs: its short key and its -D flags."""

    key: str
    flags: list[str]


class ConfigJson(TypedDict):
    """A configuration as the child takes it: kwarg values, and the build of its defines."""

    knobs: KnobValues
    variant: VariantJson | None


class HelloRequest(TypedDict):
    op: Literal["hello"]


class BaselineRequest(TypedDict):
    op: Literal["baseline"]
    shapes: list[ShapeJson]


class CheckRequest(TypedDict):
    op: Literal["check"]
    config: ConfigJson
    shapes: list[ShapeJson]


class TimeRequest(TypedDict):
    op: Literal["time"]
    config: ConfigJson
    shapes: list[ShapeJson]
    short: bool


class ConfirmRequest(TypedDict):
    op: Literal["confirm"]
    configs: dict[str, ConfigJson]
    shapes: list[ShapeJson]


Request = HelloRequest | BaselineRequest | CheckRequest | TimeRequest | ConfirmRequest


class DeviceReply(TypedDict):
    """`hello`: the GPU the child holds."""

    device: str
    arch: str
    uuid: str
    pid: int


class CheckReply(TypedDict):
    ok: bool
    detail: str


class TimesReply(TypedDict):
    """`time` and `baseline`: per shape, the per-call times."""

    times_ms: list[list[float]]


class _GpuNamed(TypedDict):
    cuda_ordinal: int
    name: str
    uuid: str
    pci_bus_id: str | None
    """"00000000:1B:00.0", as NVML writes it."""
    cuda_visible_devices: str | None


class GpuIdentity(_GpuNamed, total=False):
    """The GPU torch runs on, named so NVML finds it; NVML's index and UUID once a watch found it."""

    nvml_index: int
    nvml_uuid: str
    max_sm_clock: int


class GpuSampleJson(TypedDict, total=False):
    """One NVML look at the watched GPU (every 20 ms while a probe times); `lost` (and no values)
    when NVML said the GPU fell off the bus."""

    t: float
    util: int | None
    sm_clock: int | None
    max_sm_clock: int
    throttle: int | None
    """NVML's clock-event reasons, a bit mask."""
    temp: int | None
    power_w: float | None
    pids: list[list[int]]
    """[pid, MiB used] of each compute process on it."""
    lost: bool


class ConfirmReply(TypedDict):
    """`confirm`: per configuration name (and "baseline"), per shape, the per-call times; the NVML
    window the validity verdict reads; the bench rows without their times."""

    times_ms: dict[str, list[list[float]]]
    started: float
    finished: float
    pid: int
    gpu: GpuIdentity | None
    gpu_samples: list[GpuSampleJson]
    gpu_watch_error: str | None
    rows: list[Mapping[str, object]]


class ErrorReply(TypedDict):
    """A request the child could not answer; `fatal`: its CUDA context is gone, and so is it."""

    error: str
    fatal: bool


Reply = DeviceReply | CheckReply | TimesReply | ConfirmReply


class GroupSpaceJson(TypedDict):
    """One tune group's space on a GPU's limits: what the rule allows, what it rejects and why."""

    key: GroupKey
    feasible: list[list[Scalar]]
    rejected: dict[str, int]
    """The rule's reason, numbers folded to N -> how many combinations it rejected."""
    examples: dict[str, str]
    """The folded reason -> one of its own words."""


class SpaceJson(TypedDict, total=False):
    """`workload_probe.py space`: per tune group, the knob combinations the rule allows ({}: not
    asked, as on a resumed search)."""

    knobs: list[str]
    groups: list[GroupSpaceJson]


# --- the manifest: what the workload declares (workload_load.describe writes, manifest.py reads) ---

class GridShapeJson(TypedDict):
    name: str
    shape: ShapeJson
    flops: float | None
    bytes: float | None


class BuildJson(TypedDict):
    kind: str
    name: str | None
    sources: list[str]
    include_dirs: list[str]
    cuda_flags: list[str]
    variant_build: str
    tuned_header: str | None


class ReferenceJson(TypedDict):
    name: str
    oracle: bool
    baseline: bool
    optional: bool


class CheckJson(TypedDict):
    kind: str
    tolerance: dict[str, float]
    atol: dict[str, float]


class ProfileJson(TypedDict):
    kernel: str
    shape: GridShapeJson
    candidate: str


class KnobJson(TypedDict):
    name: str
    values: list[Scalar]
    via: str
    macro: str
    start: Scalar
    hints: dict[str, int]
    words: str | dict[str, str] | None
    """How a pull request reads a setting of it (spec.Knob.words); an older manifest lacks it."""


class KnobDefaultsJson(TypedDict):
    group: GroupKey
    knobs: KnobValues


class ManifestJson(TypedDict):
    schema: int
    name: str
    source: str
    build: BuildJson
    candidates: list[str]
    references: list[ReferenceJson]
    test_grid: list[GridShapeJson]
    correctness: list[str]
    bench_grid: list[GridShapeJson]
    check: CheckJson
    dtype_key: str | None
    writes_output: bool
    profile: ProfileJson | None
    knobs: list[KnobJson]
    knob_combinations: int
    knob_allowed: int | None
    keep_per: list[str]
    tune_grid: list[GridShapeJson] | None
    knob_defaults: list[KnobDefaultsJson]
    modes: list[str]
    """The passes checked and timed ("forward", "backward", "full"); a cached manifest from an older
    cockpit lacks it: read as forward."""
    grad_inputs: list[int]
    group_words: dict[str, str]
    """keep_per key -> its words (spec.Workload.group_words); an older manifest lacks it."""
