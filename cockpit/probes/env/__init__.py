"""The Env gate's probe, one check family per module: `toolchain`, `profiler`, `workspace`,
`extension`; `probe` holds what they share, `run` runs them in order under a deadline.

Run by `cockpit/probes/env_probe.py`; every module imports only the standard library at top
level, so the probe also runs under a python that has neither torch nor cockpit installed.
"""
