"""TinyAgent: a small decoder-only transformer, with a KV cache for sampling, and its critic.

Shapes: B sequences, T tokens, C = d_model, H heads of D = C / H. Positions enter as rotary
embeddings of queries and keys, which makes copying a token from a few positions back (the line
the tool just echoed) easy for two layers. PyTorch's default initialization throughout
(embeddings N(0, 1)): it trains stably at the chapter's lr 1e-3.
"""
from __future__ import annotations

import copy
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import nn


@dataclass(frozen=True)
class TinyAgentConfig:
    vocab_size: int
    max_len: int = 160
    d_model: int = 64
    n_layers: int = 2
    n_heads: int = 4
    d_ff: int = 256

    def __post_init__(self):
        if self.d_model % self.n_heads:
            raise ValueError(f'd_model={self.d_model} must be a multiple of n_heads={self.n_heads}')

    def to_dict(self) -> dict:
        return asdict(self)


class KVCache:
    """Keys and values of every layer, preallocated: k, v [B, H, max_len, D]; `length` filled."""

    def __init__(self, config: TinyAgentConfig, batch: int):
        shape = (batch, config.n_heads, config.max_len, config.d_model // config.n_heads)
        self.keys = [torch.empty(shape) for _ in range(config.n_layers)]
        self.values = [torch.empty(shape) for _ in range(config.n_layers)]
        self.length = 0

    def keep(self, rows: torch.Tensor) -> None:
        """Drop every sequence not in rows (a [B'] index), e.g. finished episodes."""
        self.keys = [k.index_select(0, rows) for k in self.keys]
        self.values = [v.index_select(0, rows) for v in self.values]


def rotary_tables(config: TinyAgentConfig, base: float = 10000.0) -> tuple[torch.Tensor, torch.Tensor]:
    """cos, sin [max_len, D/2] of the rotary position embedding."""
    half = config.d_model // config.n_heads // 2
    angles = torch.arange(config.max_len)[:, None] * base ** (-torch.arange(half) / half)  # [max_len, D/2]
    return angles.cos(), angles.sin()


def rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate channel pairs of x [B, H, T, D] by position angles cos, sin [T, D/2]."""
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1)


class Attention(nn.Module):
    def __init__(self, config: TinyAgentConfig):
        super().__init__()
        self.n_heads = config.n_heads
        self.qkv = nn.Linear(config.d_model, 3 * config.d_model)
        self.proj = nn.Linear(config.d_model, config.d_model)

    def forward(self, x: torch.Tensor, rotary: tuple[torch.Tensor, torch.Tensor], cache: KVCache | None,
                layer: int) -> torch.Tensor:
        """x [B, T, C] -> [B, T, C]; rotary: cos, sin [T, D/2]; with a cache, x continues the cached sequence."""
        B, T, C = x.shape
        q, k, v = (z.view(B, T, self.n_heads, C // self.n_heads).transpose(1, 2)
                   for z in self.qkv(x).split(C, dim=-1))  # [B, H, T, D]
        q, k = rotate(q, *rotary), rotate(k, *rotary)
        if cache is None:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            start, end = cache.length, cache.length + T
            cache.keys[layer][:, :, start:end], cache.values[layer][:, :, start:end] = k, v
            k, v = cache.keys[layer][:, :, :end], cache.values[layer][:, :, :end]
            causal = torch.ones(T, end, dtype=torch.bool).tril(start) if T > 1 else None
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=causal)
        return self.proj(y.transpose(1, 2).reshape(B, T, C))


class Block(nn.Module):
    def __init__(self, config: TinyAgentConfig):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(config.d_model), nn.LayerNorm(config.d_model)
        self.attn = Attention(config)
        self.mlp = nn.Sequential(nn.Linear(config.d_model, config.d_ff), nn.GELU(),
                                 nn.Linear(config.d_ff, config.d_model))

    def forward(self, x: torch.Tensor, rotary: tuple[torch.Tensor, torch.Tensor], cache: KVCache | None,
                layer: int) -> torch.Tensor:
        x = x + self.attn(self.ln1(x), rotary, cache, layer)
        return x + self.mlp(self.ln2(x))


class Trunk(nn.Module):
    """Embeddings, blocks and the final norm: ids [B, T] -> hidden states [B, T, C]."""

    def __init__(self, config: TinyAgentConfig):
        super().__init__()
        self.config = config
        self.tok_emb = nn.Embedding(config.vocab_size, config.d_model)
        cos, sin = rotary_tables(config)
        self.register_buffer('cos', cos, persistent=False)
        self.register_buffer('sin', sin, persistent=False)
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.n_layers))
        self.ln_f = nn.LayerNorm(config.d_model)

    def forward(self, ids: torch.Tensor, cache: KVCache | None = None) -> torch.Tensor:
        start = 0 if cache is None else cache.length
        if start + ids.shape[1] > self.config.max_len:
            raise ValueError(f'sequence of {start + ids.shape[1]} tokens exceeds max_len={self.config.max_len}')
        end = start + ids.shape[1]
        rotary = self.cos[start:end], self.sin[start:end]
        x = self.tok_emb(ids)
        for layer, block in enumerate(self.blocks):
            x = block(x, rotary, cache, layer)
        if cache is not None:
            cache.length += ids.shape[1]
        return self.ln_f(x)


class TinyAgent(nn.Module):
    """The policy: ids [B, T] -> next-token logits [B, T, V]."""

    def __init__(self, config: TinyAgentConfig):
        super().__init__()
        self.config = config
        self.trunk = Trunk(config)
        self.lm_head = nn.Linear(config.d_model, config.vocab_size, bias=False)

    def forward(self, ids: torch.Tensor, cache: KVCache | None = None) -> torch.Tensor:
        return self.lm_head(self.trunk(ids, cache))


class Critic(nn.Module):
    """A copy of a policy's trunk with a scalar head: ids [B, T] -> values [B, T]."""

    def __init__(self, trunk: Trunk):
        super().__init__()
        self.trunk = trunk
        self.head = nn.Linear(trunk.config.d_model, 1)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.head(self.trunk(ids)).squeeze(-1)


def make_critic(policy: TinyAgent) -> Critic:
    """A critic that starts from the policy's trunk; its head is drawn from torch's global RNG."""
    return Critic(copy.deepcopy(policy.trunk))


def critic_values(critic: Critic, ids: torch.Tensor) -> torch.Tensor:
    """Value of each state before a next token: ids [B, T] -> [B, T-1]."""
    return critic(ids)[:, :-1]


def count_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())
