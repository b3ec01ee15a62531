"""Padding-free scoring: the values of the full forward at the policy tokens, 0 elsewhere, gradients included."""
import pytest
import torch

import agentrl as arl
from agentrl.losses import token_log_probs
from agentrl.packing import Packing, critic_scores, policy_scores
from agentrl.trainer import sample_batch

TOK = arl.build_tokenizer(arl.make_tasks('all'))


@pytest.fixture(scope='module')
def scored():
    torch.set_num_threads(1)
    base = arl.make_base_agent(TOK)
    torch.manual_seed(0)
    critic = arl.make_critic(base)
    batch = sample_batch(base, TOK, 16, torch.Generator().manual_seed(0))
    return base, critic, batch['ids'], batch['action_mask']


def test_packing_keeps_each_row_up_to_its_last_policy_token():
    mask = torch.tensor([[0., 1., 0., 1., 0.], [1., 0., 0., 0., 0.], [0., 0., 0., 0., 0.]])
    packing = Packing.of(mask)
    assert packing.width == 4
    assert packing.rows.tolist() == [0, 0, 0, 0, 1] and packing.cols.tolist() == [0, 1, 2, 3, 0]
    assert packing.scored.tolist() == [1, 3, 4]
    assert packing.scatter(torch.tensor([5., 6., 7.])).tolist() == [[0, 5, 0, 6, 0], [7, 0, 0, 0, 0], [0] * 5]


def test_policy_and_critic_scores_are_the_full_forwards_at_policy_tokens(scored):
    base, critic, ids, mask = scored
    packing = Packing.of(mask)
    assert packing.rows.numel() < 0.8 * ids.numel()  # padding and trailing tool output are left out
    with torch.no_grad():
        logp, logits = policy_scores(base, ids, packing)
        values = critic_scores(critic, ids, packing)
        full_logits = base(ids)
        torch.testing.assert_close(logp, token_log_probs(full_logits, ids) * mask, rtol=0, atol=1e-6)
        torch.testing.assert_close(logits, full_logits[:, :-1][mask > 0], rtol=0, atol=1e-5)
        torch.testing.assert_close(values, arl.critic_values(critic, ids) * mask, rtol=0, atol=1e-6)
    assert logits.shape == (int(mask.sum()), len(TOK))
    assert (logp[mask == 0] == 0).all() and (values[mask == 0] == 0).all()


def test_gradients_are_the_full_forwards(scored):
    base, _, ids, mask = scored
    grads = []
    for logp_of in (lambda: policy_scores(base, ids, Packing.of(mask))[0], lambda: token_log_probs(base(ids), ids)):
        base.zero_grad()
        (logp_of() * mask).sum().backward()
        grads.append([p.grad.clone() for p in base.parameters()])
    base.zero_grad()
    for packed, full in zip(*grads):
        torch.testing.assert_close(packed, full, rtol=1e-4, atol=1e-5)
