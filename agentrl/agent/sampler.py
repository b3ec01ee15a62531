"""The lockstep sampler: many episodes at once, one sampled token per episode per step, with a KV cache.

Each step, every live episode feeds the model the tokens it has not fed yet (its last sampled
token, and after an action the tool's answer) and samples its next policy token at temperature
1; the cache rows advance by different amounts. An episode that ends leaves the batch. One
generator drives all randomness.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from ..world.env import BugFixEnv
from ..world.tasks import Task
from ..world.tokenizer import Tokenizer
from .model import KVCache, TinyAgent, token_log_probs


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
    """Sampling state of one episode: its trajectory, the tokens not yet fed to the model, the action so far."""

    def __init__(self, env: BugFixEnv, task: Task, tok: Tokenizer):
        self.env, self.tok = env, tok
        prompt = [tok.bos_id] + tok.encode(env.reset(task)) + [tok.eot_id]
        self.traj = Trajectory(task, list(prompt), [False] * len(prompt), [0.0] * len(prompt))
        self.unfed, self.action = prompt, []

    def take_sampled(self, token: int, logp: float) -> bool:
        """Record a policy token; on an action's end, play it and queue the answer. True when the episode is over."""
        self._append([token], True, logp)
        self.action.append(token)
        self.unfed = [token]
        if token != self.tok.eot_id and len(self.action) < self.env.token_budget:
            return False
        text = self.tok.decode([t for t in self.action if t != self.tok.eot_id])
        step = self.env.step(text)
        self.traj.actions.append(text)
        self.traj.turns, self.traj.reward, self.action = self.env.turns, step.reward, []
        if not step.done:
            answer = self.tok.encode(step.observation) + [self.tok.eot_id]
            self._append(answer, False, 0.0)
            self.unfed += answer
        return step.done

    def _append(self, tokens: list[int], policy: bool, logp: float) -> None:
        self.traj.ids += tokens
        self.traj.policy += [policy] * len(tokens)
        self.traj.logps += [logp] * len(tokens)


@torch.no_grad()
def rollout_batch(model: TinyAgent, envs: list[BugFixEnv], tasks: list[Task], tok: Tokenizer,
                  generator: torch.Generator | None = None) -> list[Trajectory]:
    """Sample one episode per (env, task) in lockstep at temperature 1 -> trajectories in input order."""
    if len(envs) != len(tasks):
        raise ValueError(f'rollout_batch needs one env per task, got {len(envs)} envs and {len(tasks)} tasks')
    episodes = [_Episode(env, task, tok) for env, task in zip(envs, tasks)]
    cache = KVCache(model.config, len(episodes))
    live = episodes
    while live:
        counts = torch.tensor([len(e.unfed) for e in live])
        ids = torch.tensor([token for e in live for token in e.unfed])  # [N], row after row
        logp = torch.log_softmax(model.next_token_logits(ids, counts, cache), dim=-1)  # [B, V]
        draws = torch.multinomial(logp.exp(), 1, generator=generator)  # [B, 1]
        draw_logps = logp.gather(1, draws).squeeze(1).tolist()
        keep = [row for row, (e, token, lp) in enumerate(zip(live, draws.squeeze(1).tolist(), draw_logps))
                if not e.take_sampled(token, lp)]
        if len(keep) < len(live):
            live = [live[row] for row in keep]
            if live:
                cache.keep(torch.tensor(keep))
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


def sample_tasks(model: TinyAgent, tasks: list[Task], n_per_task: int, tok: Tokenizer, generator: torch.Generator,
                 new_env: Callable[[], BugFixEnv] = BugFixEnv) -> list[Trajectory]:
    """n_per_task episodes of each task, in lockstep, task-major order, each in an env from new_env (its task family's:
    TaskFamily.new_env)."""
    batch_tasks = [task for task in tasks for _ in range(n_per_task)]
    return rollout_batch(model, [new_env() for _ in batch_tasks], batch_tasks, tok, generator=generator)
