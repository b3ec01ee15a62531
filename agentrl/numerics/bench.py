"""Benchmark on one thread: `python -m agentrl.numerics.bench`.

Prints seconds per 64-episode rollout of the base agent, the trainer's tokens per second
(forward, forward+backward), and the training step's achieved FLOP/s as a fraction of a float32
matmul peak measured in the same process, and where the step's time goes by kind of operator (attention,
matmuls, optimizer, the rest). FLOPs are counted by torch's FlopCounterMode. With
--chapter-run, also each cost lever's figure, a job's fixed cost, and one whole run of the chapter's
defaults, its critic warmed beforehand as the workflow does: its seconds, where they go, its cost
(seconds x the matmul peak in GFLOP/s, a ratio across machines of one instruction set) and the
process's peak memory.
"""
from __future__ import annotations

import argparse
import copy
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile
from torch.utils.flop_counter import FlopCounterMode

from ..agent import matmul
from ..agent.model import count_parameters, make_critic
from ..agent.packing import Packing
from ..agent.scoring import (critic_scores, packed_attention, packed_hidden, policy_scores, stacked_critic_scores,
                             stacked_policy_scores)
from ..agent.sampler import collate, sample_tasks, sequence_log_probs
from ..learning.base_agent import make_base_agent
from ..learning.config import TrainConfig
from ..learning.losses import adam
from ..learning.trainer import ppo_prepare, train, trim, warm_critic
from ..world.substrates import DEFAULT, SUBSTRATES, substrate


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
    """FLOPs of fn() as torch's FlopCounterMode counts them: matmuls (CPU attention's kernel is not counted). The
    counter does not see agentrl's kernel (numerics version 5): fn() runs torch's products (the same) as it counts."""
    fixed_order, matmul.FIXED_ORDER = matmul.FIXED_ORDER, False
    try:
        with FlopCounterMode(display=False) as counter:
            fn()
    finally:
        matmul.FIXED_ORDER = fixed_order
    return counter.get_total_flops()


# torch's products (numerics version 4), then agentrl's kernel's (version 5, agentrl/agent/matmul.cpp): its product,
# a linear layer and the linear layer's gradients
MATMULS = {'aten::mm', 'aten::addmm', 'aten::bmm', 'aten::baddbmm', 'agentrl::product', 'agentrl::linear',
           'torch::autograd::CppNode<(anonymous namespace)::Linear>', 'agentrl::segmented',
           'torch::autograd::CppNode<(anonymous namespace)::Segmented>'}
# the kernel's attention, its gradients and the softmax between its products (ATen's); torch's is scaled_dot_product
ATTENTION = {'agentrl::attention', 'torch::autograd::CppNode<(anonymous namespace)::Attention>', 'aten::_softmax',
             'aten::_softmax_backward_data'}


def op_kind(name: str) -> str:
    """The kind of a profiled operator: attention, matmul, optimizer (Adam, gradient clip) or other."""
    if 'scaled_dot_product' in name or name in ATTENTION:
        return 'attention'
    if name in MATMULS:
        return 'matmul'
    return 'optimizer' if '_foreach_' in name or '_fused_adam' in name or name.startswith('Optimizer.') else 'other'


def seconds_by_kind(fn) -> dict[str, float]:
    """Self CPU seconds of fn()'s operators by op_kind, under torch.profiler (which adds a little to each op)."""
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        fn()
    seconds = dict.fromkeys(('attention', 'matmul', 'optimizer', 'other'), 0.0)
    for event in prof.key_averages():
        seconds[op_kind(event.key)] += event.self_cpu_time_total / 1e6
    return seconds


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog='python -m agentrl.numerics.bench', description=__doc__)
    parser.add_argument('--repeats', type=int, default=20)
    parser.add_argument('--cache-dir', default=None)
    parser.add_argument('--chapter-run', action='store_true', help='also time one chapter-default trainer run')
    parser.add_argument('--seeds-per-process', type=int, nargs='+', metavar='K',
                        help="only time the trainer's minibatch step for K seeds scored as one computation, each K")
    parser.add_argument('--substrate', default=DEFAULT, choices=list(SUBSTRATES),
                        help='the agent measured (agentrl/world/substrates.py; default: %(default)s)')
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    family = substrate(args.substrate).family
    tok = family.tokenizer()
    base = make_base_agent(tok, cache_dir=args.cache_dir, name=args.substrate)  # trains it once, if the cache lacks it
    load_s = median_seconds(lambda: make_base_agent(tok, cache_dir=args.cache_dir, name=args.substrate), 5)
    print(f'substrate {args.substrate}: {count_parameters(base):,} parameters')
    print(f'base agent: loaded from the cache in {load_s:.3f} s (median of 5; goal well under 1 s)')
    if args.seeds_per_process:
        return seeds_per_process(base, tok, args.substrate, args.seeds_per_process, args.repeats)
    train = family.tasks('train')
    tasks = [train[i % len(train)] for i in range(64)]
    seeds = iter(range(10 ** 6))

    def rollout():
        return sample_tasks(base, tasks, 1, tok, torch.Generator().manual_seed(next(seeds)), family.new_env)

    rollout_s = median_seconds(rollout, args.repeats)
    print(f'rollout: {rollout_s:.4f} s per 64 episodes (median of {args.repeats}; goal <= 0.1 s)')
    peak = matmul_peak_flops()
    print(f'matmul peak: {peak / 1e9:.2f} GFLOP/s (float32, one thread, this process)')
    batch = collate(rollout(), tok.pad_id)
    step, step_flops = trainer_step(base, batch, peak, args.repeats)
    if args.chapter_run:
        lever_figures(base, tok, batch, args.repeats)
        fixed_cost(args.cache_dir)
        chapter_run(base, tok, peak, args.substrate)
    step_breakdown(step, step_flops, peak, args.repeats)  # last: the profiler's records would count as a run's memory


def seeds_per_process(base, tok, name: str, counts: list[int], repeats: int, seeds: int = 16) -> None:
    """The trainer's minibatch step (policy scoring, its backward, the critic's, on 16-episode minibatches) for
    `seeds` seeds, each its own policy, critic and rollout, scored K at a time as one computation
    (agentrl/agent/scoring.py): CPU seconds a seed-step at each K (median of `repeats` rounds, the K taken in turn
    in each round), their ratio to the first K, the process's peak memory after each K's first round, and where a
    seed-step's time goes at each K (profiled)."""
    family = substrate(name).family
    train = family.tasks('train')
    policies, critics, minibatches = [], [], []
    for seed in range(seeds):
        gen = torch.Generator().manual_seed(seed)
        tasks = [train[i] for i in torch.randint(len(train), (16,), generator=gen).tolist()]
        batch = collate(sample_tasks(base, tasks, 1, tok, gen, family.new_env), tok.pad_id)
        ids, mask = trim(batch['ids'], tok.pad_id, batch['action_mask'])
        torch.manual_seed(seed)
        policies.append(copy.deepcopy(base))
        critics.append(make_critic(base))
        minibatches.append((ids, mask, Packing.of(mask)))

    def step(group: list[int]) -> None:
        ids, masks, packings = zip(*(minibatches[k] for k in group))
        for model in [policies[k] for k in group] + [critics[k] for k in group]:
            model.zero_grad()
        scores = stacked_policy_scores([policies[k] for k in group], ids, packings)
        sum((logp * mask).sum() / mask.sum() for (logp, _), mask in zip(scores, masks)).backward()
        values = stacked_critic_scores([critics[k] for k in group], ids, packings)
        sum(((value - 1) ** 2 * mask).sum() / mask.sum() for value, mask in zip(values, masks)).backward()

    def all_seeds(K: int) -> float:  # CPU seconds a seed-step
        start = time.process_time()
        for first in range(0, seeds, K):
            step(list(range(first, min(first + K, seeds))))
        return (time.process_time() - start) / seeds

    times, memory = {K: [] for K in counts}, {}
    for _ in range(repeats):
        for K in counts:
            times[K].append(all_seeds(K))
            memory.setdefault(K, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    one = statistics.median(times[counts[0]])
    print(f'substrate {name}: {seeds} seeds, 16-episode minibatches of '
          f'{statistics.mean(m[2].rows.numel() for m in minibatches):.0f} positions on average')
    for K in counts:
        median = statistics.median(times[K])
        kinds = seconds_by_kind(lambda: all_seeds(K))
        print(f'seeds per process {K:2d}: {median * 1e3:6.2f} ms CPU a seed-step | {one / median:.2f}x K = '
              f'{counts[0]} | peak memory {memory[K]:.0f} MiB | profiled, ms a seed-step: '
              + ' '.join(f'{kind} {part / seeds * 1e3:.1f}' for kind, part in kinds.items()))


def trainer_step(base, batch: dict, peak: float, repeats: int):
    """The trainer's policy step (padding-free scoring, backward, Adam) on a 64-episode batch: tokens/s, FLOP/s.
    Returns the step (a function) and its FLOPs."""
    ids, mask = batch['ids'], batch['action_mask']
    packing = Packing.of(mask)
    opt = adam(base.parameters(), lr=0.0)  # the trainer's Adam; lr 0: measure the step, leave the weights

    def forward():
        with torch.no_grad():
            policy_scores(base, ids, packing)

    def train_step():
        loss = -(policy_scores(base, ids, packing)[0] * mask).sum() / mask.sum()
        opt.zero_grad()
        loss.backward()
        opt.step()

    forward_s, step_s = median_seconds(forward, repeats), median_seconds(train_step, repeats)
    step_flops, tokens = counted_flops(train_step), packing.rows.numel()
    print(f'trainer: batch [{ids.shape[0]}, {ids.shape[1]}], {tokens} positions computed | forward '
          f'{tokens / forward_s:,.0f} tokens/s | forward+backward {tokens / step_s:,.0f} tokens/s')
    print(f'trainer step: {step_flops / step_s / 1e9:.2f} GFLOP/s achieved | ratio to the matmul peak '
          f'{step_flops / step_s / peak:.3f} (a figure: the step is bound by attention on 8-channel heads, not matmuls)')
    return train_step, step_flops


def step_breakdown(train_step, step_flops: int, peak: float, repeats: int) -> None:
    """Where the trainer step's time goes by kind of operator, and what that means for its ratio to the peak."""
    seconds = seconds_by_kind(lambda: [train_step() for _ in range(repeats)])
    total = sum(seconds.values())
    print('trainer step, its time by kind of operator (profiled): ' + ' | '.join(
        f'{kind} {part / total:.0%}' for kind, part in seconds.items()))
    if not seconds['matmul']:
        print('trainer step, why the ratio: the profiler saw no matmul outside attention (MATMULS names them)')
        return
    matmul_rate = step_flops * repeats / seconds['matmul'] / peak
    print(f'trainer step, why the ratio: its matmuls run at {matmul_rate:.2f} of the peak and take '
          f'{seconds["matmul"] / total:.0%} of its time; were attention free, the ratio would be '
          f'{matmul_rate * seconds["matmul"] / (total - seconds["attention"]):.3f}')


def lever_figures(base, tok, batch: dict, repeats: int) -> None:
    """Each lever's figure: a 16-episode minibatch's policy scoring, forward and backward, full and padding-free;
    pi_old's two forward passes on the 64 episodes."""
    ids, mask = trim(batch['ids'][:16], tok.pad_id, batch['action_mask'][:16])
    packing = Packing.of(mask)

    def step(logp_of):
        def run():
            base.zero_grad()
            (logp_of() * mask).sum().backward()
        return median_seconds(run, repeats)

    def head_everywhere():  # padding-free trunk, head and log-softmax at every computed position
        logp = torch.log_softmax(base.logits(packed_hidden(base.trunk, ids, packing)), -1)[packing.scored]
        return packing.scatter(logp.gather(-1, ids[:, 1:][mask > 0][:, None]).squeeze(-1))

    full = step(lambda: sequence_log_probs(base, ids))
    unpadded = step(head_everywhere)
    scored = step(lambda: policy_scores(base, ids, packing)[0])
    base.zero_grad()
    print(f'lever, padding: a 16-episode minibatch [{ids.shape[0]}, {ids.shape[1]}] computes {packing.rows.numel()} '
          f'positions, not {ids.numel()}; policy scoring forward+backward {full * 1e3:.1f} ms -> '
          f'{unpadded * 1e3:.1f} ms')
    print(f'lever, head and log-softmax only at the {int(mask.sum())} policy tokens: {unpadded * 1e3:.1f} ms -> '
          f'{scored * 1e3:.1f} ms (both levers: {full / scored:.2f}x)')
    attention_layer_levers(base, packing, repeats)
    optimizer_lever(base, repeats)
    torch.manual_seed(0)
    critic = make_critic(base)

    def critic_head_everywhere():  # the head at every computed position, then the scored ones picked
        return packing.scatter(critic.head(packed_hidden(critic.trunk, ids, packing)).squeeze(-1)[packing.scored])
    everywhere = step(critic_head_everywhere)
    at_scored = step(lambda: critic_scores(critic, ids, packing))
    print(f"lever, the critic's head only at the policy tokens (forward+backward): {everywhere * 1e3:.1f} ms -> "
          f'{at_scored * 1e3:.1f} ms')
    prepare_s = median_seconds(lambda: ppo_prepare(base, critic, batch, TrainConfig(), tok.pad_id), repeats)
    print(f'lever, one pass for old log-probs and values: not possible, the policy and the critic have separate '
          f'weights; the two padding-free passes take {prepare_s:.3f} s per 64 episodes')


def attention_layer_levers(base, packing: Packing, repeats: int) -> None:
    """Per attention layer on the minibatch, forward and backward: every row padded to the longest, against rows in
    buckets of similar length each padded to its own longest (Packing.buckets)."""
    C = base.config.d_model
    attn = base.trunk.blocks[0].attn
    x = torch.randn(packing.rows.numel(), C, requires_grad=True)
    rotary = base.trunk.cos[packing.cols][:, None], base.trunk.sin[packing.cols][:, None]
    one_layout = Packing.of(packing.mask, buckets=False)  # the same positions in the same order

    def layer(p: Packing):
        return lambda: packed_attention(attn, x, rotary, p).sum().backward()
    padded, bucketed = median_seconds(layer(one_layout), repeats), median_seconds(layer(packing), repeats)
    shapes = ', '.join(f'[{b.rows}, {b.width}]' for b in packing.buckets)
    print(f'lever, attention in length buckets (per layer, forward+backward): one layout [{one_layout.buckets[0].rows}, '
          f'{one_layout.buckets[0].width}] {padded * 1e3:.2f} ms -> buckets {shapes} {bucketed * 1e3:.2f} ms')


def optimizer_lever(base, repeats: int) -> None:
    """Adam's step on the policy's parameters: multi-tensor (foreach) against fused, the trainer's."""
    def step_of(**form):
        model = copy.deepcopy(base)
        opt = torch.optim.Adam(model.parameters(), lr=1e-3, **form)
        for p in model.parameters():
            p.grad = torch.randn_like(p)
        return median_seconds(opt.step, repeats)
    print(f'lever, fused Adam: a step on the policy {step_of(foreach=True) * 1e3:.2f} ms (multi-tensor) -> '
          f'{step_of(fused=True) * 1e3:.2f} ms (fused)')


def process_seconds(command: list[str]) -> float:
    """Wall seconds of a child process (one thread, this interpreter)."""
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    return time.perf_counter() - start


def fixed_cost(cache_dir: str | None) -> None:
    """A training job's time outside its run (interpreter, imports, loading, writing), next to a bare torch import:
    a one-iteration job, timed whole, less the run's own wall time from its run.json."""
    bare = statistics.median(process_seconds([sys.executable, '-c', 'import torch']) for _ in range(3))
    with tempfile.TemporaryDirectory() as folder:
        config = Path(folder) / 'tiny.json'
        config.write_text(json.dumps(dict(iterations=1, episodes_per_iteration=16, eval_episodes_per_task=1,
                                          critic_warmup_episodes_per_task=1, critic_warmup_steps=1)))
        command = [sys.executable, '-m', 'agentrl', 'train', '--config', str(config), '--seed', '0',
                   *(['--cache-dir', cache_dir] if cache_dir else [])]
        outside = []
        for attempt in range(3):
            out = Path(folder) / f'run{attempt}'
            job = process_seconds(command + ['--out', str(out)])
            outside.append(job - json.loads((out / 'run.json').read_text())['summary']['wall_s'])
    print(f'fixed cost of a job: {statistics.median(outside):.2f} s outside its run (median of 3), against '
          f'{bare:.2f} s for a bare `python -c "import torch"`')


def chapter_run(base, tok, peak: float, substrate_name: str) -> None:
    """One run of TrainConfig's defaults (the chapter's run_ppo) on the substrate, with its critic warmed beforehand,
    as the workflow does: seconds by phase, the run's cost (seconds x matmul peak GFLOP/s) and peak memory."""
    config = TrainConfig(substrate=substrate_name)
    start = time.perf_counter()
    critic = warm_critic(base, tok, config)
    warm_s = time.perf_counter() - start
    start = time.perf_counter()
    result = train(base, tok, config, critic=critic)
    total = time.perf_counter() - start
    iterations = sum(it['wall_s'] for it in result.iterations)
    sampling = sum(it['sample_s'] for it in result.iterations)
    tokens = sum(it['policy_tokens'] * config.episodes_per_iteration for it in result.iterations)
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB
    print(f'lever, critic warm-up: {warm_s:.1f} s, once per seed for all its PPO cells (python -m agentrl '
          f'warm-critic), not in each run')
    print(f'chapter-default run: {total:.1f} s | sampling {sampling:.1f} s | prepare and updates '
          f'{iterations - sampling:.1f} s | final evaluation {total - iterations:.1f} s | peak memory {peak_mib:.0f} MiB '
          f'(goal < 1024)')
    print(f'per policy token trained: {1e6 * iterations / tokens:.1f} us ({tokens:,.0f} policy tokens sampled over '
          f'{len(result.iterations)} iterations)')
    print(f'run cost: {total:.1f} s x {peak / 1e9:.1f} GFLOP/s = {total * peak / 1e9:,.0f} (goal <= 1,500); with '
          f'the warm-up in the run {(total + warm_s) * peak / 1e9:,.0f}')


if __name__ == '__main__':
    main()
