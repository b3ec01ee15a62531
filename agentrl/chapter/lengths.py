"""T2's and Figure 8.1's episode-length buckets: policy tokens per episode, labelled as the chapter labels them.

Each bucket is [lo, hi), the last closed at its top: 64 is the longest episode any substrate's caps allow (longer's),
so every episode falls in exactly one bucket. Pure: the experiments bucket episodes by it, the analysis too.
"""
from __future__ import annotations

BUCKETS = ((0, 8), (8, 16), (16, 64))


def label(bucket: tuple[int, int]) -> str:
    """'16-64': a bucket's row label."""
    return f'{bucket[0]}-{bucket[1]}'


def inclusive(bucket: tuple[int, int]) -> str:
    """Which ends the bucket holds, as pandas' `between` names them: 'both' for the last bucket, else 'left'."""
    return 'both' if bucket == BUCKETS[-1] else 'left'
