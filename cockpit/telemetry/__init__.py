"""GPU telemetry over NVML: samples, the sampler, history, recordings, which GPU is meant (by
UUID), and the validity verdict: clean conditions, and the clock each implementation ran at.

Importing this package imports nothing heavy: `nvml` loads pynvml only when it opens, and nothing
here needs numpy, so the UI's first frame can import `sample` for its types.
"""
