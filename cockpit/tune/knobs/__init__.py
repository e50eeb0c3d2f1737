"""A search of any workload's knobs (see cockpit/tune/knobs/search.py)."""
