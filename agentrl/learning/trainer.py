"""The one shared trainer: PPO (and the REINFORCE baseline) over every ablation axis of TrainConfig.

It reads as the chapter's `run_ppo` grown up: warm the critic, then per iteration sample a batch,
freeze pi_old (old log-probs, old values, GAE advantages), and run epochs of shuffled minibatch
updates with early stopping. With the default TrainConfig it draws the same random numbers in the
same order as the chapter's listing. Everything the analysis needs comes back as records.
"""
from __future__ import annotations

import copy
import math
import time
from dataclasses import dataclass, field, replace

import torch

from .. import numerics
from ..agent.model import Critic, TinyAgent, make_critic
from ..agent.packing import Packing
from ..agent.scoring import critic_scores, policy_scores
from ..agent.sampler import collate, rollout_batch, rollout_stats, sample_tasks
from ..world.task_family import TaskFamily
from ..world.tokenizer import Tokenizer
from .advantages import explained_variance, gae_advantages, outcome_rewards, returns_to_go, whiten
from .config import TrainConfig
from .losses import adam, aggregate_loss, entropy_from_logits, masked_mean, policy_gradient_step
from .ppo import kl_k3, ppo_policy_loss, value_loss

# Seed offsets of the chapter's generators; seed s shifts all of them by s.
CRITIC_INIT_SEED, WARMUP_SAMPLE_SEED, WARMUP_SHUFFLE_SEED, EVAL_SEED = 0, 1, 0, 7


class Diverged(RuntimeError):
    """A loss became NaN or infinite."""


@dataclass(frozen=True)
class PreparedBatch:
    """A batch frozen under pi_old: ids [B, T]; mask, old_logp, old_values, advantages, returns [B, T-1]
    (0 off the policy tokens); pad_id, the padding of ids."""
    ids: torch.Tensor
    mask: torch.Tensor
    old_logp: torch.Tensor
    old_values: torch.Tensor
    advantages: torch.Tensor
    returns: torch.Tensor
    pad_id: int

    def minibatch(self, rows: torch.Tensor) -> 'PreparedBatch':
        """The episodes of rows [b], trailing columns that are padding in every one of them dropped."""
        ids, *per_token = trim(self.ids[rows], self.pad_id, self.mask[rows], self.old_logp[rows],
                               self.old_values[rows], self.advantages[rows], self.returns[rows])
        return PreparedBatch(ids, *per_token, pad_id=self.pad_id)


@dataclass(frozen=True)
class Learner:
    """What PPO's updates change: the policy and the critic, each with its optimizer."""
    policy: TinyAgent
    critic: Critic
    policy_opt: torch.optim.Optimizer
    critic_opt: torch.optim.Optimizer


@dataclass
class RunResult:
    """A finished (or diverged) run: its config, summary, per-iteration/epoch/minibatch records."""
    config: TrainConfig
    summary: dict = field(default_factory=dict)
    iterations: list[dict] = field(default_factory=list)
    epochs: list[dict] = field(default_factory=list)
    minibatches: list[dict] = field(default_factory=list)
    policy: TinyAgent | None = None


def mc_returns(batch: dict) -> torch.Tensor:
    """Monte Carlo value targets: the outcome on every policy token [B, T-1]."""
    mask = batch['action_mask']
    return returns_to_go(outcome_rewards(batch['rewards'], mask), mask)


def sample_batch(policy: TinyAgent, tok: Tokenizer, n: int, gen: torch.Generator,
                 family: TaskFamily = TaskFamily()) -> dict:
    """n episodes of the family's train tasks drawn uniformly with gen, each in the family's env, collated."""
    train = family.tasks('train')
    tasks = [train[i] for i in torch.randint(len(train), (n,), generator=gen).tolist()]
    trajs = rollout_batch(policy, [family.new_env() for _ in tasks], tasks, tok, generator=gen)
    return collate(trajs, tok.pad_id)


def trim(ids: torch.Tensor, pad_id: int, *per_token: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """Drop trailing columns that are padding in every row: ids [B, T], per-token tensors [B, T-1]."""
    width = int((ids != pad_id).sum(-1).max())
    return (ids[:, :width],) + tuple(x[:, :width - 1] for x in per_token)


def warm_critic(policy: TinyAgent, tok: Tokenizer, config: TrainConfig) -> Critic:
    """A critic copied from the policy and regressed on Monte Carlo returns of its episodes; its head is drawn
    from torch's global generator seeded CRITIC_INIT_SEED + seed (the generator's state is restored after)."""
    numerics.require()
    with torch.random.fork_rng():
        torch.manual_seed(CRITIC_INIT_SEED + config.seed)
        critic = make_critic(policy)
    family = config.task_family
    data = collate(sample_tasks(policy, family.tasks('train'), config.critic_warmup_episodes_per_task, tok,
                                torch.Generator().manual_seed(WARMUP_SAMPLE_SEED + config.seed), family.new_env),
                   tok.pad_id)
    opt = adam(critic.parameters(), config.critic_lr)
    gen, targets = torch.Generator().manual_seed(WARMUP_SHUFFLE_SEED + config.seed), mc_returns(data)
    for _ in range(config.critic_warmup_steps):
        idx = torch.randint(len(targets), (32,), generator=gen)
        ids, mb_targets, mb_mask = trim(data['ids'][idx], tok.pad_id, targets[idx], data['action_mask'][idx])
        loss = masked_mean((critic_scores(critic, ids, Packing.of(mb_mask)) - mb_targets) ** 2, mb_mask)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return critic


@torch.no_grad()
def ppo_prepare(policy: TinyAgent, critic: Critic, batch: dict, config: TrainConfig, pad_id: int) -> PreparedBatch:
    """Freeze pi_old on a collated batch: old log-probs, old values, GAE advantages (whitened per batch if
    config.whiten_advantages is True), value targets."""
    m = batch['action_mask']
    packing = Packing.of(m)
    old_logp, _ = policy_scores(policy, batch['ids'], packing)
    old_values = critic_scores(critic, batch['ids'], packing)
    adv, returns = gae_advantages(outcome_rewards(batch['rewards'], m), old_values, m, config.gamma, config.lam)
    if config.whiten_advantages is True:  # per batch; 'minibatch' whitens in ppo_epochs
        adv = whiten(adv, m)
    return PreparedBatch(batch['ids'], m, old_logp, old_values, adv, returns, pad_id)


def _check_finite(value: torch.Tensor, what: str) -> None:
    if not math.isfinite(value.item()):
        raise Diverged(f'{what} is {value.item()}')


def clip_range(config: TrainConfig) -> tuple[float, float]:
    """(eps_low, eps_high) of the surrogate: PPO-penalty (kl_penalty set, exercise 4) does not clip."""
    return (math.inf, math.inf) if config.kl_penalty is not None else (config.clip_low, config.clip_high)


def ppo_epochs(learner: Learner, prepared: PreparedBatch, config: TrainConfig, gen: torch.Generator,
               beta: float = 0.0, iteration: int = 0) -> tuple[list[dict], list[dict]]:
    """Clipped policy and value updates over shuffled minibatches (advantages whitened in each where
    config.whiten_advantages is 'minibatch') -> (per-epoch records, per-minibatch records)."""
    policy, critic = learner.policy, learner.critic
    per_epoch, per_minibatch = [], []
    for epoch in range(config.epochs):
        logs, stop = [], False
        for index, rows in enumerate(torch.randperm(len(prepared.ids), generator=gen).chunk(config.minibatches)):
            mb = prepared.minibatch(rows)
            if config.whiten_advantages == 'minibatch':  # Andrychowicz et al. 2021: over this minibatch's tokens
                mb = replace(mb, advantages=whiten(mb.advantages, mb.mask))
            packing = Packing.of(mb.mask)
            logp, logits = policy_scores(policy, mb.ids, packing)  # logits [P, V] at the policy tokens
            loss, stats = ppo_policy_loss(logp, mb.old_logp, mb.advantages, mb.mask, *clip_range(config),
                                          config.loss_mode, config.dual_clip, config.norm_const)
            if config.target_kl is not None and config.early_stop == 'minibatch' and stats['approx_kl'] > config.target_kl:
                stop = True  # this minibatch is already past the target: no step on it
                break
            if beta:
                loss = loss + beta * aggregate_loss(kl_k3(logp - mb.old_logp), mb.mask, config.loss_mode,
                                                    config.norm_const)
            _check_finite(loss, f'policy loss at iteration {iteration}, epoch {epoch}')
            learner.policy_opt.zero_grad()
            loss.backward()
            max_norm = math.inf if config.max_grad_norm is None else config.max_grad_norm
            grad_norm = torch.nn.utils.clip_grad_norm_(policy.parameters(), max_norm)
            learner.policy_opt.step()
            vloss = value_loss(critic_scores(critic, mb.ids, packing), mb.old_values, mb.returns, mb.mask,
                               config.value_clip)
            _check_finite(vloss, f'value loss at iteration {iteration}, epoch {epoch}')
            learner.critic_opt.zero_grad()
            vloss.backward()
            learner.critic_opt.step()
            stats = dict(stats, policy_loss=loss.item(), value_loss=vloss.item(), grad_norm=grad_norm.item(),
                         entropy=masked_mean(packing.scatter(entropy_from_logits(logits.detach())), mb.mask).item())
            logs.append(stats)
            per_minibatch.append(dict(iteration=iteration, epoch=epoch, minibatch=index, **stats))
        if logs:
            per_epoch.append(dict(iteration=iteration, epoch=epoch, minibatches=len(logs),
                                  **{k: sum(s[k] for s in logs) / len(logs) for k in logs[0]}))
        if stop or (config.target_kl is not None and config.early_stop == 'epoch'
                    and per_epoch[-1]['approx_kl'] > config.target_kl):
            break  # early stopping (Section 8.5)
    return per_epoch, per_minibatch


def adapt_beta(beta: float, kl: float, target: float) -> float:
    """The adaptive KL coefficient of PPO-penalty: double above 1.5 x target, halve below target / 1.5."""
    return beta * 2 if kl > 1.5 * target else beta / 2 if kl < target / 1.5 else beta


def evaluate(policy: TinyAgent, tok: Tokenizer, config: TrainConfig) -> dict[str, float]:
    """Pass rates of a policy on both splits of its substrate's tasks, config.eval_episodes_per_task episodes each."""
    family = config.task_family
    return {f'pass_{split}': rollout_stats(sample_tasks(policy, family.tasks(split), config.eval_episodes_per_task, tok,
                                                        torch.Generator().manual_seed(EVAL_SEED + config.seed),
                                                        family.new_env))['pass_rate']
            for split in ('train', 'heldout')}


def train(base: TinyAgent, tok: Tokenizer, config: TrainConfig, log=None, critic: Critic | None = None) -> RunResult:
    """One run of config.algorithm from the base agent -> RunResult (diverged runs included).

    critic: PPO's critic already warmed from base under config (critic_store.load_critic); None warms it here.
    """
    if critic is not None and config.algorithm != 'ppo':
        raise ValueError(f'algorithm={config.algorithm!r} uses no critic; give a warmed critic to PPO runs only')
    numerics.require()
    start = time.perf_counter()
    result = RunResult(config)
    policy = copy.deepcopy(base)
    try:
        if config.algorithm == 'ppo':
            _train_ppo(policy, base, tok, config, result, log, copy.deepcopy(critic))
        else:
            _train_reinforce(policy, base, tok, config, result, log)
        result.summary['diverged'], result.summary['diverged_at'] = False, None
    except Diverged as error:
        result.summary['diverged'], result.summary['diverged_at'] = True, len(result.iterations)
        result.summary['diverged_reason'] = str(error)
    diverged = result.summary['diverged']  # a policy with NaN weights cannot be sampled: no evaluation
    result.summary.update(dict(pass_train=math.nan, pass_heldout=math.nan) if diverged else evaluate(policy, tok, config))
    result.summary.update(
        iterations_done=len(result.iterations),
        gradient_steps=sum(it['gradient_steps'] for it in result.iterations),
        final_batch_reward=result.iterations[-1]['reward'] if result.iterations else None,
        wall_s=time.perf_counter() - start)
    result.policy = policy
    return result


def _train_ppo(policy, base, tok, config: TrainConfig, result: RunResult, log, critic: Critic | None) -> None:
    critic = warm_critic(base, tok, config) if critic is None else critic
    gen = torch.Generator().manual_seed(config.seed)
    learner = Learner(policy, critic, adam(policy.parameters(), config.lr), adam(critic.parameters(), config.critic_lr))
    beta = config.kl_penalty or 0.0
    for it in range(config.iterations):
        tick = time.perf_counter()
        batch = sample_batch(policy, tok, config.episodes_per_iteration, gen, config.task_family)
        sampled = time.perf_counter()
        prepared = ppo_prepare(policy, critic, batch, config, tok.pad_id)
        varied = batch['rewards'].std() > 0
        ev = explained_variance(prepared.old_values, mc_returns(batch), prepared.mask) if varied else float('nan')
        per_epoch, per_minibatch = ppo_epochs(learner, prepared, config, gen, beta, it)
        last = per_epoch[-1] if per_epoch else {}
        record = iteration_record(it, config, batch, tick, sampled, ev=ev, epochs_used=len(per_epoch),
                                  gradient_steps=len(per_minibatch), approx_kl=last.get('approx_kl', math.nan),
                                  clip_frac=last.get('clip_frac', math.nan), beta=beta)
        result.iterations.append(record)
        result.epochs += per_epoch
        result.minibatches += per_minibatch
        if config.kl_penalty is not None and per_epoch:
            beta = adapt_beta(beta, last['approx_kl'], config.kl_penalty_target)
        if log:
            log(progress_line(record, config))


def _train_reinforce(policy, base, tok, config: TrainConfig, result: RunResult, log) -> None:
    """Chapter 6's baseline: one policy-gradient step per batch, advantage = reward - batch mean."""
    gen = torch.Generator().manual_seed(config.seed)
    opt = adam(policy.parameters(), config.lr)
    for it in range(config.iterations):
        tick = time.perf_counter()
        batch = sample_batch(policy, tok, config.episodes_per_iteration, gen, config.task_family)
        sampled = time.perf_counter()
        stats = policy_gradient_step(policy, opt, batch, batch['rewards'] - batch['rewards'].mean(), config.loss_mode,
                                     config.norm_const)
        if not math.isfinite(stats['loss']):
            raise Diverged(f'policy loss at iteration {it} is {stats["loss"]}')
        record = iteration_record(it, config, batch, tick, sampled, ev=math.nan, epochs_used=1, gradient_steps=1,
                                  approx_kl=math.nan, clip_frac=math.nan, beta=0.0)
        result.iterations.append(record)
        result.minibatches.append(dict(iteration=it, epoch=0, minibatch=0, **stats))
        if log:
            log(progress_line(record, config))


def iteration_record(it: int, config: TrainConfig, batch: dict, tick: float, sampled: float, **update) -> dict:
    """One iteration's record: what the batch was, what the update did (`update`), and the times."""
    return dict(iteration=it, episodes=(it + 1) * config.episodes_per_iteration,
                reward=batch['rewards'].mean().item(), **update,
                policy_tokens=batch['action_mask'].sum(-1).mean().item(),
                sample_s=sampled - tick, wall_s=time.perf_counter() - tick)


def progress_line(record: dict, config: TrainConfig) -> str:
    """One line per iteration, so that a log shows where a long run is."""
    return (f'iter {record["iteration"] + 1:3d}/{config.iterations} | reward {record["reward"]:.3f} | '
            f'kl {record["approx_kl"]:.4f} | clip_frac {record["clip_frac"]:.3f} | '
            f'epochs {record["epochs_used"]}/{config.epochs} | {record["wall_s"]:.2f} s')
