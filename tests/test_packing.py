"""Padding-free scoring: the values of the full forward at the policy tokens, 0 elsewhere, gradients included."""
import pytest
import torch
import torch.nn.functional as F

import agentrl as arl
from agentrl.losses import token_log_probs
from agentrl.model import rotate
from agentrl.packing import Packing, critic_scores, packed_attention, policy_scores
from agentrl.trainer import sample_batch


@pytest.fixture(scope='module')
def scored(base, tok):
    torch.manual_seed(0)
    critic = arl.make_critic(base)
    batch = sample_batch(base, tok, 16, torch.Generator().manual_seed(0))
    return base, critic, batch['ids'], batch['action_mask']


def test_packing_keeps_each_row_up_to_its_last_policy_token():
    mask = torch.tensor([[0., 1., 0., 1., 0.], [1., 0., 0., 0., 0.], [0., 0., 0., 0., 0.]])
    packing = Packing.of(mask)
    assert packing.width == 4
    assert packing.rows.tolist() == [0, 0, 0, 0, 1] and packing.cols.tolist() == [0, 1, 2, 3, 0]
    assert packing.scored.tolist() == [1, 3, 4]
    assert packing.scatter(torch.tensor([5., 6., 7.])).tolist() == [[0, 5, 0, 6, 0], [7, 0, 0, 0, 0], [0] * 5]
    assert packing.flat.tolist() == [0, 1, 2, 3, 4]
    x = torch.arange(10.).view(5, 2)
    padded = packing.unpack(x)
    assert padded.shape == (3, 4, 2) and padded[1, 1:].abs().sum() == 0 and padded[2].abs().sum() == 0
    assert torch.equal(packing.pack(padded), x)


def test_packed_attention_is_bit_identical_to_rotating_and_indexing_one_tensor_at_a_time(scored):
    """The speed levers (queries and keys rotated in one call, flat-index moves) change no number: the
    straightforward form, q and k rotated apart, scattered and gathered by (row, column) pairs."""
    base, _, _, mask = scored
    packing, attn, trunk = Packing.of(mask), base.trunk.blocks[0].attn, base.trunk
    x = torch.randn(packing.rows.numel(), attn.qkv.in_features, generator=torch.Generator().manual_seed(0),
                    requires_grad=True)
    rotary = trunk.cos[packing.cols][:, None], trunk.sin[packing.cols][:, None]
    C, H = x.shape[-1], attn.n_heads
    q, k, v = attn.qkv(x).split(C, dim=-1)
    q, k = (rotate(z.view(-1, H, C // H), *rotary).view(-1, C) for z in (q, k))
    padded = x.new_zeros(mask.shape[0], packing.width, 3 * C).index_put((packing.rows, packing.cols),
                                                                         torch.cat((q, k, v), dim=-1))
    q, k, v = padded.view(-1, packing.width, 3, H, C // H).permute(2, 0, 3, 1, 4)
    y = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2)
    expected = attn.proj(y[packing.rows, packing.cols].reshape(-1, C))
    got = packed_attention(attn, x, rotary, packing)
    assert torch.equal(got, expected)
    grad = torch.randn(got.shape, generator=torch.Generator().manual_seed(1))
    assert torch.equal(*(torch.autograd.grad(out, x, grad)[0] for out in (got, expected)))


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
