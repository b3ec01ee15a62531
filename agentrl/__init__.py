"""agentrl: TinyAgent, the BugFix tasks and environment, the lockstep sampler, the losses and the PPO trainer.

Importing the package fixes the numeric libraries' code paths (agentrl.numerics) for torch, now or when torch is
imported, and nothing else: the names below load their module, and torch with it, on first use, so the pure modules
(numerics, files, algorithms) stay cheap and a process that never loads torch keeps its environment.
"""
from __future__ import annotations

import importlib

from . import numerics

numerics.apply_before_torch()
__version__ = '0.1.0'

_EXPORTS = {
    'make_base_agent': 'learning.base_agent',
    'explained_variance': 'learning.advantages', 'gae_advantages': 'learning.advantages',
    'outcome_rewards': 'learning.advantages',
    'returns_to_go': 'learning.advantages',
    'BugFixEnv': 'world.env', 'Step': 'world.env',
    'AGGREGATION_MODES': 'learning.losses', 'aggregate_loss': 'learning.losses',
    'entropy_from_logits': 'learning.losses',
    'masked_mean': 'learning.losses', 'policy_gradient_step': 'learning.losses', 'token_log_probs': 'agent.model',
    'Critic': 'agent.model', 'KVCache': 'agent.model', 'TinyAgent': 'agent.model', 'TinyAgentConfig': 'agent.model',
    'critic_values': 'agent.model', 'make_critic': 'agent.model',
    'ppo_policy_loss': 'learning.ppo', 'value_loss': 'learning.ppo',
    'Trajectory': 'agent.sampler', 'collate': 'agent.sampler', 'rollout_batch': 'agent.sampler',
    'rollout_stats': 'agent.sampler',
    'sequence_log_probs': 'agent.sampler',
    'SPLITS': 'world.tasks', 'Task': 'world.tasks', 'make_tasks': 'world.tasks',
    'Tokenizer': 'world.tokenizer', 'build_tokenizer': 'world.tokenizer',
    'TrainConfig': 'learning.config',
    'RunResult': 'learning.trainer', 'train': 'learning.trainer',
}
__all__ = ['numerics', *_EXPORTS]


def __getattr__(name: str):
    """The public API, each name from its module on first use (PEP 562)."""
    if name not in _EXPORTS:
        raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
    value = getattr(importlib.import_module(f'.{_EXPORTS[name]}', __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
