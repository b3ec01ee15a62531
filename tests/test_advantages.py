import math

import pytest
import torch

from agentrl.learning.advantages import explained_variance, gae_advantages, outcome_rewards, returns_to_go, whiten


def reference_gae(rewards, values, mask, gamma, lam):
    """Slow per-row loop over the policy positions only."""
    adv = [[0.0] * len(row) for row in mask]
    ret = [[0.0] * len(row) for row in mask]
    for b, row in enumerate(mask):
        policy = [t for t, m in enumerate(row) if m == 1]
        next_value, next_adv = 0.0, 0.0
        for t in reversed(policy):
            delta = rewards[b][t] + gamma * next_value - values[b][t]
            next_adv = delta + gamma * lam * next_adv
            next_value = values[b][t]
            adv[b][t] = next_adv
            ret[b][t] = next_adv + values[b][t]
    return adv, ret


def reference_returns(rewards, mask, gamma):
    out = [[0.0] * len(row) for row in mask]
    for b, row in enumerate(mask):
        g = 0.0
        for t in reversed([t for t, m in enumerate(row) if m == 1]):
            g = rewards[b][t] + gamma * g
            out[b][t] = g
    return out


def random_gappy_mask(generator, batch=8, length=30):
    """Prompt prefix, then policy tokens interleaved with tool-token gaps; one empty row, one full row."""
    mask = torch.zeros(batch, length, dtype=torch.float64)
    for b in range(batch - 2):
        start = int(torch.randint(0, length // 2, (1,), generator=generator))
        mask[b, start:] = (torch.rand(length - start, generator=generator) < 0.6).double()
    mask[batch - 1] = 1.0
    return mask


@pytest.mark.parametrize("gamma", [1.0, 0.9])
@pytest.mark.parametrize("lam", [0.0, 0.95, 1.0])
def test_gae_matches_reference(gamma, lam):
    g = torch.Generator().manual_seed(int(100 * lam + 10 * gamma))
    mask = random_gappy_mask(g)
    rewards = torch.randn(mask.shape, generator=g, dtype=torch.float64)
    values = torch.randn(mask.shape, generator=g, dtype=torch.float64)
    adv, ret = gae_advantages(rewards, values, mask, gamma, lam)
    ref_adv, ref_ret = reference_gae(rewards.tolist(), values.tolist(), mask.tolist(), gamma, lam)
    torch.testing.assert_close(adv, torch.tensor(ref_adv, dtype=torch.float64))
    torch.testing.assert_close(ret, torch.tensor(ref_ret, dtype=torch.float64))


@pytest.mark.parametrize("gamma", [1.0, 0.9])
def test_returns_to_go_matches_reference(gamma):
    g = torch.Generator().manual_seed(7)
    mask = random_gappy_mask(g)
    rewards = torch.randn(mask.shape, generator=g, dtype=torch.float64)
    expected = reference_returns(rewards.tolist(), mask.tolist(), gamma)
    torch.testing.assert_close(returns_to_go(rewards, mask, gamma), torch.tensor(expected, dtype=torch.float64))


def test_gae_hand_computed_skips_gaps():
    mask = torch.tensor([[0.0, 1.0, 0.0, 1.0]])
    rewards = torch.tensor([[0.0, 0.0, 5.0, 1.0]])
    values = torch.tensor([[9.0, 0.5, 9.0, 0.8]])
    adv, ret = gae_advantages(rewards, values, mask, gamma=0.9, lam=0.5)
    # t=3: delta = 1 - 0.8 = 0.2; t=1: delta = 0.9 * 0.8 - 0.5 = 0.22, A = 0.22 + 0.45 * 0.2 = 0.31
    torch.testing.assert_close(adv, torch.tensor([[0.0, 0.31, 0.0, 0.2]]))
    torch.testing.assert_close(ret, torch.tensor([[0.0, 0.81, 0.0, 1.0]]))


def test_gae_lam1_gamma1_zero_values_equals_outcome_returns():
    g = torch.Generator().manual_seed(3)
    mask = random_gappy_mask(g)
    rewards = torch.randn(mask.shape[0], generator=g, dtype=torch.float64)
    token_rewards = outcome_rewards(rewards, mask)
    adv, ret = gae_advantages(token_rewards, torch.zeros_like(mask), mask, gamma=1.0, lam=1.0)
    expected = returns_to_go(token_rewards, mask)
    torch.testing.assert_close(adv, expected)
    torch.testing.assert_close(ret, expected)
    torch.testing.assert_close(expected, rewards[:, None] * mask)


def test_gae_lam1_returns_are_returns_to_go_for_any_values():
    g = torch.Generator().manual_seed(4)
    mask = random_gappy_mask(g)
    rewards = torch.randn(mask.shape, generator=g, dtype=torch.float64)
    values = torch.randn(mask.shape, generator=g, dtype=torch.float64)
    _, ret = gae_advantages(rewards, values, mask, gamma=0.9, lam=1.0)
    torch.testing.assert_close(ret, returns_to_go(rewards, mask, 0.9))


def test_gae_does_not_track_gradients():
    mask = torch.ones(2, 3)
    values = torch.randn(2, 3, requires_grad=True)
    adv, ret = gae_advantages(torch.randn(2, 3), values, mask, 1.0, 0.95)
    assert not adv.requires_grad and not ret.requires_grad


def test_outcome_rewards_placement():
    mask = torch.tensor(
        [
            [0.0, 1.0, 1.0, 0.0, 1.0, 0.0],
            [0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0, 0.0, 0.0, 1.0],
            [0.0, 0.0, 1.0, 0.0, 0.0, 0.0],
        ]
    )
    out = outcome_rewards(torch.tensor([1.0, 2.0, 3.0, -4.0]), mask)
    expected = torch.zeros(4, 6)
    expected[0, 4], expected[2, 5], expected[3, 2] = 1.0, 3.0, -4.0
    torch.testing.assert_close(out, expected)


def test_explained_variance():
    mask = torch.tensor([[1.0, 1.0, 0.0], [1.0, 0.0, 1.0]])
    returns = torch.tensor([[1.0, 2.0, 100.0], [3.0, -50.0, 4.0]])
    garbage_off_policy = torch.tensor([[0.0, 0.0, 7.0], [0.0, 9.0, 0.0]])
    assert explained_variance(returns + garbage_off_policy, returns, mask) == pytest.approx(1.0)
    assert explained_variance(torch.zeros_like(returns), returns, mask) == pytest.approx(0.0)
    values = torch.tensor([[1.0, 2.0, 0.0], [3.0, 0.0, 3.0]])
    # residuals [0, 0, 0, 1]: var 0.1875; returns [1, 2, 3, 4]: var 1.25
    assert explained_variance(values, returns, mask) == pytest.approx(1 - 0.1875 / 1.25)
    assert math.isnan(explained_variance(values, torch.full_like(returns, 2.0), mask))
    assert math.isnan(explained_variance(values, returns, torch.zeros_like(mask)))


def test_whiten_scales_policy_tokens_to_mean_0_std_1_and_zeroes_the_rest():
    generator = torch.Generator().manual_seed(3)
    mask = random_gappy_mask(generator)
    adv = (3 + 5 * torch.randn(mask.shape, generator=generator, dtype=torch.float64)) * mask
    out = whiten(adv, mask)
    on = mask > 0
    assert abs(out[on].mean().item()) < 1e-9 and out[on].std().item() == pytest.approx(1.0, abs=1e-6)
    assert torch.equal(out[~on], torch.zeros_like(out[~on]))
    assert torch.equal(out, (adv - adv[on].mean()) / (adv[on].std() + 1e-8) * mask)  # the chapter's expression
