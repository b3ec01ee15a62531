import math

import pytest
import torch
from torch import nn

from agentrl.learning.losses import (AGGREGATION_MODES, aggregate_loss, entropy_from_logits, masked_mean,
                                     policy_gradient_step)
from agentrl.agent.model import token_log_probs

PER_TOKEN = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]])
MASK = torch.tensor([[1.0, 1.0, 0.0], [0.0, 0.0, 0.0], [1.0, 1.0, 1.0]])


class Bigram(nn.Module):
    def __init__(self, vocab):
        super().__init__()
        self.table = nn.Embedding(vocab, vocab)

    def forward(self, ids):
        return self.table(ids)


def test_masked_mean():
    assert masked_mean(PER_TOKEN, MASK).item() == pytest.approx(27 / 5)
    assert masked_mean(PER_TOKEN, torch.zeros_like(MASK)).item() == 0.0


def test_entropy_uniform_is_log_v():
    ent = entropy_from_logits(torch.full((2, 3, 7), 5.0))
    assert ent.shape == (2, 3)
    torch.testing.assert_close(ent, torch.full((2, 3), math.log(7)))


def test_entropy_known_distribution_and_neg_inf_logits():
    probs = torch.tensor([0.5, 0.25, 0.25])
    assert entropy_from_logits(probs.log()).item() == pytest.approx(1.5 * math.log(2))
    logits = torch.tensor([0.0, 0.0, -math.inf, 0.0], requires_grad=True)
    ent = entropy_from_logits(logits)
    assert ent.item() == pytest.approx(math.log(3))
    ent.backward()
    assert torch.isfinite(logits.grad).all()


def test_entropy_stable_for_large_logits():
    ent = entropy_from_logits(torch.tensor([1000.0, 0.0]))
    assert torch.isfinite(ent) and ent.item() == pytest.approx(0.0, abs=1e-6)


def test_token_log_probs():
    logits = torch.randn(2, 4, 5)
    ids = torch.randint(0, 5, (2, 4))
    out = token_log_probs(logits, ids)
    assert out.shape == (2, 3)
    for b in range(2):
        for t in range(3):
            expected = logits[b, t].softmax(-1)[ids[b, t + 1]].log()
            assert out[b, t].item() == pytest.approx(expected.item(), abs=1e-5)


def test_aggregation_modes_tuple():
    assert AGGREGATION_MODES == (
        "token_mean",
        "seq_mean_token_sum",
        "seq_mean_token_mean",
        "seq_mean_token_sum_norm",
    )


@pytest.mark.parametrize(
    "mode, norm_const, expected",
    [
        ("token_mean", None, (1 + 2 + 7 + 8 + 9) / 5),
        ("seq_mean_token_sum", None, (3 + 0 + 24) / 3),
        ("seq_mean_token_mean", None, (1.5 + 0 + 8) / 3),
        ("seq_mean_token_sum_norm", 4, 27 / (3 * 4)),
    ],
)
def test_aggregate_loss_modes(mode, norm_const, expected):
    assert aggregate_loss(PER_TOKEN, MASK, mode, norm_const).item() == pytest.approx(expected)


def test_aggregate_all_zero_mask_is_zero_not_nan():
    zeros = torch.zeros_like(MASK)
    for mode in AGGREGATION_MODES:
        assert aggregate_loss(PER_TOKEN, zeros, mode, norm_const=2.0).item() == 0.0


@pytest.mark.parametrize("norm_const", [None, 0, -1.0])
def test_norm_const_required(norm_const):
    with pytest.raises(ValueError, match="norm_const"):
        aggregate_loss(PER_TOKEN, MASK, "seq_mean_token_sum_norm", norm_const)


def test_unknown_mode_message():
    with pytest.raises(ValueError) as info:
        aggregate_loss(PER_TOKEN, MASK, "bogus_mode")
    message = str(info.value)
    assert "bogus_mode" in message
    for mode in AGGREGATION_MODES:
        assert mode in message


def _pg_setup(seed=0, vocab=5):
    torch.manual_seed(seed)
    model = Bigram(vocab)
    ids = torch.tensor([[0, 1, 2, 3, 4], [4, 3, 2, 1, 0]])
    mask = torch.tensor([[0.0, 1.0, 1.0, 1.0], [0.0, 0.0, 1.0, 1.0]])
    return model, {"ids": ids, "action_mask": mask}


def _seq_logp(model, batch):
    with torch.no_grad():
        logp = token_log_probs(model(batch["ids"]), batch["ids"])
    return (logp * batch["action_mask"]).sum(-1)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_pg_step_moves_log_prob_with_advantage_sign(sign):
    model, batch = _pg_setup()
    before = _seq_logp(model, batch)
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    policy_gradient_step(model, opt, batch, torch.tensor([sign, 0.0]))
    after = _seq_logp(model, batch)
    assert sign * (after[0] - before[0]).item() > 0


def test_pg_step_loss_and_grad_norm_match_hand_computation():
    model, batch = _pg_setup(seed=1)
    adv = torch.tensor([1.5, -0.5])
    weight = model.table.weight.detach().clone()
    ids, mask = batch["ids"], batch["action_mask"]
    n_tokens = mask.sum().item()
    loss = 0.0
    grad = torch.zeros_like(weight)
    for b in range(2):
        for t in range(4):
            if mask[b, t] == 0:
                continue
            x, y = ids[b, t].item(), ids[b, t + 1].item()
            probs = weight[x].softmax(-1)
            loss -= adv[b].item() * probs[y].log().item() / n_tokens
            grad[x] -= adv[b] * (nn.functional.one_hot(torch.tensor(y), 5).float() - probs) / n_tokens

    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    out = policy_gradient_step(model, opt, batch, adv)
    assert out["loss"] == pytest.approx(loss, rel=1e-5)
    assert out["grad_norm"] == pytest.approx(grad.norm().item(), rel=1e-5)
    torch.testing.assert_close(model.table.weight.detach(), weight - 0.1 * grad)


def test_pg_step_per_token_advantages_match_broadcast():
    adv = torch.tensor([0.7, -1.2])
    results = []
    for advantages in (adv, adv[:, None].expand(2, 4).clone()):
        model, batch = _pg_setup(seed=2)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        results.append((policy_gradient_step(model, opt, batch, advantages), model.table.weight.detach()))
    assert results[0][0] == pytest.approx(results[1][0])
    torch.testing.assert_close(results[0][1], results[1][1])


def test_pg_step_dr_grpo_mode_uses_norm_const():
    model, batch = _pg_setup(seed=3)
    opt = torch.optim.SGD(model.parameters(), lr=0.0)
    adv = torch.tensor([1.0, 2.0])
    out = policy_gradient_step(model, opt, batch, adv, mode="seq_mean_token_sum_norm", norm_const=8)
    logp = token_log_probs(model(batch["ids"]), batch["ids"]).detach()
    expected = -(adv[:, None] * logp * batch["action_mask"]).sum() / (2 * 8)
    assert out["loss"] == pytest.approx(expected.item(), rel=1e-5)
