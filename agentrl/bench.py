"""Benchmark on one thread: `python -m agentrl.bench`.

Prints seconds per 64-episode rollout of the base agent, the trainer's tokens per second
(forward, forward+backward), and the training step's achieved FLOP/s as a fraction of a float32
matmul peak measured in the same process. FLOPs are counted by torch's FlopCounterMode. With
--chapter-run, also one whole run of the chapter's defaults: its seconds, where they go, and the
process's peak memory.
"""
from __future__ import annotations

import argparse
import resource
import statistics
import time

import torch
from torch.utils.flop_counter import FlopCounterMode

from .base_agent import make_base_agent
from .calibration import sample_tasks
from .config import TrainConfig
from .sampler import collate, sequence_log_probs
from .tasks import make_tasks
from .tokenizer import build_tokenizer
from .trainer import train


def median_seconds(fn, repeats: int) -> float:
    """Median wall time of fn() over repeats calls, after one warm-up call."""
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def matmul_peak_flops(n: int = 512, repeats: int = 20) -> float:
    """FLOP/s of an n x n float32 matmul: the machine's practical peak on this thread."""
    a, b = torch.randn(n, n), torch.randn(n, n)
    return 2 * n ** 3 / median_seconds(lambda: a @ b, repeats)


def counted_flops(fn) -> int:
    with FlopCounterMode(display=False) as counter:
        fn()
    return counter.get_total_flops()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog='python -m agentrl.bench', description=__doc__)
    parser.add_argument('--repeats', type=int, default=20)
    parser.add_argument('--cache-dir', default=None)
    parser.add_argument('--chapter-run', action='store_true', help='also time one chapter-default trainer run')
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    tok = build_tokenizer(make_tasks('all'))
    base = make_base_agent(tok, cache_dir=args.cache_dir)  # trains it once, if the cache lacks it
    load_s = median_seconds(lambda: make_base_agent(tok, cache_dir=args.cache_dir), 5)
    print(f'base agent: loaded from the cache in {load_s:.3f} s (median of 5; goal well under 1 s)')
    train = make_tasks('train')
    tasks = [train[i % len(train)] for i in range(64)]
    seeds = iter(range(10 ** 6))

    def rollout():
        return sample_tasks(base, tasks, 1, tok, torch.Generator().manual_seed(next(seeds)))

    rollout_s = median_seconds(rollout, args.repeats)
    print(f'rollout: {rollout_s:.4f} s per 64 episodes (median of {args.repeats}; goal <= 0.1 s)')

    batch = collate(rollout(), tok.pad_id)
    ids, mask = batch['ids'], batch['action_mask']
    tokens = ids.numel()
    opt = torch.optim.Adam(base.parameters(), lr=0.0)  # lr 0: measure the step, leave the weights

    def forward():
        with torch.no_grad():
            sequence_log_probs(base, ids)

    def train_step():
        loss = -(sequence_log_probs(base, ids) * mask).sum() / mask.sum()
        opt.zero_grad()
        loss.backward()
        opt.step()

    forward_s, step_s = median_seconds(forward, args.repeats), median_seconds(train_step, args.repeats)
    step_flops = counted_flops(train_step)
    peak = matmul_peak_flops()
    print(f'trainer: batch [{ids.shape[0]}, {ids.shape[1]}] | forward {tokens / forward_s:,.0f} tokens/s | '
          f'forward+backward {tokens / step_s:,.0f} tokens/s')
    print(f'trainer step: {step_flops / step_s / 1e9:.2f} GFLOP/s achieved | matmul peak '
          f'{peak / 1e9:.2f} GFLOP/s | ratio {step_flops / step_s / peak:.3f}')
    if args.chapter_run:
        chapter_run(base, tok)


def chapter_run(base, tok) -> None:
    """One run of TrainConfig's defaults (the chapter's run_ppo): seconds by phase and peak memory."""
    start = time.perf_counter()
    result = train(base, tok, TrainConfig())
    total = time.perf_counter() - start
    iterations = sum(it['wall_s'] for it in result.iterations)
    sampling = sum(it['sample_s'] for it in result.iterations)
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB
    print(f'chapter-default run: {total:.1f} s (goal <= 30 s) | sampling {sampling:.1f} s | prepare and '
          f'updates {iterations - sampling:.1f} s | critic warm-up and evaluation {total - iterations:.1f} s | '
          f'peak memory {peak_mib:.0f} MiB (goal < 1024)')


if __name__ == '__main__':
    main()
