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
    'make_base_agent': 'base_agent',
    'explained_variance': 'advantages', 'gae_advantages': 'advantages', 'outcome_rewards': 'advantages',
    'returns_to_go': 'advantages',
    'BugFixEnv': 'env', 'Step': 'env',
    'AGGREGATION_MODES': 'losses', 'aggregate_loss': 'losses', 'entropy_from_logits': 'losses',
    'masked_mean': 'losses', 'policy_gradient_step': 'losses', 'token_log_probs': 'losses',
    'Critic': 'model', 'KVCache': 'model', 'TinyAgent': 'model', 'TinyAgentConfig': 'model',
    'critic_values': 'model', 'make_critic': 'model',
    'ppo_policy_loss': 'ppo', 'value_loss': 'ppo',
    'Trajectory': 'sampler', 'collate': 'sampler', 'rollout_batch': 'sampler', 'rollout_stats': 'sampler',
    'sequence_log_probs': 'sampler',
    'SPLITS': 'tasks', 'Task': 'tasks', 'make_tasks': 'tasks',
    'Tokenizer': 'tokenizer', 'build_tokenizer': 'tokenizer',
    'TrainConfig': 'config',
    'RunResult': 'trainer', 'train': 'trainer',
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
