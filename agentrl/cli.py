"""Command-line entry point: `python -m agentrl COMMAND`."""
from __future__ import annotations

import argparse

import torch

from .base_agent import make_base_agent
from .calibration import episode_statistics, per_task_pass_rates, sample_tasks
from .tasks import make_tasks
from .tokenizer import build_tokenizer


def base_stats(args: argparse.Namespace) -> None:
    """Sample the base agent on both splits and print the calibration statistics."""
    torch.set_num_threads(1)
    tok = build_tokenizer(make_tasks('all'))
    base = make_base_agent(tok, cache_dir=args.cache_dir)
    for split in ('train', 'heldout'):
        trajs = sample_tasks(base, make_tasks(split), args.episodes_per_task, tok,
                             torch.Generator().manual_seed(args.seed))
        stats = episode_statistics(base, trajs, tok.pad_id)
        print(f'{split:8s} {stats["episodes"]:4d} episodes | pass {stats["pass_rate"]:.3f} | policy tokens '
              f'{stats["policy_tokens"]:.1f} (under 8: {stats["under_8"]:.0%}, 16+: {stats["at_least_16"]:.0%}, '
              f'max {stats["max_policy_tokens"]}) | turns {stats["turns"]:.2f} | entropy {stats["entropy"]:.3f}')
        print('         per task: ' + ' '.join(f'{name} {rate:.2f}' for name, rate in per_task_pass_rates(trajs).items()))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog='agentrl', description=__doc__)
    commands = parser.add_subparsers(dest='command', required=True)
    stats = commands.add_parser('base-stats', help='sample the base agent and print its statistics')
    stats.add_argument('--episodes-per-task', type=int, default=16)
    stats.add_argument('--seed', type=int, default=0)
    stats.add_argument('--cache-dir', default=None, help='base-agent cache (default $AGENTRL_CACHE_DIR '
                                                         'or ~/.cache/agentrl)')
    stats.set_defaults(run=base_stats)
    args = parser.parse_args(argv)
    args.run(args)
