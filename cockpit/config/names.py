"""The names the rest of the house needs of the configuration without reading it: the file's name
and the gates' names (a command line is built from them before any cockpit.toml is read)."""

CONFIG_NAME = "cockpit.toml"

GATE_NAMES = ("env", "build", "correctness", "bench", "profile", "sanitize")
