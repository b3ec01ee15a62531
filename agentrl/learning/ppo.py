"""PPO's losses: the clipped surrogate and the clipped value regression, as the chapter defines them.

Per-token tensors are [B, T] (in practice [B, T-1], position t predicting token t+1). The stats
keep the chapter's names for what it measures (clip_frac, approx_kl, ratio_min, ratio_max) and
add what it does not: the clip fraction by side and the dual clip, the k1 KL estimate and the
mean ratio.
"""
from __future__ import annotations

import torch

from .losses import aggregate_loss, masked_mean


def ppo_policy_loss(logp, old_logp, advantages, mask, clip_low=0.2, clip_high=0.2, mode='token_mean',
                    dual_clip=None, norm_const=None):
    """Clipped surrogate on policy tokens: logp, old_logp, mask [B, T]; advantages [B] or [B, T] -> (loss, stats)."""
    if advantages.dim() == 1:
        advantages = advantages[:, None]  # one advantage per episode -> [B, 1]
    advantages = advantages.detach()
    log_ratio = logp - old_logp.detach()
    ratio = log_ratio.exp()  # rho = pi_theta / pi_old, [B, T]
    unclipped = ratio * advantages
    clipped = ratio.clamp(1 - clip_low, 1 + clip_high) * advantages
    objective = torch.minimum(unclipped, clipped)  # Eq. (8.3), per token
    dual = torch.zeros_like(objective, dtype=torch.bool)
    if dual_clip is not None:  # A < 0: the objective is bounded below by c * A
        dual = (advantages < 0) & (dual_clip * advantages > objective)
        objective = torch.where(dual, dual_clip * advantages, objective)
    loss = aggregate_loss(-objective, mask, mode, norm_const)
    return loss, ppo_stats(log_ratio.detach(), clipped < unclipped, advantages, dual, mask)


def kl_k3(log_ratio):
    """k3 estimate of KL(old || new) per token, rho - 1 - log rho >= 0: log_ratio = logp - old_logp [B, T] -> [B, T].
    Unbiased on tokens sampled from the old policy, and never negative (Schulman's k3)."""
    return log_ratio.exp() - 1 - log_ratio


@torch.no_grad()
def ppo_stats(log_ratio, is_clipped, advantages, dual, mask) -> dict[str, float]:
    """Diagnostics over policy tokens: clip fractions (all, low side, high side, dual), KL, ratios."""
    on = mask > 0
    n = max(int(on.sum()), 1)
    ratio = log_ratio.exp()
    r = ratio[on] if on.any() else torch.ones(1)
    positive = (advantages > 0).expand_as(on)
    return dict(clip_frac=(is_clipped & on).sum().item() / n,
                clip_frac_high=(is_clipped & on & positive).sum().item() / n,  # A > 0, ratio above 1 + clip_high
                clip_frac_low=(is_clipped & on & ~positive).sum().item() / n,  # A < 0, ratio below 1 - clip_low
                clip_frac_dual=(dual & on).sum().item() / n,
                approx_kl=masked_mean(kl_k3(log_ratio), mask).item(),
                kl_k1=masked_mean(-log_ratio, mask).item(),  # k1 estimate of KL(old || new)
                ratio_min=r.min().item(), ratio_mean=r.mean().item(), ratio_max=r.max().item())


def value_loss(values, old_values, returns, mask, clip=0.2):
    """Clipped value regression on policy tokens: values, old_values, returns, mask [B, T] -> scalar."""
    old_values, returns = old_values.detach(), returns.detach()
    per_token = (values - returns) ** 2
    if clip is not None:  # the move from old_values is limited to +-clip
        moved = old_values + (values - old_values).clamp(-clip, clip)
        per_token = torch.maximum(per_token, (moved - returns) ** 2)
    return 0.5 * masked_mean(per_token, mask)
