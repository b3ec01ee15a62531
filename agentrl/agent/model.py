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
from torch import nn
import torch.nn.functional as F

from .matmul import Linear, attention


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
    """Keys and values of every layer, preallocated: k, v [B, H, max_len, D]; row b holds lengths[b] positions.

    Rows advance independently: each forward appends a different number of tokens to each row.
    """

    def __init__(self, config: TinyAgentConfig, batch: int):
        shape = (batch, config.n_heads, config.max_len, config.d_model // config.n_heads)
        self.keys = [torch.zeros(shape) for _ in range(config.n_layers)]  # zeros: masked slots must stay finite
        self.values = [torch.zeros(shape) for _ in range(config.n_layers)]
        self.lengths = torch.zeros(batch, dtype=torch.long)

    def keep(self, rows: torch.Tensor) -> None:
        """Keep only the sequences in rows (a [B'] index, e.g. the unfinished episodes), in place:
        the filled part of each kept row moves to the front of the buffers."""
        filled = int(self.lengths.max())
        for buffer in self.keys + self.values:
            buffer[:len(rows), :, :filled] = buffer[rows, :, :filled]
        self.keys = [k[:len(rows)] for k in self.keys]
        self.values = [v[:len(rows)] for v in self.values]
        self.lengths = self.lengths[rows]


@dataclass
class Appending:
    """Where a cached forward's N flat tokens go: row b appends counts[b] tokens to its sequence."""
    rows: torch.Tensor  # [N] batch row of each token
    steps: torch.Tensor  # [N] its index among its row's new tokens
    positions: torch.Tensor  # [N] its absolute position
    visible: torch.Tensor  # [B, 1, T, end] cache positions each (row, step) query may attend to; T = max count
    end: int  # cache positions in use after the forward

    @classmethod
    def plan(cls, cache: KVCache, counts: torch.Tensor, max_len: int) -> 'Appending':
        end = int((cache.lengths + counts).max())
        if end > max_len:
            raise ValueError(f'sequence of {end} tokens exceeds max_len={max_len}')
        T = int(counts.max())
        rows, steps = (torch.arange(T)[None, :] < counts[:, None]).nonzero(as_tuple=True)  # row-major
        query_positions = cache.lengths[:, None] + torch.arange(T)  # [B, T]
        visible = (torch.arange(end)[None, None, :] <= query_positions[:, :, None])[:, None]  # causal per row
        return cls(rows, steps, cache.lengths[rows] + steps, visible, end)


def rotary_tables(config: TinyAgentConfig, base: float = 10000.0) -> tuple[torch.Tensor, torch.Tensor]:
    """cos, sin [max_len, D/2] of the rotary position embedding."""
    half = config.d_model // config.n_heads // 2
    angles = torch.arange(config.max_len)[:, None] * base ** (-torch.arange(half) / half)  # [max_len, D/2]
    return angles.cos(), angles.sin()


def rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate channel pairs of x [..., D] by position angles cos, sin (broadcastable to [..., D/2])."""
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1)


class Attention(nn.Module):
    def __init__(self, config: TinyAgentConfig):
        super().__init__()
        self.n_heads = config.n_heads
        self.qkv = Linear(config.d_model, 3 * config.d_model)
        self.proj = Linear(config.d_model, config.d_model)

    def forward(self, x: torch.Tensor, rotary: tuple[torch.Tensor, torch.Tensor], cache: KVCache | None,
                appending: Appending | None, layer: int) -> torch.Tensor:
        """Whole sequences x [B, T, C] -> [B, T, C] (rotary cos, sin [T, D/2]); or, with a cache, flat new
        tokens x [N, C] -> [N, C] (rotary [N, 1, D/2]) placed as `appending` says."""
        C, H = x.shape[-1], self.n_heads
        q, k, v = self.qkv(x).split(C, dim=-1)
        if cache is None:
            B, T = x.shape[:2]
            q, k, v = (z.view(B, T, H, C // H).transpose(1, 2) for z in (q, k, v))  # [B, H, T, D]
            y = attention(rotate(q, *rotary), rotate(k, *rotary), v, causal=True)
            return self.proj(y.transpose(1, 2).reshape(B, T, C))
        at = appending
        q, k, v = (z.view(-1, H, C // H) for z in (q, k, v))  # [N, H, D]
        q, k = rotate(q, *rotary), rotate(k, *rotary)
        cache.keys[layer][at.rows, :, at.positions] = k
        cache.values[layer][at.rows, :, at.positions] = v
        B, T = at.visible.shape[0], at.visible.shape[2]
        queries = q.new_zeros(B, T, H, C // H)
        queries[at.rows, at.steps] = q
        keys, values = cache.keys[layer][:, :, :at.end], cache.values[layer][:, :, :at.end]  # [B, H, end, D]
        # the full forward's kernel, masked per row: a hand-written softmax missed its log-probs by 2e-5
        y = attention(queries.transpose(1, 2), keys, values, mask=at.visible)  # [B, H, T, D]
        return self.proj(y.transpose(1, 2)[at.rows, at.steps].reshape(-1, C))


class Block(nn.Module):
    def __init__(self, config: TinyAgentConfig):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(config.d_model), nn.LayerNorm(config.d_model)
        self.attn = Attention(config)
        self.mlp = nn.Sequential(Linear(config.d_model, config.d_ff), nn.GELU(), Linear(config.d_ff, config.d_model))

    def forward(self, x: torch.Tensor, rotary: tuple[torch.Tensor, torch.Tensor], cache: KVCache | None,
                appending: Appending | None, layer: int) -> torch.Tensor:
        x = x + self.attn(self.ln1(x), rotary, cache, appending, layer)
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

    def forward(self, ids: torch.Tensor, cache: KVCache | None = None,
                counts: torch.Tensor | None = None) -> torch.Tensor:
        """Whole sequences ids [B, T] -> hidden [B, T, C]; or, with a cache, new tokens ids [N] (row b's
        counts[b] tokens, row after row) appended to each row's cached sequence -> hidden [N, C]."""
        if cache is None:
            if ids.shape[1] > self.config.max_len:
                raise ValueError(f'sequence of {ids.shape[1]} tokens exceeds max_len={self.config.max_len}')
            appending, rotary = None, (self.cos[:ids.shape[1]], self.sin[:ids.shape[1]])  # [T, D/2]
        else:
            appending = Appending.plan(cache, counts, self.config.max_len)
            rotary = self.cos[appending.positions][:, None], self.sin[appending.positions][:, None]  # [N, 1, D/2]
        x = self.tok_emb(ids)
        for layer, block in enumerate(self.blocks):
            x = block(x, rotary, cache, appending, layer)
        if cache is not None:
            cache.lengths += counts
        return self.ln_f(x)


class TinyAgent(nn.Module):
    """The policy: ids [B, T] -> next-token logits [B, T, V]."""

    def __init__(self, config: TinyAgentConfig):
        super().__init__()
        self.config = config
        self.trunk = Trunk(config)
        self.lm_head = Linear(config.d_model, config.vocab_size, bias=False)
        self.lm_head.weight = self.trunk.tok_emb.weight  # tied: copying a token from the context is free

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.logits(self.trunk(ids))

    def logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """Hidden states [..., C] -> logits [..., V]."""
        return self.lm_head(hidden) * self.config.d_model ** -0.5  # tied N(0, 1) rows: unit scale

    def next_token_logits(self, ids: torch.Tensor, counts: torch.Tensor, cache: KVCache) -> torch.Tensor:
        """Append counts[b] new tokens to row b of the cache (ids [N], row after row) -> logits after
        each row's last one [B, V]."""
        return self.logits(self.trunk(ids, cache, counts)[counts.cumsum(0) - 1])


class Critic(nn.Module):
    """A copy of a policy's trunk with a scalar head: ids [B, T] -> values [B, T]."""

    def __init__(self, trunk: Trunk):
        super().__init__()
        self.trunk = trunk
        self.head = Linear(trunk.config.d_model, 1)

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


def token_log_probs(logits, ids):
    """Log-prob of token t+1 given tokens <= t: logits [B, T, V], ids [B, T] -> [B, T-1]."""
    logp = F.log_softmax(logits[:, :-1], dim=-1)
    return logp.gather(-1, ids[:, 1:, None]).squeeze(-1)
