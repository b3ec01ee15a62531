"""Per-token returns and advantages over policy tokens (mask == 1); other positions are skipped."""

import torch


def outcome_rewards(rewards, mask):
    """Episode reward on its last policy token: rewards [B], mask [B, T-1] -> [B, T-1]."""
    mask = mask.bool()
    positions = torch.arange(1, mask.shape[1] + 1, device=mask.device)
    last = (mask * positions).argmax(-1, keepdim=True)
    out = rewards.new_zeros(mask.shape).scatter(1, last, rewards[:, None])
    return torch.where(mask, out, 0)


def returns_to_go(token_rewards, mask, gamma=1.0):
    """G_t = r_t + gamma * G_{next policy token}: token_rewards, mask [B, T-1] -> [B, T-1], 0 off-policy."""
    mask = mask.bool()
    out = torch.zeros_like(token_rewards)
    carry = torch.zeros_like(token_rewards[:, 0])
    for t in reversed(range(token_rewards.shape[1])):
        carry = torch.where(mask[:, t], token_rewards[:, t] + gamma * carry, carry)
        out[:, t] = torch.where(mask[:, t], carry, 0.0)
    return out


@torch.no_grad()
def gae_advantages(token_rewards, values, mask, gamma, lam):
    """GAE over policy tokens: token_rewards, values, mask [B, T-1] -> (advantages, returns) [B, T-1]."""
    values = values.detach().to(token_rewards.dtype)
    mask = mask.bool()
    adv = torch.zeros_like(token_rewards)
    next_value = torch.zeros_like(token_rewards[:, 0])
    next_adv = torch.zeros_like(next_value)
    for t in reversed(range(token_rewards.shape[1])):
        m = mask[:, t]
        a = token_rewards[:, t] + gamma * next_value - values[:, t] + gamma * lam * next_adv
        next_value = torch.where(m, values[:, t], next_value)
        next_adv = torch.where(m, a, next_adv)
        adv[:, t] = torch.where(m, a, 0.0)
    return adv, torch.where(mask, adv + values, 0.0)


def explained_variance(values, returns, mask):
    """1 - Var[returns - values] / Var[returns] over policy tokens of [B, T-1]; nan if Var[returns] is 0."""
    sel = mask.bool()
    y, v = returns.detach()[sel].double(), values.detach()[sel].double()
    if y.numel() == 0 or y.var(unbiased=False) == 0:
        return float("nan")
    return (1 - (y - v).var(unbiased=False) / y.var(unbiased=False)).item()


def whiten(adv, mask):
    """Advantages scaled to mean 0, standard deviation 1 over the policy tokens: adv, mask [B, T-1] -> [B, T-1], 0
    off-policy."""
    on = mask > 0
    return (adv - adv[on].mean()) / (adv[on].std() + 1e-8) * mask
