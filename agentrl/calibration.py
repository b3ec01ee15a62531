"""Statistics of a policy's episodes, as design.md section 3 calibrates the base agent."""
from __future__ import annotations

import torch

from .env import BugFixEnv
from .lang import edit_kind
from .losses import entropy_from_logits, masked_mean
from .model import TinyAgent
from .sampler import Trajectory, collate, rollout_stats
from .tasks import Task


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


def repair_kind(task: Task) -> str:
    """The kind of a task's bug: 'variable', 'constant', 'operator' or 'comparison'."""
    return edit_kind(task.right)


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
    """Distinct repair actions, the most tasks one of them solves, and the bug lines and kinds."""
    fixes = sorted({task.fix for task in tasks})
    return dict(distinct_repairs=len(fixes),
                most_fixed_by_one_repair=max(len(tasks_fixed_by(fix, tasks)) for fix in fixes),
                bug_lines=sorted({task.bug_line for task in tasks}),
                bug_kinds=sorted({repair_kind(task) for task in tasks}))
