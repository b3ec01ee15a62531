"""The shared trainer's configuration: every ablation axis and every constant the chapter fixes.

Frozen and validated on construction: an out-of-range value raises a ValueError that names the
field, the value and what is allowed. The defaults are the chapter's `run_ppo`.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields

from ..world.substrates import DEFAULT as DEFAULT_SUBSTRATE, SUBSTRATES
from ..world.task_family import TaskFamily
from .algorithms import ALGORITHMS, WHITENING
from .losses import AGGREGATION_MODES

EARLY_STOP = ('epoch', 'minibatch')


@dataclass(frozen=True)
class TrainConfig:
    algorithm: str = 'ppo'
    gamma: float = 1.0
    lam: float = 1.0
    epochs: int = 4
    minibatches: int = 4
    clip_low: float = 0.2
    clip_high: float = 0.2
    dual_clip: float | None = None  # c > 1: the objective of A < 0 tokens is bounded below by c * A
    value_clip: float | None = 0.2
    target_kl: float | None = None  # early stopping on the k3 KL estimate
    early_stop: str = 'epoch'  # check the target after each epoch (the chapter) or each minibatch
    lr: float = 1e-3
    critic_lr: float = 1e-3
    iterations: int = 30
    episodes_per_iteration: int = 64
    max_grad_norm: float | None = 1.0  # the policy's gradient-norm clip
    loss_mode: str = 'token_mean'
    norm_const: float | None = None  # for loss_mode 'seq_mean_token_sum_norm'
    whiten_advantages: bool | str = True  # True: per batch; 'minibatch': per minibatch, before its loss; False: none
    critic_warmup_steps: int = 100
    critic_warmup_episodes_per_task: int = 24
    kl_penalty: float | None = None  # PPO-penalty (exercise 4): no clip, this initial beta; None: clipped PPO
    kl_penalty_target: float = 0.01  # beta doubles above 1.5x this KL and halves below it / 1.5
    eval_episodes_per_task: int = 16
    substrate: str = DEFAULT_SUBSTRATE  # the agent and tasks (agentrl/world/substrates.py)
    seed: int = 0

    def __post_init__(self):
        _choice('algorithm', self.algorithm, ALGORITHMS)
        _choice('early_stop', self.early_stop, EARLY_STOP)
        _choice('loss_mode', self.loss_mode, AGGREGATION_MODES)
        _choice('substrate', self.substrate, tuple(SUBSTRATES))
        whiten = self.whiten_advantages
        if not any(type(whiten) is type(level) and whiten == level for level in WHITENING):  # 1 == True: not `in`
            raise ValueError(f'whiten_advantages={whiten!r} is not allowed; expected one of '
                             f'{", ".join(map(repr, WHITENING))}')
        for name in ('gamma', 'lam'):
            _in_range(name, getattr(self, name), 0.0, 1.0, '[0, 1]')
        for name in ('epochs', 'minibatches', 'iterations', 'episodes_per_iteration', 'eval_episodes_per_task',
                     'critic_warmup_episodes_per_task'):
            _integer(name, getattr(self, name), minimum=1)
        _integer('critic_warmup_steps', self.critic_warmup_steps, minimum=0)
        _integer('seed', self.seed, minimum=0)
        if self.minibatches > self.episodes_per_iteration:
            raise ValueError(f'minibatches={self.minibatches} is more than episodes_per_iteration='
                             f'{self.episodes_per_iteration}; expected at most one minibatch per episode')
        for name in ('clip_low', 'clip_high', 'value_clip', 'max_grad_norm'):
            _in_range(name, getattr(self, name), 0.0, math.inf, '>= 0 (or None where optional)',
                      optional=name not in ('clip_low', 'clip_high'))
        for name in ('target_kl', 'kl_penalty'):
            _in_range(name, getattr(self, name), 0.0, math.inf, '> 0 or None', optional=True, open_low=True)
        _in_range('clip_low', self.clip_low, 0.0, 1.0, '[0, 1]')
        _in_range('dual_clip', self.dual_clip, 1.0, math.inf, '> 1 or None', optional=True, open_low=True)
        for name in ('lr', 'critic_lr', 'kl_penalty_target'):
            _in_range(name, getattr(self, name), 0.0, math.inf, '> 0', open_low=True)
        if self.loss_mode == 'seq_mean_token_sum_norm':
            _in_range('norm_const', self.norm_const, 0.0, math.inf, '> 0 for seq_mean_token_sum_norm', open_low=True)

    @property
    def task_family(self) -> TaskFamily:
        """The tasks and episode caps of the run's substrate."""
        return SUBSTRATES[self.substrate].family

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, values: dict) -> 'TrainConfig':
        """A config from a mapping; an unknown key raises a ValueError naming it."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f'unknown config key(s) {", ".join(unknown)}; expected some of {", ".join(sorted(known))}')
        return cls(**values)


def _choice(name, value, allowed):
    if value not in allowed:
        raise ValueError(f'{name}={value!r} is not allowed; expected one of {", ".join(allowed)}')


def _integer(name, value, minimum):
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise ValueError(f'{name}={value!r} is out of range; expected an integer >= {minimum}')


def _in_range(name, value, low, high, allowed, optional=False, open_low=False):
    if value is None and optional:
        return
    ok = (isinstance(value, (int, float)) and not isinstance(value, bool) and not math.isnan(value)
          and (value > low if open_low else value >= low) and value <= high)
    if not ok:
        raise ValueError(f'{name}={value!r} is out of range; expected {allowed}')
