"""What the GPUs we build for are and allow: per-SM limits, the occupancy they give a kernel, kernel
names as an engineer reads them, how a GPU is named (UUID, PCI bus id) and NVML's clock-event
reasons. Pure code, no CUDA: the same numbers on a laptop as on the box."""
