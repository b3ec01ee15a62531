"""Statistics of a policy's episodes, as design.md section 3 calibrates the base agent."""
from __future__ import annotations

import torch

from .env import BugFixEnv
from .losses import entropy_from_logits, masked_mean
from .model import TinyAgent
from .sampler import Trajectory, collate, rollout_batch, rollout_stats
from .tasks import Task
from .tokenizer import Tokenizer


def sample_tasks(model: TinyAgent, tasks: list[Task], n_per_task: int, tok: Tokenizer,
                 generator: torch.Generator) -> list[Trajectory]:
    """n_per_task episodes of each task, in lockstep, task-major order."""
    batch_tasks = [task for task in tasks for _ in range(n_per_task)]
    return rollout_batch(model, [BugFixEnv() for _ in batch_tasks], batch_tasks, tok, generator=generator)


@torch.no_grad()
def episode_statistics(model: TinyAgent, trajs: list[Trajectory], pad_id: int) -> dict[str, float]:
    """Pass rate, policy tokens per episode and their spread, and the policy-token entropy."""
    batch = collate(trajs, pad_id)
    lengths = batch['action_mask'].sum(-1)  # [B] policy tokens per episode
    entropy = masked_mean(entropy_from_logits(model(batch['ids'])[:, :-1]), batch['action_mask'])
    return dict(rollout_stats(trajs), entropy=entropy.item(),
                under_8=(lengths < 8).float().mean().item(),
                at_least_16=(lengths >= 16).float().mean().item(),
                max_policy_tokens=int(lengths.max()))


def per_task_pass_rates(trajs: list[Trajectory]) -> dict[str, float]:
    """Pass rate of each task over its episodes, in first-seen task order."""
    rewards: dict[str, list[float]] = {}
    for traj in trajs:
        rewards.setdefault(traj.task.name, []).append(traj.reward)
    return {name: sum(r) / len(r) for name, r in rewards.items()}
