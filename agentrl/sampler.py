"""The lockstep sampler: many episodes at once, one token per episode per step, with a KV cache.

Every live episode advances by one token per step, so all rows share one cache position. A
row's next token is forced (prompt, tool answer) or sampled at temperature 1 (a policy token);
an episode that ends leaves the batch. One generator drives all randomness.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch

from .env import BugFixEnv
from .losses import token_log_probs
from .model import KVCache, TinyAgent
from .tasks import Task
from .tokenizer import Tokenizer


@dataclass
class Trajectory:
    """One episode's transcript: ids, and per token whether the policy sampled it and its log-prob."""
    task: Task
    ids: list[int]
    policy: list[bool]
    logps: list[float]
    reward: float = 0.0
    turns: int = 0
    actions: list[str] = field(default_factory=list)

    @property
    def policy_tokens(self) -> int:
        return sum(self.policy)


class _Episode:
    """Sampling state of one episode: its trajectory, forced tokens still to feed, the action so far."""

    def __init__(self, env: BugFixEnv, task: Task, tok: Tokenizer):
        self.env, self.tok = env, tok
        prompt = [tok.bos_id] + tok.encode(env.reset(task)) + [tok.eot_id]
        self.traj = Trajectory(task, prompt, [False] * len(prompt), [0.0] * len(prompt))
        self.forced: list[int] = []
        self.action: list[int] = []

    def take_sampled(self, token: int, logp: float) -> bool:
        """Record a policy token; on an action's end, play it. True when the episode is over."""
        self.traj.ids.append(token)
        self.traj.policy.append(True)
        self.traj.logps.append(logp)
        self.action.append(token)
        if token != self.tok.eot_id and len(self.action) < self.env.token_budget:
            return False
        text = self.tok.decode([t for t in self.action if t != self.tok.eot_id])
        step = self.env.step(text)
        self.traj.actions.append(text)
        self.traj.turns, self.traj.reward, self.action = self.env.turns, step.reward, []
        self.forced = [] if step.done else self.tok.encode(step.observation) + [self.tok.eot_id]
        return step.done

    def take_forced(self) -> int:
        token = self.forced.pop(0)
        self.traj.ids.append(token)
        self.traj.policy.append(False)
        self.traj.logps.append(0.0)
        return token


@torch.no_grad()
def rollout_batch(model: TinyAgent, envs: list[BugFixEnv], tasks: list[Task], tok: Tokenizer,
                  generator: torch.Generator | None = None) -> list[Trajectory]:
    """Sample one episode per (env, task) in lockstep at temperature 1 -> trajectories in input order."""
    if len(envs) != len(tasks):
        raise ValueError(f'rollout_batch needs one env per task, got {len(envs)} envs and {len(tasks)} tasks')
    episodes = [_Episode(env, task, tok) for env, task in zip(envs, tasks)]
    if not episodes:
        return []
    prefix = min(len(e.traj.ids) for e in episodes)
    for e in episodes:
        e.forced = e.traj.ids[prefix:]
        del e.traj.ids[prefix:], e.traj.policy[prefix:], e.traj.logps[prefix:]
    cache = KVCache(model.config, len(episodes))
    logits = model(torch.tensor([e.traj.ids for e in episodes]), cache)[:, -1]  # [B, V]
    live = episodes
    while live:
        to_sample, sampled = [row for row, e in enumerate(live) if not e.forced], {}
        if to_sample:
            rows = torch.tensor(to_sample)
            logp = torch.log_softmax(logits[rows], dim=-1)  # [B', V]
            draws = torch.multinomial(logp.exp(), 1, generator=generator)  # [B', 1]
            draw_logps = logp.gather(1, draws).squeeze(1).tolist()
            sampled = dict(zip(to_sample, zip(draws.squeeze(1).tolist(), draw_logps)))
        keep, next_ids = [], []
        for row, e in enumerate(live):
            if row in sampled:
                if e.take_sampled(*sampled[row]):
                    continue
                token = e.traj.ids[-1]
            else:
                token = e.take_forced()
            keep.append(row)
            next_ids.append(token)
        if not keep:
            break
        if len(keep) < len(live):
            cache.keep(torch.tensor(keep))
            live = [live[row] for row in keep]
        logits = model(torch.tensor(next_ids)[:, None], cache)[:, -1]
    return [e.traj for e in episodes]


def collate(trajs: list[Trajectory], pad_id: int) -> dict[str, torch.Tensor]:
    """Pad into ids [B, T]; action_mask, sample_logp [B, T-1] (position t predicts token t+1); rewards [B]."""
    T = max(len(t.ids) for t in trajs)
    ids = torch.full((len(trajs), T), pad_id, dtype=torch.long)
    policy = torch.zeros(len(trajs), T)
    logps = torch.zeros(len(trajs), T)
    for row, t in enumerate(trajs):
        ids[row, :len(t.ids)] = torch.tensor(t.ids)
        policy[row, :len(t.ids)] = torch.tensor(t.policy, dtype=torch.float)
        logps[row, :len(t.ids)] = torch.tensor(t.logps)
    return dict(ids=ids, action_mask=policy[:, 1:], sample_logp=logps[:, 1:],
                rewards=torch.tensor([t.reward for t in trajs]))


def sequence_log_probs(model: TinyAgent, ids: torch.Tensor) -> torch.Tensor:
    """Log-prob of each next token under the model (full forward): ids [B, T] -> [B, T-1]."""
    return token_log_probs(model(ids), ids)


def rollout_stats(trajs: list[Trajectory]) -> dict[str, float]:
    """Pass rate, mean policy tokens and mean turns per episode."""
    n = max(len(trajs), 1)
    return dict(pass_rate=sum(t.reward for t in trajs) / n,
                policy_tokens=sum(t.policy_tokens for t in trajs) / n,
                turns=sum(t.turns for t in trajs) / n,
                episodes=len(trajs))
