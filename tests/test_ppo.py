import pytest
import torch

import agentrl as arl
from agentrl.learning.ppo import kl_k3


def grads_per_token(ratios, advantage, **kwargs):
    logp = torch.tensor([ratios]).log().requires_grad_()
    loss, stats = arl.ppo_policy_loss(logp, torch.zeros(1, len(ratios)), torch.tensor([advantage]),
                                      torch.ones(1, len(ratios)), mode='seq_mean_token_sum', **kwargs)
    return loss, stats, [round(-g + 0.0, 2) for g in torch.autograd.grad(loss, logp)[0][0].tolist()]


def test_t4_gradient_of_the_clipped_loss_per_sign():
    ratios = [0.5, 0.79, 1.0, 1.1, 1.3, 2.0]
    _, stats, grad = grads_per_token(ratios, +1.0)
    assert grad == [0.5, 0.79, 1.0, 1.1, 0.0, 0.0] and stats['clip_frac'] == pytest.approx(1 / 3)
    assert stats['clip_frac_high'] == pytest.approx(1 / 3) and stats['clip_frac_low'] == 0
    _, stats, grad = grads_per_token(ratios, -1.0)
    assert grad == [0.0, 0.0, -1.0, -1.1, -1.3, -2.0] and stats['clip_frac'] == pytest.approx(1 / 3)
    assert stats['clip_frac_low'] == pytest.approx(1 / 3) and stats['clip_frac_high'] == 0


def test_t5_dual_clipping():
    loss, stats, grad = grads_per_token([2.0, 5.0, 20.0], -1.0)
    assert loss.item() == pytest.approx(27.0) and grad == [-2.0, -5.0, -20.0] and stats['clip_frac_dual'] == 0
    loss, stats, grad = grads_per_token([2.0, 5.0, 20.0], -1.0, dual_clip=3.0)
    assert loss.item() == pytest.approx(8.0) and grad == [-2.0, 0.0, 0.0]
    assert stats['clip_frac_dual'] == pytest.approx(2 / 3)


def test_asymmetric_clip_bounds_each_side_separately():
    ratios = [0.7, 1.25, 1.3]
    _, _, up = grads_per_token(ratios, +1.0, clip_low=0.2, clip_high=0.28)
    assert up == [0.7, 1.25, 0.0]  # only the ratio above 1.28 is clipped for A > 0
    _, _, down = grads_per_token(ratios, -1.0, clip_low=0.2, clip_high=0.28)
    assert down == [-0.0, -1.25, -1.3]  # 0.7 < 0.8 is clipped for A < 0


@pytest.mark.parametrize('mode, expected', [
    ('token_mean', (2 * 2 + 1 * 3) / 5),  # at ratio 1 the loss per token is -A
    ('seq_mean_token_sum', (2 * 2 + 1 * 3) / 2),
    ('seq_mean_token_mean', (2 + 1) / 2),
    ('seq_mean_token_sum_norm', (2 * 2 + 1 * 3) / (2 * 4)),
])
def test_every_aggregation_mode_by_hand(mode, expected):
    mask = torch.tensor([[1., 1., 0.], [1., 1., 1.]])
    loss, stats = arl.ppo_policy_loss(torch.zeros(2, 3), torch.zeros(2, 3), torch.tensor([-2.0, -1.0]), mask,
                                      mode=mode, norm_const=4 if mode.endswith('norm') else None)
    assert loss.item() == pytest.approx(expected)
    assert stats['approx_kl'] == stats['kl_k1'] == 0 and stats['ratio_mean'] == 1


def test_kl_estimates_by_hand():
    logp = torch.tensor([[0.1, -0.2]])
    _, stats = arl.ppo_policy_loss(logp, torch.zeros(1, 2), torch.tensor([1.0]), torch.ones(1, 2))
    r = logp.exp()
    assert stats['approx_kl'] == pytest.approx(((r - 1 - logp).mean()).item())
    assert stats['kl_k1'] == pytest.approx(0.05)
    assert stats['ratio_min'] == pytest.approx(r.min().item()) and stats['ratio_max'] == pytest.approx(r.max().item())


def test_value_clip_by_hand():
    old, returns, mask = torch.tensor([[0.0, 0.0]]), torch.tensor([[1.0, 1.0]]), torch.ones(1, 2)
    values = torch.tensor([[0.5, 2.0]])
    # unclipped: (0.5-1)^2 = 0.25, (2-1)^2 = 1; clipped moves 0.2, 0.2: (0.2-1)^2 = 0.64 both; max: 0.64, 1
    assert arl.value_loss(values, old, returns, mask, clip=0.2).item() == pytest.approx(0.5 * (0.64 + 1.0) / 2)
    assert arl.value_loss(values, old, returns, mask, clip=None).item() == pytest.approx(0.5 * (0.25 + 1.0) / 2)


def test_token_mean_gradient_is_invariant_to_minibatch_split_with_equal_masks():
    gen = torch.Generator().manual_seed(0)
    logp = (torch.randn(8, 5, generator=gen) * 0.1).requires_grad_()
    old, adv, mask = torch.zeros(8, 5), torch.randn(8, generator=gen), torch.ones(8, 5)
    whole = torch.autograd.grad(arl.ppo_policy_loss(logp, old, adv, mask)[0], logp)[0]
    halves = sum(torch.autograd.grad(arl.ppo_policy_loss(logp[rows], old[rows], adv[rows], mask[rows])[0] / 2, logp)[0]
                 for rows in (slice(0, 4), slice(4, 8)))
    assert torch.allclose(whole, halves, atol=1e-7)
    unequal = mask.clone()
    unequal[0, 1:] = 0  # a short episode in the first half: token_mean is no longer split-invariant
    whole = torch.autograd.grad(arl.ppo_policy_loss(logp, old, adv, unequal)[0], logp)[0]
    halves = sum(torch.autograd.grad(arl.ppo_policy_loss(logp[r], old[r], adv[r], unequal[r])[0] / 2, logp)[0]
                 for r in (slice(0, 4), slice(4, 8)))
    assert not torch.allclose(whole, halves, atol=1e-7)



def test_k3_is_an_unbiased_nonnegative_estimate_of_kl_old_new():
    """Tokens sampled from old: the mean of kl_k3 approaches KL(old || new); every term is >= 0, 0 where equal."""
    old_logp = torch.log_softmax(torch.tensor([0.0, 1.0, -1.0]), -1)
    new_logp = torch.log_softmax(torch.tensor([0.5, 0.2, -0.3]), -1)
    tokens = torch.multinomial(old_logp.exp(), 200_000, replacement=True, generator=torch.Generator().manual_seed(0))
    log_ratio = (new_logp - old_logp)[tokens][None]  # [1, N]
    k3 = kl_k3(log_ratio)
    assert k3.shape == log_ratio.shape and (k3 >= 0).all() and kl_k3(torch.zeros(2, 3)).eq(0).all()
    exact = (old_logp.exp() * (old_logp - new_logp)).sum().item()
    assert k3.mean().item() == pytest.approx(exact, rel=0.02)
