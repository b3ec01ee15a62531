"""Command-line entry point: `python -m agentrl COMMAND`."""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

from ..agent.model import count_parameters
from ..agent.sampler import sample_tasks
from ..chapter.calibration import episode_statistics, per_task_pass_rates, task_set_statistics
from ..chapter.experiments import EXPERIMENTS, importance_weights, run_experiment
from ..learning.base_agent import load_base_agent, make_base_agent, save_base_agent
from ..learning.config import TrainConfig
from ..learning.trainer import train, warm_critic
from ..world.substrates import DEFAULT, SUBSTRATES, substrate
from .critic_store import load_critic, save_critic
from .runio import provenance, write_run


def base_stats(args: argparse.Namespace) -> None:
    """Print a substrate's calibration statistics (issue 11's table): the task set's repairs, then per
    seed the base agent's episodes on both splits and the step size of REINFORCE from it, then the means."""
    torch.set_num_threads(1)
    tok, base = base_agent(args)
    print(f'base agent ({args.substrate}): {count_parameters(base):,} parameters, vocabulary {len(tok)}')
    for split in ('train', 'heldout'):
        s = task_set_statistics(substrate(args.substrate).family.tasks(split))
        print(f'{split:8s} tasks | bugs per task {s["bugs_per_task"]} | {s["distinct_repairs"]} distinct repairs, at '
              f'most {s["most_fixed_by_one_repair"]} task(s) fixed by one alone | bug lines {s["bug_lines"]} | '
              f'kinds {", ".join(s["bug_kinds"])}')
    rows = [seed_statistics(base, tok, seed, args) for seed in args.seeds]
    if len(rows) > 1:
        means = {key: sum(row[key] for row in rows) / len(rows) for key in rows[0]}
        print(f'mean of {len(rows)} seeds: ' + ' | '.join(f'{key} {value:.3f}' for key, value in means.items()))


def seed_statistics(base, tok, seed: int, args: argparse.Namespace) -> dict[str, float]:
    """One seed's rows: both splits' episode statistics and, unless --no-steps, ESS/N after one REINFORCE
    step and the fresh pass rate after 10 (experiments.importance_weights)."""
    row, family = {}, substrate(args.substrate).family
    for split in ('train', 'heldout'):
        trajs = sample_tasks(base, family.tasks(split), args.episodes_per_task, tok,
                             torch.Generator().manual_seed(seed), family.new_env)
        stats = episode_statistics(base, trajs, tok.pad_id)
        print(f'seed {seed} {split:8s} {stats["episodes"]:4d} episodes | pass {stats["pass_rate"]:.3f} | policy tokens '
              f'{stats["policy_tokens"]:.1f} (under 8: {stats["under_8"]:.0%}, 16+: {stats["at_least_16"]:.0%}, '
              f'max {stats["max_policy_tokens"]}) | turns {stats["turns"]:.2f} | entropy {stats["entropy"]:.3f}')
        rates = per_task_pass_rates(trajs)
        print('         per task: ' + ' '.join(f'{name} {rate:.2f}' for name, rate in rates.items()))
        row.update({f'{split}_pass': stats['pass_rate'], f'{split}_unsolved_tasks': sum(r == 0 for r in rates.values())})
        if split == 'train':
            row.update(policy_tokens=stats['policy_tokens'], under_8=stats['under_8'],
                       at_least_16=stats['at_least_16'], entropy=stats['entropy'])
    if args.steps:
        t1 = {(r['row'], r['metric']): r['value'] for r in importance_weights(base, tok, seed, args.substrate)
              if r['table'] == 'T1'}
        row.update(ess_after_1=t1['k=1', 'ess_over_n'], fresh_pass_after_10=t1['k=10', 'fresh_pass'])
        print(f'seed {seed} REINFORCE (lr 2e-3) | ESS/N after 1 step {row["ess_after_1"]:.3f} | fresh pass after '
              f'1 / 3 / 10 steps {t1["k=1", "fresh_pass"]:.3f} / {t1["k=3", "fresh_pass"]:.3f} / '
              f'{row["fresh_pass_after_10"]:.3f}')
    return row


def load_config(path: str, seed: int, substrate_name: str) -> TrainConfig:
    """A TrainConfig from a JSON file of its fields, with the seed given apart; its substrate must be the one the
    base agent is chosen for (--substrate)."""
    try:
        values = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as error:
        raise SystemExit(f'agentrl: cannot read config {path}: {error}')
    if not isinstance(values, dict):
        raise SystemExit(f'agentrl: config {path} must be a JSON object of TrainConfig fields')
    try:
        config = TrainConfig.from_dict({**values, 'seed': seed})
    except (TypeError, ValueError) as error:
        raise SystemExit(f'agentrl: bad config {path}: {error}')
    if config.substrate != substrate_name:
        raise SystemExit(f'agentrl: config {path} trains substrate {config.substrate!r} but --substrate is '
                         f'{substrate_name!r}; expected the same substrate in both')
    return config


def base_agent(args: argparse.Namespace):
    """The substrate's tokenizer and base agent: from --base (an exported file) or the cache."""
    tok = substrate(args.substrate).family.tokenizer()
    if args.base is None:
        return tok, make_base_agent(tok, cache_dir=args.cache_dir, name=args.substrate)
    try:
        return tok, load_base_agent(args.base, tok, args.substrate)
    except ValueError as error:
        raise SystemExit(f'agentrl: {error}; export it again with `python -m agentrl base-agent --out {args.base} '
                         f'--substrate {args.substrate}`')


def export_base_agent(args: argparse.Namespace) -> None:
    """Train (or load from the cache) the base agent and export it to a fixed path."""
    torch.set_num_threads(1)
    tok = substrate(args.substrate).family.tokenizer()
    model = make_base_agent(tok, cache_dir=args.cache_dir, name=args.substrate)
    save_base_agent(model, tok, args.out, args.substrate)
    print(f'base agent exported to {args.out}')


def warm_critic_file(args: argparse.Namespace) -> None:
    """Warm PPO's critic for a config's critic constants and a seed, and save it (shared by that seed's runs)."""
    torch.set_num_threads(1)
    config = load_config(args.config, args.seed, args.substrate)
    tok, base = base_agent(args)
    save_critic(warm_critic(base, tok, config), base, config, args.out)
    print(f'critic warmed for seed {config.seed} saved to {args.out}')


def warmed_critic(args: argparse.Namespace, base, config: TrainConfig):
    """The critic of --critic, checked against the run's base agent and config; None without --critic."""
    if args.critic is None:
        return None
    if config.algorithm != 'ppo':
        raise SystemExit(f'agentrl: --critic {args.critic} given, but algorithm={config.algorithm!r} uses no critic')
    try:
        return load_critic(args.critic, base, config)
    except ValueError as error:
        raise SystemExit(f'agentrl: {error}')


def train_run(args: argparse.Namespace) -> None:
    """One trainer run from an explicit config file and seed, written to a run directory."""
    torch.set_num_threads(1)
    config = load_config(args.config, args.seed, args.substrate)
    tok, base = base_agent(args)
    result = train(base, tok, config, log=lambda line: print(line, file=sys.stderr, flush=True),
                   critic=warmed_critic(args, base, config))
    result.summary['cpu_s'] = time.process_time()  # the job's CPU seconds, its start included: its cost alone
    meta = dict(kind='train', name=Path(args.config).stem, seed=args.seed, config=config.to_dict(),
                summary=result.summary, provenance=provenance(result.summary['wall_s']))
    write_run(args.out, meta, dict(iterations=result.iterations, epochs=result.epochs,
                                   minibatches=result.minibatches))
    s = result.summary
    print(f'{args.out}: pass train {s["pass_train"]:.3f} held-out {s["pass_heldout"]:.3f} | '
          f'{s["gradient_steps"]} gradient steps | diverged {s["diverged"]} | {s["wall_s"]:.1f} s')


CACHE_HELP = 'base-agent cache (default $AGENTRL_CACHE_DIR or ~/.cache/agentrl)'


def add_base_arguments(parser: argparse.ArgumentParser, exported: bool = True) -> None:
    """The options that choose the base agent: its substrate, and an exported file (exported) or the cache."""
    if exported:
        parser.add_argument('--base', default=None, help='an exported base agent (python -m agentrl base-agent)')
    parser.add_argument('--cache-dir', default=None, help=CACHE_HELP)
    parser.add_argument('--substrate', default=DEFAULT, choices=list(SUBSTRATES),
                        help='the agent (agentrl/world/substrates.py; default: %(default)s)')


def experiment_run(args: argparse.Namespace) -> None:
    """One chapter experiment (agentrl.chapter.experiments) for one seed, its records written to a run directory."""
    torch.set_num_threads(1)
    tok, base = base_agent(args)
    records, summary = run_experiment(args.name, base, tok, args.seed, args.substrate)
    summary['cpu_s'] = time.process_time()  # the job's CPU seconds, its start included: its cost alone
    meta = dict(kind='experiment', name=args.name, seed=args.seed, summary=summary,
                provenance=provenance(summary['wall_s']))
    write_run(args.out, meta, dict(records=records))
    print(f'{args.out}: {summary["records"]} records of {", ".join(summary["tables"])} | {summary["wall_s"]:.1f} s')


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog='agentrl', description=__doc__)
    commands = parser.add_subparsers(dest='command', required=True)
    stats = commands.add_parser('base-stats', help='sample the base agent and print its statistics')
    stats.add_argument('--episodes-per-task', type=int, default=16)
    stats.add_argument('--seeds', type=int, nargs='+', default=[0], help='sampling seeds (means printed for several)')
    stats.add_argument('--no-steps', dest='steps', action='store_false',
                       help='skip the REINFORCE step-size rows (30 updates per seed)')
    add_base_arguments(stats)
    stats.set_defaults(run=base_stats)
    export = commands.add_parser('base-agent', help='export the base agent to a file (trains it once)')
    export.add_argument('--out', required=True)
    add_base_arguments(export, exported=False)
    export.set_defaults(run=export_base_agent)
    run = commands.add_parser('train', help='one trainer run from a config file and a seed')
    run.add_argument('--config', required=True, help='JSON file of TrainConfig fields')
    run.add_argument('--seed', type=int, required=True)
    run.add_argument('--out', required=True, help='run directory to write')
    run.add_argument('--critic', default=None, help='a critic warmed for this config and seed '
                                                    '(python -m agentrl warm-critic); default: warm it here')
    add_base_arguments(run)
    run.set_defaults(run=train_run)
    critic = commands.add_parser('warm-critic', help="warm PPO's critic once for a seed and save it")
    critic.add_argument('--config', required=True, help='JSON file of TrainConfig fields (the critic_* ones count)')
    critic.add_argument('--seed', type=int, required=True)
    critic.add_argument('--out', required=True, help='critic file to write')
    add_base_arguments(critic)
    critic.set_defaults(run=warm_critic_file)
    experiment = commands.add_parser('experiment', help='one chapter experiment (tables outside the trainer) '
                                                        'for one seed')
    experiment.add_argument('name', choices=list(EXPERIMENTS), help='the experiment to run')
    experiment.add_argument('--seed', type=int, required=True)
    experiment.add_argument('--out', required=True, help='run directory to write')
    add_base_arguments(experiment)
    experiment.set_defaults(run=experiment_run)
    args = parser.parse_args(argv)
    args.run(args)
