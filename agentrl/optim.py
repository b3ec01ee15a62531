"""The one optimiser every agentrl update uses: Adam, fused into one kernel over all parameters.

Fused, not only because it is faster (the benchmark's fused-Adam lever): it is the form whose numbers are the same on
every vendor's CPU. Its square root is ATen's vector sqrt (exact, IEEE). PyTorch's default single-tensor Adam takes
the square root through MKL's vector math (VML), whose float sqrt starts from the approximate rsqrtps and is off by one
ulp for about a sixth of inputs, a different sixth on Intel than on AMD: under numerics version 3 the base agent's
pretraining used it, and that alone made Intel's runs differ from AMD's (results/measurements.md, "The cause").
"""
from __future__ import annotations

import torch


def adam(parameters, lr: float) -> torch.optim.Adam:
    """Adam (default betas and eps) fused over parameters, at learning rate lr."""
    return torch.optim.Adam(parameters, lr=lr, fused=True)
