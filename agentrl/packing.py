"""Scoring a padded batch without computing on its padding, and the policy's head only where it scores.

Sequences are padded at the end to the longest one: at the chapter's defaults a 16-row minibatch is a
third padding, and only a fifth of its real positions predict a policy token. Here the token-wise
layers (embedding, layer norms, MLPs) run on the N real tokens [N, C]; attention runs on the padded
layout [B, T, C], where causality keeps every padded position out of every real one. The policy's
head and log-softmax run only at the P positions that predict a policy token, the critic's head
likewise. Values at those positions are the full forward's; positions off the mask come back as 0.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from .model import Attention, Critic, TinyAgent, Trunk, rotate


@dataclass(frozen=True)
class Packing:
    """Which positions of a batch are computed: row b's inputs up to its last scored position.

    A position t is scored when it predicts a policy token (mask[b, t] = 1). By causality, tokens after
    a row's last scored position change nothing that is scored: they are left out with the padding.
    """
    rows: torch.Tensor  # [N] row of each computed position, row-major
    cols: torch.Tensor  # [N] its position in the row
    flat: torch.Tensor  # [N] its index in the padded layout flattened to [B * width]
    scored: torch.Tensor  # [P] indices into the N computed positions of the scored ones, row-major
    mask: torch.Tensor  # [B, T-1] as given
    width: int  # positions of the padded layout attention runs on: the longest row's

    @classmethod
    def of(cls, mask: torch.Tensor) -> 'Packing':
        """mask [B, T-1]: 1 where position t predicts a policy token (token t+1)."""
        on = mask > 0
        last = torch.where(on, torch.arange(mask.shape[1]), -1).max(-1).values  # [B], -1: no policy token
        width = int(last.max()) + 1
        rows, cols = (torch.arange(width) <= last[:, None]).nonzero(as_tuple=True)
        index = torch.zeros(mask.shape[0], width, dtype=torch.long)
        index[rows, cols] = torch.arange(len(rows))
        return cls(rows, cols, rows * width + cols, index[on[:, :width]], mask, width)

    def unpack(self, x: torch.Tensor) -> torch.Tensor:
        """Computed positions x [N, C] -> the padded layout [B, width, C], zeros elsewhere."""
        return x.new_zeros(self.mask.shape[0] * self.width, x.shape[-1]).index_copy(0, self.flat, x).view(
            -1, self.width, x.shape[-1])

    def pack(self, x: torch.Tensor) -> torch.Tensor:
        """The padded layout x [B, width, C] -> its computed positions [N, C]."""
        return x.reshape(-1, x.shape[-1]).index_select(0, self.flat)

    def scatter(self, values: torch.Tensor) -> torch.Tensor:
        """Values at the scored positions [P] -> [B, T-1], 0 elsewhere."""
        return values.new_zeros(self.mask.shape).masked_scatter(self.mask > 0, values)


def packed_attention(attn: Attention, x: torch.Tensor, rotary: tuple[torch.Tensor, torch.Tensor],
                     packing: Packing) -> torch.Tensor:
    """Attention.forward's whole-sequence branch on the computed positions x [N, C] -> [N, C] (rotary cos, sin
    [N, 1, D/2]): projections and rotation per position, causal attention on the padded layout [B, H, width, D].
    Queries and keys are rotated in one call: elementwise, so the same numbers as one call each."""
    C, H = x.shape[-1], attn.n_heads
    qk, v = attn.qkv(x).split((2 * C, C), dim=-1)
    qk = rotate(qk.reshape(-1, 2 * H, C // H), *rotary).view(-1, 2 * C)  # [N, 2C]
    padded = packing.unpack(torch.cat((qk, v), dim=-1)).view(-1, packing.width, 3, H, C // H)
    q, k, v = padded.permute(2, 0, 3, 1, 4)  # each [B, H, width, D]
    y = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2)  # [B, width, H, D]
    return attn.proj(packing.pack(y.reshape(-1, packing.width, C)))


def packed_hidden(trunk: Trunk, ids: torch.Tensor, packing: Packing) -> torch.Tensor:
    """The trunk's hidden states at the computed positions of ids [B, T] -> [N, C], as Trunk.forward's."""
    if packing.width > trunk.config.max_len:
        raise ValueError(f'sequence of {packing.width} tokens exceeds max_len={trunk.config.max_len}')
    rotary = trunk.cos[packing.cols][:, None], trunk.sin[packing.cols][:, None]  # [N, 1, D/2]
    x = trunk.tok_emb(ids[packing.rows, packing.cols])  # [N, C]
    for block in trunk.blocks:
        x = x + packed_attention(block.attn, block.ln1(x), rotary, packing)
        x = x + block.mlp(block.ln2(x))
    return trunk.ln_f(x)


def policy_scores(policy: TinyAgent, ids: torch.Tensor, packing: Packing) -> tuple[torch.Tensor, torch.Tensor]:
    """(log-prob of each policy token [B, T-1], 0 elsewhere; logits at the scored positions [P, V])."""
    logits = policy.logits(packed_hidden(policy.trunk, ids, packing)[packing.scored])  # [P, V]
    targets = ids[:, 1:][packing.mask > 0]  # [P] the policy tokens
    logp = torch.log_softmax(logits, dim=-1).gather(-1, targets[:, None]).squeeze(-1)
    return packing.scatter(logp), logits


def critic_scores(critic: Critic, ids: torch.Tensor, packing: Packing) -> torch.Tensor:
    """The critic's value before each policy token [B, T-1], 0 elsewhere."""
    values = critic.head(packing.unpack(packed_hidden(critic.trunk, ids, packing))).squeeze(-1)  # [B, width]
    return packing.scatter(values[packing.mask[:, :packing.width] > 0])
