"""What the GPUs we build for allow: per-SM limits, the occupancy they give a kernel, and kernel
names as an engineer reads them. Pure code, no CUDA: the same numbers on a laptop as on the box."""
