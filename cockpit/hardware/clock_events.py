"""NVML's clock-event ("throttle") reasons: each bit and the word the cockpit shows for it.

The bits as pynvml's nvmlClocksEventReason* / nvmlClocksThrottleReason* constants define them,
written out so decoding works on a machine without NVML (replays, tests) and with any
nvidia-ml-py (older releases lack some names).
"""

from __future__ import annotations

CLOCK_EVENT_GPU_IDLE = 0x1  # nvmlClocksEventReasonGpuIdle
CLOCK_EVENT_APPLICATIONS_CLOCKS_SETTING = 0x2  # nvmlClocksEventReasonApplicationsClocksSetting
CLOCK_EVENT_SW_POWER_CAP = 0x4  # nvmlClocksEventReasonSwPowerCap
CLOCK_EVENT_HW_SLOWDOWN = 0x8  # nvmlClocksEventReasonHwSlowdown
CLOCK_EVENT_SYNC_BOOST = 0x10  # nvmlClocksEventReasonSyncBoost
CLOCK_EVENT_SW_THERMAL_SLOWDOWN = 0x20  # nvmlClocksEventReasonSwThermalSlowdown
CLOCK_EVENT_HW_THERMAL_SLOWDOWN = 0x40  # nvmlClocksEventReasonHwThermalSlowdown
CLOCK_EVENT_HW_POWER_BRAKE_SLOWDOWN = 0x80  # nvmlClocksEventReasonHwPowerBrakeSlowdown
CLOCK_EVENT_DISPLAY_CLOCK_SETTING = 0x100  # nvmlClocksEventReasonDisplayClockSetting
CLOCK_THROTTLE_BOARD_LIMIT = 0x200  # nvmlClocksThrottleReasonBoardLimit (older drivers)
CLOCK_THROTTLE_RELIABILITY = 0x400  # nvmlClocksThrottleReasonReliability (older drivers)

THROTTLE_WORDS: tuple[tuple[int, str], ...] = (
    (CLOCK_EVENT_GPU_IDLE, "idle"),
    (CLOCK_EVENT_APPLICATIONS_CLOCKS_SETTING, "app clock setting"),
    (CLOCK_EVENT_SW_POWER_CAP, "power cap"),
    (CLOCK_EVENT_HW_SLOWDOWN, "HW slowdown"),
    (CLOCK_EVENT_SYNC_BOOST, "sync boost"),
    (CLOCK_EVENT_SW_THERMAL_SLOWDOWN, "SW thermal slowdown"),
    (CLOCK_EVENT_HW_THERMAL_SLOWDOWN, "HW thermal slowdown"),
    (CLOCK_EVENT_HW_POWER_BRAKE_SLOWDOWN, "HW power brake"),
    (CLOCK_EVENT_DISPLAY_CLOCK_SETTING, "display clock setting"),
    (CLOCK_THROTTLE_BOARD_LIMIT, "board limit"),
    (CLOCK_THROTTLE_RELIABILITY, "reliability"),
)
