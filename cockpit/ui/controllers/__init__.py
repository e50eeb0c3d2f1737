"""Keys and events into session moves: what each key does and whether it can act now, the gate
queue, keep/revert after a bench, the GPU poll and the clock's tick, opening a session, the report.
They see the app only through `host.py`'s Protocol. Nothing is imported here."""
