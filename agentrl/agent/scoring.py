"""K models of one shape scored as one batched computation, each model's numbers those it has alone.

The models (one per seed of a cell) keep their own parameters; each forward stacks them ([K, ...]) and lays the K
models' computed positions (their Packings) one after another, [N, C] with N = N_1 + ... + N_K, model k's in its
own order at rows offsets[k]:offsets[k + 1]. Batch invariance holds by construction, operator by operator:

  linear layers, the tied head     agentrl's kernel, layer k on model k's rows (matmul.cpp's Segmented): the very
                                   calls a model's layer makes alone, forward and gradients
  embedding                        a row gather from the K tables; its gradient adds each position's row in position
                                   order, and model k's positions are in its own order
  rotation, residuals, scaling     IEEE additions and products of single elements
  GELU                             ATen's AVX2 elementwise kernel on a contiguous tensor: every element through
                                   its vector code (the last through a partial vector), wherever it sits (a strided
                                   input would take the scalar code, whose erf rounds otherwise)
  log-softmax                      ATen's, row by row over the vocabulary: a row's numbers depend on that row alone
  layer norms, attention           per model, on its own rows and its own buckets: the calls it makes alone

So a model scored among others gives the same bits as scored alone (tests/test_scoring.py); the one-model
functions at the end (policy_scores, critic_scores, packed_hidden, packed_attention) are these with K = 1.
"""
from __future__ import annotations

from collections.abc import Sequence
from itertools import accumulate

import torch
import torch.nn.functional as F

from .matmul import attention, segmented_linear
from .model import Attention, Critic, TinyAgent, Trunk, rotate
from .packing import Packing


def stacked(tensors: Sequence[torch.Tensor]) -> torch.Tensor:
    """K tensors of one shape -> [K, ...] (a view for K = 1)."""
    return tensors[0][None] if len(tensors) == 1 else torch.stack(tensors)


def joined_linear(layers: Sequence[torch.nn.Linear], x: torch.Tensor, offsets: list[int]) -> torch.Tensor:
    """K linear layers of one shape, layer k on rows offsets[k]:offsets[k + 1] of x [N, I] -> [N, O]."""
    bias = None if layers[0].bias is None else stacked([layer.bias for layer in layers])
    return segmented_linear(x, stacked([layer.weight for layer in layers]), bias, offsets)


def per_model(modules: Sequence[torch.nn.Module], x: torch.Tensor, offsets: list[int]) -> torch.Tensor:
    """Each model's module on its own rows of x [N, C] -> [N, C']."""
    if len(modules) == 1:
        return modules[0](x)
    return torch.cat([module(x[start:stop]) for module, start, stop in zip(modules, offsets, offsets[1:])])


def joined_attention(layers: Sequence[Attention], x: torch.Tensor, rotary: tuple[torch.Tensor, torch.Tensor],
                     packings: Sequence[Packing], offsets: list[int]) -> torch.Tensor:
    """K attention layers on their models' computed positions x [N, C] -> [N, C] (rotary cos, sin [N, 1, D/2]):
    the projections layer by layer on its rows, each model's causal attention on its own buckets (padded layouts
    [rows, H, width, D])."""
    C, H = x.shape[-1], layers[0].n_heads
    qk, v = joined_linear([layer.qkv for layer in layers], x, offsets).split((2 * C, C), dim=-1)
    qk = rotate(qk.reshape(-1, 2 * H, C // H), *rotary).view(-1, 2 * C)  # [N, 2C]
    qkv = torch.cat((qk, v), dim=-1)  # [N, 3C]
    out = []
    for start, packing in zip(offsets, packings):
        for bucket in packing.buckets:
            padded = qkv.new_zeros(bucket.rows * bucket.width, 3 * C).index_copy(
                0, bucket.flat, qkv[start + bucket.start:start + bucket.stop])
            q, k, v = padded.view(bucket.rows, bucket.width, 3, H, C // H).permute(2, 0, 3, 1, 4)  # [rows, H, width, D]
            y = attention(q, k, v, causal=True).transpose(1, 2)  # [rows, width, H, D]
            out.append(y.reshape(-1, C).index_select(0, bucket.flat))
    return joined_linear([layer.proj for layer in layers], torch.cat(out) if out else x.new_zeros(0, C), offsets)


def joined_hidden(trunks: Sequence[Trunk], ids: Sequence[torch.Tensor],
                  packings: Sequence[Packing]) -> tuple[torch.Tensor, list[int]]:
    """K trunks' hidden states at their computed positions (ids [B_k, T_k] each) -> ([N, C], offsets: model k's
    N_k positions at rows offsets[k]:offsets[k + 1], in its packing's order)."""
    trunk = trunks[0]
    width = max((bucket.width for packing in packings for bucket in packing.buckets), default=0)
    if width > trunk.config.max_len:
        raise ValueError(f'sequence of {width} tokens exceeds max_len={trunk.config.max_len}')
    offsets = [0, *accumulate(packing.rows.numel() for packing in packings)]
    V = trunk.config.vocab_size
    tokens = torch.cat([k * V + row_ids[p.rows, p.cols] for k, (row_ids, p) in enumerate(zip(ids, packings))])
    x = F.embedding(tokens, stacked([t.tok_emb.weight for t in trunks]).view(len(trunks) * V, -1))  # [N, C]
    cols = torch.cat([p.cols for p in packings])
    rotary = trunk.cos[cols][:, None], trunk.sin[cols][:, None]  # [N, 1, D/2]
    for layer in range(len(trunk.blocks)):
        blocks = [t.blocks[layer] for t in trunks]
        x = x + joined_attention([b.attn for b in blocks], per_model([b.ln1 for b in blocks], x, offsets), rotary,
                                 packings, offsets)
        h = F.gelu(joined_linear([b.mlp[0] for b in blocks], per_model([b.ln2 for b in blocks], x, offsets), offsets))
        x = x + joined_linear([b.mlp[2] for b in blocks], h, offsets)
    return per_model([t.ln_f for t in trunks], x, offsets), offsets


def joined_scored(trunks: Sequence[Trunk], ids: Sequence[torch.Tensor],
                  packings: Sequence[Packing]) -> tuple[torch.Tensor, list[int]]:
    """The hidden states at each model's scored positions -> ([P, C], offsets of each model's P_k rows)."""
    hidden, offsets = joined_hidden(trunks, ids, packings)
    scored = torch.cat([start + p.scored for start, p in zip(offsets, packings)])
    return hidden[scored], [0, *accumulate(p.scored.numel() for p in packings)]


def stacked_policy_scores(policies: Sequence[TinyAgent], ids: Sequence[torch.Tensor],
                          packings: Sequence[Packing]) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """policy_scores of K policies of one shape: per model (log-prob of each policy token [B_k, T_k-1], 0
    elsewhere; logits at its scored positions [P_k, V])."""
    hidden, offsets = joined_scored([p.trunk for p in policies], ids, packings)  # [P, C]
    logits = joined_linear([p.lm_head for p in policies], hidden, offsets) * policies[0].config.d_model ** -0.5
    targets = torch.cat([row_ids[:, 1:][p.mask > 0] for row_ids, p in zip(ids, packings)])  # [P] the policy tokens
    logp = torch.log_softmax(logits, dim=-1).gather(-1, targets[:, None]).squeeze(-1)
    return [(p.scatter(logp[start:stop]), logits[start:stop])
            for p, start, stop in zip(packings, offsets, offsets[1:])]


def stacked_critic_scores(critics: Sequence[Critic], ids: Sequence[torch.Tensor],
                          packings: Sequence[Packing]) -> list[torch.Tensor]:
    """critic_scores of K critics of one shape: per model its value before each policy token [B_k, T_k-1], 0
    elsewhere."""
    hidden, offsets = joined_scored([c.trunk for c in critics], ids, packings)  # [P, C]
    values = joined_linear([c.head for c in critics], hidden, offsets).squeeze(-1)  # [P]
    return [p.scatter(values[start:stop]) for p, start, stop in zip(packings, offsets, offsets[1:])]


def policy_scores(policy: TinyAgent, ids: torch.Tensor, packing: Packing) -> tuple[torch.Tensor, torch.Tensor]:
    """(log-prob of each policy token [B, T-1], 0 elsewhere; logits at the scored positions [P, V])."""
    return stacked_policy_scores([policy], [ids], [packing])[0]


def critic_scores(critic: Critic, ids: torch.Tensor, packing: Packing) -> torch.Tensor:
    """The critic's value before each policy token [B, T-1], 0 elsewhere: its head at the scored positions only."""
    return stacked_critic_scores([critic], [ids], [packing])[0]


def packed_hidden(trunk: Trunk, ids: torch.Tensor, packing: Packing) -> torch.Tensor:
    """The trunk's hidden states at the computed positions of ids [B, T] -> [N, C], as Trunk.forward's."""
    return joined_hidden([trunk], [ids], [packing])[0]


def packed_attention(attn: Attention, x: torch.Tensor, rotary: tuple[torch.Tensor, torch.Tensor],
                     packing: Packing) -> torch.Tensor:
    """An attention layer on one model's computed positions x [N, C] -> [N, C] (rotary cos, sin [N, 1, D/2])."""
    return joined_attention([attn], x, rotary, [packing], [0, x.shape[0]])
