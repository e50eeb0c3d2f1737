"""GPU telemetry over NVML: samples, the sampler, history, validity verdicts, recordings.

Importing this package imports nothing heavy: `nvml` loads pynvml only when it opens, and nothing
here needs numpy, so the UI's first frame can import `sample` for its types.
"""
