"""The chapter's experiments outside the trainer, each a function of a seed that returns tidy records.

An experiment is `f(base, tok, seed, substrate_name) -> list[dict]`, one dict(table, row, metric, value) per number
the chapter prints in that table (T1-T6, T10-T13, Figure 8.1, exercises 3 and 6), on the substrate's tasks and
episodes (agentrl/world/substrates.py; by default the chapter's tinyagent). Seed 0 draws
exactly the random numbers of chapter08_listing.py (blocks 2-5, 7-9, 18-21); seed s shifts every
one of its generators by s. The trainer-run tables (T7-T9, exercises 4, 5, 6b, 7) are trainer runs.
"""
from __future__ import annotations

import copy
import math
import statistics
import time

import torch

from .. import numerics
from ..agent.model import Critic, TinyAgent
from ..agent.sampler import collate, rollout_stats, sample_tasks, sequence_log_probs
from ..learning.config import TrainConfig
from ..learning.losses import adam, entropy_from_logits, masked_mean, policy_gradient_step
from ..learning.ppo import kl_k3, ppo_policy_loss
from ..learning.trainer import Learner, PreparedBatch, ppo_epochs, ppo_prepare, sample_batch, warm_critic
from ..world.substrates import DEFAULT, substrate
from ..world.task_family import TaskFamily
from ..world.tokenizer import Tokenizer
from .lengths import BUCKETS, inclusive, label

# The listing's generator seeds; seed s shifts each of them by s.
OLD_BATCH_SEED, REINFORCE_SEED, FRESH_SEED, EPOCHS_SEED = 0, 1, 9, 0
EPISODES_PER_TASK = 16  # 20 train tasks -> the 320-episode old batch
REINFORCE_LR, REINFORCE_EPISODES = 2e-3, 64  # Chapter 6's REINFORCE, as the listing runs it
PPO_LR = TrainConfig.lr  # the trainer's default, the chapter's
UPDATES = (0, 1, 3, 10, 30)  # T1: REINFORCE updates between pi_old and pi_theta
SURROGATE_UPDATES = (1, 3, 10)  # T3
T4_RATIOS, T5_RATIOS = (0.5, 0.79, 1.0, 1.1, 1.3, 2.0), (2.0, 5.0, 20.0)
TRUST_REGION_EPISODES, TRUST_REGION_STEPS = 64, 40  # T6
MANY_EPOCHS, MANY_EPOCHS_MINIBATCHES, BUG_STEPS, BUG_EPISODES = 16, 4, 8, 64  # T10, T12
CLIP_HIGHER = 0.28  # exercise 6: DAPO's eps_high
PROB_BUCKETS = ((0.0, 0.1), (0.1, 0.5), (0.5, 1.0))  # T13: pi_old of the sampled token
MINIBATCH_COUNTS = (1, 2, 4, 8, 16)  # T11


def records(table: str, row: str, metrics: dict) -> list[dict]:
    """One tidy record per metric of a table's row; values as floats."""
    return [dict(table=table, row=row, metric=metric, value=float(value)) for metric, value in metrics.items()]


# --- shared pieces: the old batch, fresh samples, REINFORCE updates, ratios --------------------------------

@torch.no_grad()
def old_batch(base: TinyAgent, tok: Tokenizer, seed: int,
              family: TaskFamily = TaskFamily()) -> tuple[dict, torch.Tensor]:
    """The 320 episodes of pi_old (16 per train task, block 2) and their log-probs old_logp [B, T-1]."""
    trajs = sample_tasks(base, family.tasks('train'), EPISODES_PER_TASK, tok,
                         torch.Generator().manual_seed(OLD_BATCH_SEED + seed), family.new_env)
    batch = collate(trajs, tok.pad_id)
    return batch, sequence_log_probs(base, batch['ids'])


def fresh_pass(model: TinyAgent, tok: Tokenizer, seed: int, family: TaskFamily = TaskFamily()) -> float:
    """Pass rate of 320 fresh episodes of the train tasks (the listing's seed 9)."""
    trajs = sample_tasks(model, family.tasks('train'), EPISODES_PER_TASK, tok,
                         torch.Generator().manual_seed(FRESH_SEED + seed), family.new_env)
    return rollout_stats(trajs)['pass_rate']


def reinforce_path(base: TinyAgent, tok: Tokenizer, seed: int, updates, family: TaskFamily = TaskFamily()):
    """Yield (k, policy) after k REINFORCE updates of a copy of base, for each k in increasing updates."""
    moved, gen = copy.deepcopy(base), torch.Generator().manual_seed(REINFORCE_SEED + seed)
    opt, done = adam(moved.parameters(), REINFORCE_LR), 0
    for k in updates:
        for _ in range(k - done):
            batch = sample_batch(moved, tok, REINFORCE_EPISODES, gen, family)
            policy_gradient_step(moved, opt, batch, batch['rewards'] - batch['rewards'].mean())
        done = k
        yield k, moved


@torch.no_grad()
def log_ratio(model: TinyAgent, batch: dict, old_logp: torch.Tensor) -> torch.Tensor:
    """log pi_theta - log pi_old on policy tokens, 0 elsewhere: [B, T-1]."""
    return (sequence_log_probs(model, batch['ids']) - old_logp) * batch['action_mask']


def weight_stats(log_w: torch.Tensor, rewards: torch.Tensor) -> dict[str, float]:
    """Importance-sampling diagnostics of per-episode log-weights log_w [B] and rewards [B]."""
    w = log_w.exp()
    return dict(sd_log_w=log_w.std().item(), max_w=w.max().item(), mean_w=w.mean().item(),  # E_old[w] = 1
                ess_over_n=(w.sum() ** 2 / (w ** 2).sum()).item() / len(w),
                is_estimate=(w * rewards).mean().item(),
                snis_estimate=((w * rewards).sum() / w.sum()).item())  # self-normalized (exercise 3)


def _std(x: torch.Tensor) -> float:
    """Sample standard deviation; NaN for fewer than two values."""
    return x.std().item() if x.numel() > 1 else math.nan


def loglog_slope(x: list[float], y: list[float]) -> float:
    """Least-squares slope of log y on log x over the pairs with finite, positive x and y; NaN if they
    are fewer than two or share one x."""
    pairs = [(math.log(a), math.log(b)) for a, b in zip(x, y) if a > 0 and b > 0 and math.isfinite(a * b)]
    if len({a for a, _ in pairs}) < 2:
        return math.nan
    return statistics.linear_regression(*zip(*pairs)).slope


def in_length_bucket(lengths: torch.Tensor, bucket: tuple[int, int]) -> torch.Tensor:
    """[B] bool: policy tokens per episode [B] in one of T2's buckets (agentrl/chapter/lengths.py)."""
    lo, hi = bucket
    below_top = lengths <= hi if inclusive(bucket) == 'both' else lengths < hi
    return (lengths >= lo) & below_top


@torch.no_grad()
def mean_token_kl(model: TinyAgent, batch: dict, old_logp: torch.Tensor) -> float:
    """KL(pi_old || model) on the batch's policy tokens, the k3 estimate averaged per token."""
    return masked_mean(kl_k3(log_ratio(model, batch, old_logp)), batch['action_mask']).item()


# --- the experiments -----------------------------------------------------------------------------------

def importance_weights(base: TinyAgent, tok: Tokenizer, seed: int, substrate_name: str = DEFAULT) -> list[dict]:
    """T1 (+ exercise 3's SNIS), T2 and Figure 8.1: importance weights of the old batch after k updates."""
    family = substrate(substrate_name).family
    batch, old_logp = old_batch(base, tok, seed, family)
    out, log_w = [], {}
    for k, moved in reinforce_path(base, tok, seed, UPDATES, family):
        log_w[k] = log_ratio(moved, batch, old_logp).sum(-1)  # [B], Eq. (8.1)
        out += records('T1', f'k={k}', dict(weight_stats(log_w[k], batch['rewards']),
                                            fresh_pass=fresh_pass(moved, tok, seed, family)))
    lengths = batch['action_mask'].sum(-1)  # [B] policy tokens per episode
    spread = {}
    for bucket in BUCKETS:
        rows = in_length_bucket(lengths, bucket)
        spread[bucket] = dict(episodes=rows.sum().item(),
                              mean_tokens=lengths[rows].float().mean().item() if rows.any() else math.nan,
                              sd_log_w_k3=_std(log_w[3][rows]), sd_log_w_k10=_std(log_w[10][rows]))
        out += records('T2', label(bucket), spread[bucket])
    mean_tokens = [row['mean_tokens'] for row in spread.values()]  # sd ~ sqrt(length): slope 0.5 on log-log
    out += records('T2', 'loglog_slope', {f'sd_log_w_k{k}': loglog_slope(mean_tokens, [row[f'sd_log_w_k{k}']
                                                                                      for row in spread.values()])
                                          for k in (3, 10)})
    for i, (n, w) in enumerate(zip(lengths.tolist(), log_w[10].tolist())):
        out += records('F8.1', f'episode={i}', dict(policy_tokens=n, log_w_k10=w))
    return out


def surrogate(base: TinyAgent, tok: Tokenizer, seed: int, substrate_name: str = DEFAULT) -> list[dict]:
    """T3: the surrogate's predicted improvement against the measured one after k REINFORCE updates."""
    family = substrate(substrate_name).family
    batch, old_logp = old_batch(base, tok, seed, family)
    advantage = (batch['rewards'] - batch['rewards'].mean())[:, None]  # [B, 1], outcome advantage
    j_old, out = fresh_pass(base, tok, seed, family), []
    for k, moved in reinforce_path(base, tok, seed, SURROGATE_UPDATES, family):
        rho = log_ratio(moved, batch, old_logp).exp()  # [B, T-1], 1 off policy tokens
        predicted = ((rho - 1) * advantage * batch['action_mask']).sum(-1).mean().item()
        out += records('T3', f'k={k}', dict(surrogate=predicted, measured=fresh_pass(moved, tok, seed, family) - j_old,
                                            approx_kl=mean_token_kl(moved, batch, old_logp)))  # the distance
    return out


def ascent(ratios, advantage: float, **loss_options) -> tuple[float, dict, list[float]]:
    """The clipped loss of one episode at given ratios -> (loss, stats, -d loss/d logp per token)."""
    logp = torch.tensor([ratios]).log().requires_grad_()  # [1, T]
    loss, stats = ppo_policy_loss(logp, torch.zeros_like(logp), torch.tensor([advantage]), torch.ones_like(logp),
                                  mode='seq_mean_token_sum', **loss_options)
    return loss.item(), stats, [-g + 0.0 for g in torch.autograd.grad(loss, logp)[0][0].tolist()]


def clip_gradients(base: TinyAgent, tok: Tokenizer, seed: int, substrate_name: str = DEFAULT) -> list[dict]:
    """T4 and T5: the clipped loss's ascent direction per advantage sign, and dual clipping (seed, substrate unused)."""
    out = []
    for sign, row in [(1.0, 'A=+1'), (-1.0, 'A=-1')]:
        _, stats, grads = ascent(T4_RATIOS, sign)
        out += records('T4', row, dict({f'grad_{i}': g for i, g in enumerate(grads)}, clip_frac=stats['clip_frac']))
    for c in [None, 3.0]:
        loss, _, grads = ascent(T5_RATIOS, -1.0, dual_clip=c)
        out += records('T5', f'dual_clip={c}', dict(loss=loss, **{f'grad_{i}': g for i, g in enumerate(grads)}))
    return out


def trust_region(base: TinyAgent, tok: Tokenizer, seed: int, substrate_name: str = DEFAULT) -> list[dict]:
    """T6: 40 Adam steps of the clipped and the unclipped surrogate on the old batch's first 64 episodes."""
    batch, old_logp = old_batch(base, tok, seed, substrate(substrate_name).family)
    n = TRUST_REGION_EPISODES
    ids, old, mask, rewards = batch['ids'][:n], old_logp[:n], batch['action_mask'][:n], batch['rewards'][:n]
    adv, out = rewards - rewards.mean(), []  # [n] outcome advantages
    for row, eps in [('clipped', 0.2), ('unclipped', math.inf)]:
        policy = copy.deepcopy(base)
        opt = adam(policy.parameters(), PPO_LR)
        for _ in range(TRUST_REGION_STEPS):
            logp = sequence_log_probs(policy, ids)
            loss, stats = ppo_policy_loss(logp, old, adv, mask, eps, eps)
            opt.zero_grad()
            loss.backward()
            opt.step()
        ratio = (logp.detach() - old).exp()[mask > 0]  # as of the last step's forward pass, like its stats
        out += records('T6', row, dict(approx_kl=stats['approx_kl'],
                                       outside_band=((ratio < 0.8) | (ratio > 1.2)).float().mean(),
                                       max_ratio=ratio.max()))
    return out


def warmed_start(base: TinyAgent, tok: Tokenizer, seed: int, batch: dict, substrate_name: str = DEFAULT):
    """A policy copy, the warmed critic (block 18's seeds, the substrate's tasks) and pi_old frozen on batch
    (lambda 1)."""
    config = TrainConfig(seed=seed, substrate=substrate_name)
    critic = warm_critic(base, tok, config)
    return copy.deepcopy(base), critic, ppo_prepare(base, critic, batch, config, tok.pad_id)


def ppo_update(policy: TinyAgent, critic: Critic, prepared: PreparedBatch, seed: int, epochs: int, minibatches: int,
               clip_high: float = TrainConfig.clip_high) -> list[dict]:
    """Fresh Adam optimizers, then the trainer's PPO epochs over the prepared batch -> per-epoch records."""
    learner = Learner(policy, critic, adam(policy.parameters(), PPO_LR),
                      adam(critic.parameters(), PPO_LR))
    config = TrainConfig(epochs=epochs, minibatches=minibatches, seed=seed, clip_high=clip_high)
    per_epoch, _ = ppo_epochs(learner, prepared, config, torch.Generator().manual_seed(EPOCHS_SEED + seed))
    return per_epoch


@torch.no_grad()
def policy_entropy(model: TinyAgent, batch: dict) -> float:
    """Mean entropy (nats) of the model's next-token distribution over the batch's policy tokens."""
    return masked_mean(entropy_from_logits(model(batch['ids'])[:, :-1]), batch['action_mask']).item()


def sixteen_epochs(base: TinyAgent, tok: Tokenizer, seed: int, substrate_name: str = DEFAULT) -> list[dict]:
    """T10, T12 and T13: 16 epochs on the old batch; exercise 6: the clip by advantage sign, and the same
    16 epochs (same warm start, same minibatches) with clip_high 0.28."""
    batch, old_logp = old_batch(base, tok, seed, substrate(substrate_name).family)
    mask = batch['action_mask']
    policy, critic, prepared = warmed_start(base, tok, seed, batch, substrate_name)
    wide, wide_critic = copy.deepcopy(policy), copy.deepcopy(critic)
    many = ppo_update(policy, critic, prepared, seed, MANY_EPOCHS, MANY_EPOCHS_MINIBATCHES)
    out = []
    for e in many:
        out += records('T10', f'epoch={e["epoch"] + 1}', {k: e[k] for k in ('clip_frac', 'approx_kl', 'ratio_max',
                                                                            'clip_frac_high', 'clip_frac_low')})
    out += records('T10', 'entropy', dict(before=policy_entropy(base, batch), after=policy_entropy(policy, batch)))
    diff = ((old_logp - batch['sample_logp']).abs() * mask).max()
    out += records('T12', 'old_logp', dict(max_abs_diff=diff, policy_tokens=mask.sum()))
    out += records('T12', 'bug', recomputed_old_logp(base, batch, prepared.advantages))
    ratio = log_ratio(policy, batch, old_logp).exp()  # [B, T-1] after 16 epochs
    out += records('T10', 'by_sign', clip_by_sign(ratio, prepared.advantages, mask, TrainConfig()))
    ppo_update(wide, wide_critic, prepared, seed, MANY_EPOCHS, MANY_EPOCHS_MINIBATCHES, CLIP_HIGHER)
    out += records('T10', 'entropy_clip_high', dict(after=policy_entropy(wide, batch)))
    out += records('T10', 'by_sign_clip_high', clip_by_sign(log_ratio(wide, batch, old_logp).exp(), prepared.advantages,
                                                            mask, TrainConfig(clip_high=CLIP_HIGHER)))
    return out + ratio_by_old_prob(ratio, old_logp, prepared.advantages, mask)


def clip_by_sign(ratio, adv, mask, config: TrainConfig) -> dict[str, float]:
    """Exercise 6: the share of positive-advantage tokens above 1 + clip_high and of negative-advantage
    tokens below 1 - clip_low (where the clip stops them), over the policy tokens; ratio, adv, mask [B, T-1]."""
    on = mask > 0
    positive, negative = on & (adv > 0), on & (adv < 0)
    share = lambda clipped, side: (clipped & side).sum().item() / side.sum().item() if side.any() else math.nan
    return dict(positive_tokens=positive.sum(), negative_tokens=negative.sum(),
                clip_frac_positive=share(ratio > 1 + config.clip_high, positive),
                clip_frac_negative=share(ratio < 1 - config.clip_low, negative))


def recomputed_old_logp(base: TinyAgent, batch: dict, adv: torch.Tensor) -> dict[str, float]:
    """Block 20's bug: 8 steps with old_logp = logp.detach() on 64 episodes -> the last step's stats."""
    policy, n = copy.deepcopy(base), BUG_EPISODES
    opt = adam(policy.parameters(), PPO_LR)
    for _ in range(BUG_STEPS):
        logp = sequence_log_probs(policy, batch['ids'][:n])
        loss, stats = ppo_policy_loss(logp, logp.detach(), adv[:n], batch['action_mask'][:n])
        opt.zero_grad()
        loss.backward()
        opt.step()
    return dict(clip_frac=stats['clip_frac'], approx_kl=stats['approx_kl'])


def ratio_by_old_prob(ratio, old_logp, adv, mask) -> list[dict]:
    """T13: positive-advantage tokens by pi_old bucket (how many, share above 1.2, median ratio, median absolute
    probability gain pi_theta - pi_old): ratio, old_logp, adv, mask [B, T-1] -> records."""
    old_p, out = old_logp.exp(), []
    for lo, hi in PROB_BUCKETS:
        good = (mask > 0) & (adv > 0) & (old_p >= lo) & (old_p < hi + 1e-6)
        r = ratio[good]
        empty = r.numel() == 0
        gain = old_p[good] * (r - 1)  # pi_theta - pi_old of each token: the absolute growth
        out += records('T13', f'pi_old={lo:.1f}-{hi:.1f}', dict(
            tokens=r.numel(), above_1_2=math.nan if empty else (r > 1.2).float().mean(),
            median_ratio=math.nan if empty else r.median(), median_gain=math.nan if empty else gain.median()))
    return out


def staleness(base: TinyAgent, tok: Tokenizer, seed: int, substrate_name: str = DEFAULT) -> list[dict]:
    """T11: one epoch on the old batch in 1 to 16 minibatches, then KL and clip fraction on the whole batch."""
    batch, _ = old_batch(base, tok, seed, substrate(substrate_name).family)
    start, critic, prepared = warmed_start(base, tok, seed, batch, substrate_name)  # one warmed critic for every split
    old_logp, adv = prepared.old_logp, prepared.advantages
    out = []
    for n in MINIBATCH_COUNTS:
        policy = copy.deepcopy(start)
        ppo_update(policy, copy.deepcopy(critic), prepared, seed, 1, n)
        with torch.no_grad():
            _, after = ppo_policy_loss(sequence_log_probs(policy, batch['ids']), old_logp, adv, batch['action_mask'])
        out += records('T11', f'minibatches={n}', dict(approx_kl=after['approx_kl'], clip_frac=after['clip_frac']))
    return out


EXPERIMENTS = dict(importance_weights=importance_weights, surrogate=surrogate, clip_gradients=clip_gradients,
                   trust_region=trust_region, sixteen_epochs=sixteen_epochs, staleness=staleness)


def run_experiment(name: str, base: TinyAgent, tok: Tokenizer, seed: int,
                   substrate_name: str = DEFAULT) -> tuple[list[dict], dict]:
    """Run one experiment by name on a substrate's tasks -> (records, summary of what it wrote and how long it took)."""
    if name not in EXPERIMENTS:
        raise ValueError(f'unknown experiment {name!r}; valid experiments: {", ".join(EXPERIMENTS)}')
    numerics.require()
    start = time.perf_counter()
    out = EXPERIMENTS[name](base, tok, seed, substrate_name)
    tables = sorted({r['table'] for r in out})
    summary = dict(experiment=name, seed=seed, records=len(out), tables=tables,
                   rows={t: len({r['row'] for r in out if r['table'] == t}) for t in tables},
                   wall_s=time.perf_counter() - start)
    return out, summary
