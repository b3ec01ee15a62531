"""Statistics of a policy's episodes, as design.md section 3 calibrates the base agent."""
from __future__ import annotations

import torch

from ..agent.model import TinyAgent
from ..agent.sampler import Trajectory, collate, rollout_stats
from ..learning.losses import entropy_from_logits, masked_mean
from ..world.env import BugFixEnv
from ..world.lang import edit_kind
from ..world.tasks import Task


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


def tasks_fixed_by(action: str, tasks: list[Task]) -> list[str]:
    """Names of the tasks that the one action, then submit, solves."""
    solved = []
    for task in tasks:
        env = BugFixEnv()
        env.reset(task)
        env.step(action)
        if not env.done and env.step('submit').reward == 1.0:
            solved.append(task.name)
    return solved


def task_set_statistics(tasks: list[Task]) -> dict:
    """Bugs per task, distinct repair actions, the most tasks one of them solves alone, and the bug lines and kinds,
    over every bug of every task."""
    fixes = sorted({fix for task in tasks for fix in task.fixes})
    return dict(bugs_per_task=sorted({len(task.bugs) for task in tasks}),
                distinct_repairs=len(fixes),
                most_fixed_by_one_repair=max(len(tasks_fixed_by(fix, tasks)) for fix in fixes),
                bug_lines=sorted({line for task in tasks for line, _, _ in task.bugs}),
                bug_kinds=sorted({edit_kind(right) for task in tasks for _, right, _ in task.bugs}))
