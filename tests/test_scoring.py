"""K models scored as one computation: each model's log-probs, logits, values and gradients bit for bit those it has
scored alone, whatever the other models, their number, their order and their batches' lengths."""
import pytest
import torch

from agentrl.agent import scoring
from agentrl.agent.matmul import segmented_linear
from agentrl.agent.model import TinyAgent, TinyAgentConfig, make_critic
from agentrl.agent.packing import Packing
from agentrl.agent.scoring import critic_scores, policy_scores, stacked_critic_scores, stacked_policy_scores
from agentrl.world.substrates import SUBSTRATES

VOCAB = 40


def models(config: TinyAgentConfig, count: int) -> list[tuple[TinyAgent, torch.nn.Module]]:
    """count (policy, critic) pairs of one shape, each drawn from its own seed."""
    pairs = []
    for seed in range(count):
        torch.manual_seed(seed)
        policy = TinyAgent(config)
        pairs.append((policy, make_critic(policy)))
    return pairs


def batches(count: int, max_len: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """count batches (ids [B, T], mask [B, T-1]) of different row counts and lengths, policy tokens scattered."""
    out = []
    for seed in range(count):
        g = torch.Generator().manual_seed(100 + seed)
        rows, width = 3 + seed % 4, max_len // 2 + 7 * seed % (max_len // 2)
        ids = torch.randint(VOCAB, (rows, width), generator=g)
        mask = (torch.rand(rows, width - 1, generator=g) < 0.3).float()
        mask[:, -(1 + seed % 5):] = 0  # rows end at different policy tokens
        out.append((ids, mask))
    return out


def weights(x: torch.Tensor) -> torch.Tensor:
    """Fixed weights of x's shape, -3 to 3: a loss whose gradient differs from token to token."""
    return (torch.arange(x.numel()) % 7 - 3.0).view(x.shape)


def scores(pairs, data) -> list[list[torch.Tensor]]:
    """Per model: log-probs, logits, values and every parameter's gradient, the K models scored together."""
    ids, packings = [i for i, _ in data], [Packing.of(m) for _, m in data]
    for policy, critic in pairs:
        policy.zero_grad(), critic.zero_grad()
    policy_out = stacked_policy_scores([p for p, _ in pairs], ids, packings)
    values = stacked_critic_scores([c for _, c in pairs], ids, packings)
    loss = sum((logp * weights(logp)).sum() + logits.square().mean() + value.square().sum()
               for (logp, logits), value in zip(policy_out, values))
    loss.backward()
    return [[logp.detach(), logits.detach(), value.detach()] + [t.grad.clone() for t in (*p.parameters(), *c.parameters())]
            for (p, c), (logp, logits), value in zip(pairs, policy_out, values)]


def differing(alone: list[list[torch.Tensor]], together: list[list[torch.Tensor]], order: list[int]) -> list[int]:
    """The models (by index) whose numbers scored together differ in any bit from theirs alone."""
    return [k for k, got in zip(order, together) if not all(torch.equal(a, b) for a, b in zip(alone[k], got))]


@pytest.mark.parametrize('name', sorted(SUBSTRATES))
def test_models_scored_together_have_the_bits_they_have_alone(name):
    shape = SUBSTRATES[name]
    config = TinyAgentConfig(vocab_size=VOCAB, max_len=64, d_model=shape.d_model, n_layers=shape.n_layers,
                             n_heads=shape.n_heads, d_ff=shape.d_ff)
    pairs, data = models(config, 8), batches(8, 64)
    alone = [scores([pair], [batch])[0] for pair, batch in zip(pairs, data)]
    for order in ([0, 1, 2], [5, 3, 7], list(range(8)), [7, 6, 5, 4, 3, 2, 1, 0], [4]):
        together = scores([pairs[k] for k in order], [data[k] for k in order])
        assert differing(alone, together, order) == [], f'{name}: models scored as {order}'


def test_one_model_is_the_k_model_path_with_k_1():
    pairs, data = models(TinyAgentConfig(vocab_size=VOCAB, max_len=64, d_model=32), 1), batches(1, 64)
    (policy, critic), (ids, mask) = pairs[0], data[0]
    packing = Packing.of(mask)
    logp, logits = policy_scores(policy, ids, packing)
    (logp_k, logits_k), = stacked_policy_scores([policy], [ids], [packing])
    assert torch.equal(logp, logp_k) and torch.equal(logits, logits_k)
    assert torch.equal(critic_scores(critic, ids, packing), stacked_critic_scores([critic], [ids], [packing])[0])


class JoinedBias(torch.autograd.Function):
    """Each row plus its model's bias; the biases' gradient summed along the joined rows, ATen's vectorised sum over
    one contiguous line: which lane accumulates a row depends on where that row sits among all models' rows."""

    @staticmethod
    def forward(ctx, out, biases, owner):
        ctx.save_for_backward(owner)
        ctx.models = len(biases)
        return out + biases[owner]

    @staticmethod
    def backward(ctx, grad):
        owner, = ctx.saved_tensors
        lines = grad.t().contiguous()  # [O, N]
        return grad, torch.stack([(lines * (owner == k)).sum(-1) for k in range(ctx.models)]), None


def test_the_comparison_catches_a_shape_dependent_reduction(monkeypatch):
    def joined_bias(layers, x, offsets):
        out = segmented_linear(x, scoring.stacked([layer.weight for layer in layers]), None, offsets)
        if layers[0].bias is None:
            return out
        owner = torch.repeat_interleave(torch.arange(len(layers)), torch.tensor(offsets).diff())
        return JoinedBias.apply(out, scoring.stacked([layer.bias for layer in layers]), owner)
    monkeypatch.setattr(scoring, 'joined_linear', joined_bias)
    pairs, data = models(TinyAgentConfig(vocab_size=VOCAB, max_len=64, d_model=32), 4), batches(4, 64)
    alone = [scores([pair], [batch])[0] for pair, batch in zip(pairs, data)]
    assert differing(alone, scores(pairs, data), [0, 1, 2, 3])
