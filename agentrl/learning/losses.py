"""Loss helpers: masked reductions, entropy, loss aggregation and a REINFORCE step.

adam: the one optimiser every agentrl update uses.
"""
from __future__ import annotations


import torch
import torch.nn.functional as F
from ..agent.model import token_log_probs

AGGREGATION_MODES = (
    "token_mean",
    "seq_mean_token_sum",
    "seq_mean_token_mean",
    "seq_mean_token_sum_norm",
)


def masked_mean(x, mask):
    """Scalar sum(x * mask) / max(sum(mask), 1); x and mask broadcastable."""
    mask = mask.to(x.dtype)
    return (x * mask).sum() / mask.sum().clamp(min=1.0)


def entropy_from_logits(logits):
    """Entropy in nats: logits [..., V] -> [...]; -inf logits contribute 0."""
    logp = F.log_softmax(logits, dim=-1)
    return -(logp.exp() * logp.clamp(min=torch.finfo(logp.dtype).min)).sum(-1)


def aggregate_loss(per_token, mask, mode="token_mean", norm_const=None):
    """Reduce per_token [B, T] over mask [B, T] to a scalar using one of AGGREGATION_MODES."""
    if mode not in AGGREGATION_MODES:
        raise ValueError(f"unknown aggregation mode {mode!r}; valid modes: {', '.join(AGGREGATION_MODES)}")
    mask = mask.to(per_token.dtype)
    masked = per_token * mask
    if mode == "token_mean":
        return masked_mean(per_token, mask)
    if mode == "seq_mean_token_sum":
        return masked.sum(-1).mean()
    if mode == "seq_mean_token_mean":
        return (masked.sum(-1) / mask.sum(-1).clamp(min=1.0)).mean()
    if norm_const is None or norm_const <= 0:
        raise ValueError(f"mode 'seq_mean_token_sum_norm' needs a positive norm_const, got {norm_const!r}")
    return masked.sum() / (per_token.shape[0] * norm_const)


def policy_gradient_step(model, optimizer, batch, advantages, mode="token_mean", norm_const=None):
    """One REINFORCE step: batch ids [B, T], action_mask [B, T-1]; advantages [B] or [B, T-1]."""
    ids, mask = batch["ids"], batch["action_mask"]
    logp = token_log_probs(model(ids), ids)
    advantages = advantages.detach()
    if advantages.dim() == 1:
        advantages = advantages[:, None]
    loss = aggregate_loss(-(advantages * logp), mask, mode, norm_const)
    optimizer.zero_grad()
    loss.backward()
    grads = [p.grad for group in optimizer.param_groups for p in group["params"] if p.grad is not None]
    grad_norm = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))
    optimizer.step()
    return {"loss": loss.item(), "grad_norm": grad_norm.item()}


# The one optimiser every agentrl update uses: Adam, fused into one kernel over all parameters.
#
# Fused, not only because it is faster (the benchmark's fused-Adam lever): it is the form whose numbers are the same on
# every vendor's CPU. Its square root is ATen's vector sqrt (exact, IEEE). PyTorch's default single-tensor Adam takes
# the square root through MKL's vector math (VML), whose float sqrt starts from the approximate rsqrtps and is off by
# one ulp for about a sixth of inputs, a different sixth on Intel than on AMD: under numerics version 3 the base agent's
# pretraining used it, and that alone made Intel's runs differ from AMD's (CHANGELOG.md, numerics version 4).
def adam(parameters, lr: float) -> torch.optim.Adam:
    """Adam (default betas and eps) fused over parameters, at learning rate lr."""
    return torch.optim.Adam(parameters, lr=lr, fused=True)
