"""Every test computes under agentrl's numeric settings (agentrl.numerics), on one thread."""
import agentrl  # noqa: F401  (puts agentrl.numerics.SETTINGS in force before any torch computation)
import torch

torch.set_num_threads(1)
