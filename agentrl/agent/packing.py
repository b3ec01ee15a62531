"""Which positions of a padded batch are computed, and how attention groups them (scoring.py computes them).

Sequences are padded at the end to the longest one: at the chapter's defaults a 16-row minibatch is a
third padding, and only a fifth of its real positions predict a policy token. Scored, the token-wise
layers (embedding, layer norms, MLPs) run on the N real tokens [N, C]; attention runs on rows of
similar length padded to their own longest (buckets), where causality keeps every padded position out
of every real one. The policy's head and log-softmax run only at the P positions that predict a policy
token, the critic's head likewise. Values at those positions are the full forward's up to float
rounding; positions off the mask come back as 0.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

# Attention's cost on the padded layout of b rows of width w grows as b * w^2, plus a fixed cost per kernel call
# worth about one row of 48 positions (flash attention forward and backward, [b, 4, w, 8], one AVX2 thread).
CALL_COST = 48 ** 2


@dataclass(frozen=True)
class Bucket:
    """Rows of similar length attended together, on a padded layout of their own [rows, width]: the computed
    positions start:stop (a slice, in row order within the bucket), at indices flat of [rows * width]."""
    start: int
    stop: int
    flat: torch.Tensor  # [stop - start]
    rows: int
    width: int


def bucket_bounds(lengths: list[int]) -> list[int]:
    """Where to cut lengths (ascending) into buckets, minimising sum(CALL_COST + rows * width^2): the end index
    of each bucket, by dynamic programming over the cut before each."""
    best, cut = [0], [0]
    for end in range(1, len(lengths) + 1):
        costs = [best[start] + CALL_COST + (end - start) * lengths[end - 1] ** 2 for start in range(end)]
        cut.append(min(range(end), key=costs.__getitem__))
        best.append(costs[cut[-1]])
    ends, end = [], len(lengths)
    while end:
        ends.append(end)
        end = cut[end]
    return ends[::-1]


@dataclass(frozen=True)
class Packing:
    """Which positions of a batch are computed, in which order, and how attention groups them.

    A position t is scored when it predicts a policy token (mask[b, t] = 1). By causality, tokens after
    a row's last scored position change nothing that is scored: they are left out with the padding. Rows
    are ordered by that length and cut into buckets (bucket_bounds): each bucket's attention runs on a
    layout padded only to its own longest row.
    """
    rows: torch.Tensor  # [N] row of each computed position, bucket after bucket
    cols: torch.Tensor  # [N] its position in the row
    scored: torch.Tensor  # [P] indices into the N computed positions of the scored ones, in the mask's row-major order
    buckets: tuple[Bucket, ...]
    mask: torch.Tensor  # [B, T-1] as given

    @classmethod
    def of(cls, mask: torch.Tensor, buckets: bool = True) -> 'Packing':
        """mask [B, T-1]: 1 where position t predicts a policy token (token t+1). buckets=False: one bucket, every
        row padded to the longest (the same positions in the same order)."""
        on = mask > 0
        lengths = torch.where(on, torch.arange(mask.shape[1]) + 1, 0).max(-1).values  # [B], 0: no policy token
        order = [row for row in torch.argsort(lengths, stable=True).tolist() if lengths[row] > 0]
        sorted_lengths = lengths[order].tolist()
        rows, cols, groups, start, first = [], [], [], 0, 0
        ends = bucket_bounds(sorted_lengths) if buckets else ([len(order)] if order else [])
        for end in ends:
            width, members = sorted_lengths[end - 1], order[first:end]
            bucket_cols = [torch.arange(lengths[row]) for row in members]
            flat = torch.cat([slot * width + c for slot, c in enumerate(bucket_cols)])
            rows += [torch.full((len(c),), row) for row, c in zip(members, bucket_cols)]
            cols += bucket_cols
            groups.append(Bucket(start, start + len(flat), flat, len(members), width))
            start, first = start + len(flat), end
        rows = torch.cat(rows) if rows else torch.zeros(0, dtype=torch.long)
        cols = torch.cat(cols) if cols else torch.zeros(0, dtype=torch.long)
        index = torch.zeros(mask.shape, dtype=torch.long)
        index[rows, cols] = torch.arange(len(rows))
        return cls(rows, cols, index[on], tuple(groups), mask)

    def scatter(self, values: torch.Tensor) -> torch.Tensor:
        """Values at the scored positions [P] -> [B, T-1], 0 elsewhere."""
        return values.new_zeros(self.mask.shape).masked_scatter(self.mask > 0, values)
