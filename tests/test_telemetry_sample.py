"""Clock-event ("throttle") reasons decode to the words the GPU panel shows, without NVML."""

from __future__ import annotations

import pynvml
import pytest

from cockpit.hardware.clock_events import THROTTLE_WORDS
from cockpit.telemetry.sample import GpuSample, decode_throttle, throttled_seconds


def test_an_idle_gpu_decodes_to_idle_and_no_mask_to_nothing() -> None:
    assert decode_throttle(0x1) == ("idle",)
    assert decode_throttle(0) == ()
    assert decode_throttle(None) == ()


def test_a_power_capped_hot_gpu_lists_every_reason_in_bit_order() -> None:
    assert decode_throttle(0x4 | 0x20 | 0x40) == ("power cap", "SW thermal slowdown", "HW thermal slowdown")


def test_every_word_of_the_brief_is_decoded() -> None:
    assert decode_throttle(0x1FF) == (
        "idle", "app clock setting", "power cap", "HW slowdown", "sync boost", "SW thermal slowdown",
        "HW thermal slowdown", "HW power brake", "display clock setting")


def test_unknown_bits_are_shown_not_dropped() -> None:
    assert decode_throttle(0x4 | 0x1000) == ("power cap", "unknown 0x1000")


@pytest.mark.parametrize(("bit", "word"), THROTTLE_WORDS)
def test_the_hard_coded_bits_are_pynvmls_values(bit: int, word: str) -> None:
    names = {
        "idle": "GpuIdle", "app clock setting": "ApplicationsClocksSetting", "power cap": "SwPowerCap",
        "HW slowdown": "HwSlowdown", "sync boost": "SyncBoost", "SW thermal slowdown": "SwThermalSlowdown",
        "HW thermal slowdown": "HwThermalSlowdown", "HW power brake": "HwPowerBrakeSlowdown",
        "display clock setting": "DisplayClockSetting", "board limit": "BoardLimit",
        "reliability": "Reliability",
    }
    name = names[word]
    # nvidia-ml-py renamed ClocksThrottleReason to ClocksEventReason, and some releases have only one
    # of the two names for the newer bits: whichever this one defines must be the hard-coded bit.
    values = {getattr(pynvml, f"{prefix}{name}") for prefix in ("nvmlClocksThrottleReason", "nvmlClocksEventReason")
              if hasattr(pynvml, f"{prefix}{name}")}
    if not values:
        pytest.skip(f"this nvidia-ml-py names no {word!r} bit under either name")
    assert values == {bit}


def test_a_sample_decodes_its_own_mask() -> None:
    assert GpuSample(0, 0.0, throttle_mask=0x4).throttle_reasons == ("power cap",)


def test_throttled_seconds_hold_each_reason_until_the_next_sample_clipped_to_the_window() -> None:
    points = [(0.0, 0x1), (1.0, 0x4), (2.0, 0x4), (3.0, 0x0), (4.0, 0x4)]
    assert throttled_seconds(points, 0.5, 10.0) == {"idle": 0.5, "power cap": 2.0}
    assert throttled_seconds(points, 1.5, 2.5) == {"power cap": 1.0}


def test_a_pause_in_sampling_counts_only_up_to_the_gap_limit() -> None:
    points = [(0.0, 0x4), (100.0, 0x0)]
    assert throttled_seconds(points, 0.0, 100.0, max_gap_s=10.0) == {"power cap": 10.0}
