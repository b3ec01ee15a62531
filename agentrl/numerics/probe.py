"""Digests of the numeric kernels a run uses, one a line: run it on two CPUs and compare the lines to find the first
kernel whose numbers part.

    python -m agentrl.numerics.probe [--substrate tinyagent]

Each probe draws its inputs from its own seeded generator, at the substrate's model shapes (the trainer's largest
batch: 472 tokens), and hashes its outputs' bytes: matrix products in the three layouts the forward and backward
passes use (MKL's SGEMM), the GELU forward and backward (oneDNN), layer norm, log-softmax, causal and masked attention
(scaled_dot_product_attention) with their gradients, element-wise exp/log/tanh/rsqrt, reductions, three steps of
agentrl's Adam, multinomial sampling, and a freshly initialised model's log-probs and its parameters after one Adam
step. Prints the CPU and the numerics version first. Needs no base agent: a second.
"""
from __future__ import annotations

import argparse
import hashlib
from collections.abc import Callable

import torch
import torch.nn.functional as F

from ..agent.model import TinyAgent, TinyAgentConfig
from ..learning.base_agent import base_model_config
from ..learning.losses import adam
from ..world.substrates import DEFAULT, SUBSTRATES, substrate
from . import NUMERICS_VERSION, require, this_cpu

TOKENS = 472  # the trainer's largest forward batch, tokens


def digest(*tensors: torch.Tensor) -> str:
    """SHA-256 of the tensors' bytes, in order; its first 16 hex digits."""
    found = hashlib.sha256()
    for tensor in tensors:
        found.update(tensor.detach().contiguous().numpy().tobytes())
    return found.hexdigest()[:16]


def gradients(output: torch.Tensor, *inputs: torch.Tensor, generator: torch.Generator) -> tuple[torch.Tensor, ...]:
    """d(output . w)/d(inputs) for a seeded random w: the backward kernels of output's op."""
    weight = torch.randn(output.shape, generator=generator)
    return torch.autograd.grad(output, inputs, weight)


def probes(config: TinyAgentConfig) -> dict[str, Callable[[torch.Generator], tuple[torch.Tensor, ...]]]:
    """Name -> a probe: generator -> output tensors. Shapes are the model's: C d_model, F d_ff, V vocab."""
    C, F_, V, H, T = config.d_model, config.d_ff, config.vocab_size, config.n_heads, config.max_len // 2

    def rand(g, *shape, grad=False):
        return torch.randn(*shape, generator=g).requires_grad_(grad)

    def attention(g, mask):
        q, k, v = (rand(g, 4, H, T, C // H, grad=True) for _ in range(3))
        visible = torch.rand(4, 1, T, T, generator=g) > 0.3 if mask else None
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=visible, is_causal=not mask)
        return (y, *gradients(y, q, k, v, generator=g))

    def gelu(g):
        x = rand(g, TOKENS, F_, grad=True)
        y = F.gelu(x)
        return (y, *gradients(y, x, generator=g))

    def layer_norm(g):
        x, w, b = rand(g, TOKENS, C, grad=True), rand(g, C, grad=True), rand(g, C, grad=True)
        y = F.layer_norm(x, (C,), w, b)
        return (y, *gradients(y, x, w, b, generator=g))

    def log_softmax(g):
        x = rand(g, TOKENS, V, grad=True)
        y = torch.log_softmax(x, -1)
        return (y, *gradients(y, x, generator=g))

    def adam_steps(g):
        p = torch.nn.Parameter(rand(g, F_, C))
        optimizer = adam([p], 1e-3)
        for _ in range(3):
            p.grad = rand(g, F_, C)
            optimizer.step()
        return (p,)

    def elementwise(g):
        x = rand(g, TOKENS, F_)
        return x.exp(), x.abs().log(), x.tanh(), x.abs().rsqrt()

    def reductions(g):
        x = rand(g, TOKENS, F_)
        return x.sum(), x.mean(-1), x.var(0)

    def model(g):
        torch.manual_seed(int(torch.randint(2 ** 31, (1,), generator=g)))
        agent = TinyAgent(config)
        ids = torch.randint(V, (4, T), generator=g)
        logp = torch.log_softmax(agent(ids), -1)
        optimizer = adam(agent.parameters(), 1e-3)
        (-logp.gather(-1, ids[:, 1:, None].roll(1, 1)).mean()).backward()
        optimizer.step()
        return (logp, *agent.parameters())

    return {
        'sgemm NN [472,C]x[C,3C]': lambda g: (rand(g, TOKENS, C) @ rand(g, C, 3 * C),),
        'sgemm NT [472,C]x[F,C]^T': lambda g: (rand(g, TOKENS, C) @ rand(g, F_, C).T,),
        'sgemm TN [472,F]^Tx[472,C]': lambda g: (rand(g, TOKENS, F_).T @ rand(g, TOKENS, C),),
        'sgemm NT [472,C]x[V,C]^T': lambda g: (rand(g, TOKENS, C) @ rand(g, V, C).T,),
        'gelu forward, backward': gelu,
        'layer norm forward, backward': layer_norm,
        'log-softmax forward, backward': log_softmax,
        'attention causal, gradients': lambda g: attention(g, mask=False),
        'attention masked, gradients': lambda g: attention(g, mask=True),
        'exp log tanh rsqrt': elementwise,
        'sum mean var': reductions,
        'adam, three steps': adam_steps,
        'multinomial': lambda g: (torch.multinomial(torch.softmax(rand(g, 64, V), -1), 1, generator=g),),
        'model log-probs, one Adam step': model,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog='python -m agentrl.numerics.probe', description=__doc__.split('\n\n')[0])
    parser.add_argument('--substrate', default=DEFAULT, choices=sorted(SUBSTRATES), help='model shapes (%(default)s)')
    args = parser.parse_args(argv)
    require()
    config = base_model_config(substrate(args.substrate).family.tokenizer(), args.substrate)
    print(f'{this_cpu().model}, numerics version {NUMERICS_VERSION}, substrate {args.substrate}')
    for seed, (name, probe) in enumerate(probes(config).items()):
        print(f'{name:32} {digest(*probe(torch.Generator().manual_seed(seed)))}')


if __name__ == '__main__':
    main()
