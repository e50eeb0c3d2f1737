"""cockpit: a terminal session cockpit for CUDA kernel engineers."""

__version__ = "0.1.0"
