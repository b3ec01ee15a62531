"""Padding-free scoring: the values of the full forward at the policy tokens, 0 elsewhere, gradients included,
up to float rounding."""
from itertools import combinations

import pytest
import torch

import agentrl as arl
from agentrl.agent.matmul import attention
from agentrl.agent.model import rotate, token_log_probs
from agentrl.agent.packing import CALL_COST, Packing, bucket_bounds
from agentrl.agent.scoring import critic_scores, packed_attention, policy_scores
from agentrl.learning.trainer import sample_batch


@pytest.fixture(scope='module')
def scored(base, tok):
    torch.manual_seed(0)
    critic = arl.make_critic(base)
    batch = sample_batch(base, tok, 16, torch.Generator().manual_seed(0))
    return base, critic, batch['ids'], batch['action_mask']


def test_packing_keeps_each_row_up_to_its_last_policy_token_in_buckets_of_similar_length():
    mask = torch.tensor([[0., 1., 0., 1., 0.], [1., 0., 0., 0., 0.], [0., 0., 0., 0., 0.]])
    packing = Packing.of(mask)
    assert [(b.start, b.stop, b.rows, b.width) for b in packing.buckets] == [(0, 5, 2, 4)]  # one call beats two
    assert packing.rows.tolist() == [1, 0, 0, 0, 0] and packing.cols.tolist() == [0, 0, 1, 2, 3]  # shortest first
    assert packing.buckets[0].flat.tolist() == [0, 4, 5, 6, 7]
    assert packing.scored.tolist() == [2, 4, 0]  # the mask's row-major order
    assert packing.scatter(torch.tensor([5., 6., 7.])).tolist() == [[0, 5, 0, 6, 0], [7, 0, 0, 0, 0], [0] * 5]


def test_bucket_bounds_minimise_the_attention_cost_over_every_cut():
    lengths = [3, 5, 20, 21, 60, 62, 64, 90]

    def cost(ends):
        return sum(CALL_COST + (end - start) * lengths[end - 1] ** 2 for start, end in zip([0] + ends[:-1], ends))
    every = [list(cut) + [len(lengths)] for k in range(len(lengths)) for cut in combinations(range(1, len(lengths)), k)]
    assert cost(bucket_bounds(lengths)) == min(map(cost, every))
    assert bucket_bounds(lengths)[-1] == len(lengths) and len(bucket_bounds(lengths)) > 1
    assert bucket_bounds([]) == [] and bucket_bounds([7] * 5) == [5]


def test_packed_attention_is_the_one_padded_layouts_up_to_float_rounding(scored):
    """Buckets change only the padded width each kernel call sees: the straightforward form, every row padded to
    the longest, q and k rotated apart, gives the same outputs and input gradients up to float rounding."""
    base, _, _, mask = scored
    packing, attn, trunk = Packing.of(mask), base.trunk.blocks[0].attn, base.trunk
    assert len(packing.buckets) > 1
    x = torch.randn(packing.rows.numel(), attn.qkv.in_features, generator=torch.Generator().manual_seed(0),
                    requires_grad=True)
    rotary = trunk.cos[packing.cols][:, None], trunk.sin[packing.cols][:, None]
    C, H, width = x.shape[-1], attn.n_heads, int(packing.cols.max()) + 1
    q, k, v = attn.qkv(x).split(C, dim=-1)
    q, k = (rotate(z.view(-1, H, C // H), *rotary).view(-1, C) for z in (q, k))
    padded = x.new_zeros(mask.shape[0], width, 3 * C).index_put((packing.rows, packing.cols),
                                                                 torch.cat((q, k, v), dim=-1))
    q, k, v = padded.view(-1, width, 3, H, C // H).permute(2, 0, 3, 1, 4)
    y = attention(q, k, v, causal=True).transpose(1, 2)  # this numerics version's products
    expected = attn.proj(y[packing.rows, packing.cols].reshape(-1, C))
    got = packed_attention(attn, x, rotary, packing)
    assert torch.equal(packed_attention(attn, x, rotary, Packing.of(mask, buckets=False)), expected)
    torch.testing.assert_close(got, expected, rtol=0, atol=1e-6)
    grad = torch.randn(got.shape, generator=torch.Generator().manual_seed(1))
    torch.testing.assert_close(*(torch.autograd.grad(out, x, grad)[0] for out in (got, expected)), rtol=0, atol=1e-5)


def test_policy_and_critic_scores_are_the_full_forwards_at_policy_tokens(scored, tok):
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
    assert logits.shape == (int(mask.sum()), len(tok))
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
