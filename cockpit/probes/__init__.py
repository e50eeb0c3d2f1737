"""Scripts run in a CHILD python; they may import torch. Never imported by the UI."""
