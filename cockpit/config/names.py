"""The name the rest of the house needs of the configuration without reading it: the file's name
(the gates' names are the catalog's, `cockpit/gate_lines.py`)."""

CONFIG_NAME = "cockpit.toml"
