"""A warmed critic on disk: computed once per seed, loaded by every PPO run of that seed (a DAG node).

The critic's warm-up (trainer.warm_critic) reads only the base agent, the seed, the substrate and the critic's
constants (agentrl.learning.algorithms.CRITIC_FIELDS). The file records them all; loading it for a run whose
base agent, seed or constants differ raises a ValueError that names the difference.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

import torch

from ..agent.model import Critic, TinyAgent, make_critic
from ..learning.algorithms import CRITIC_FIELDS
from ..learning.base_agent import save_atomically
from ..learning.config import TrainConfig

CRITIC_FORMAT = 1


def weights_digest(model: torch.nn.Module) -> str:
    """SHA-256 of a model's parameter names, shapes and bytes: equal for equal weights."""
    digest = hashlib.sha256()
    for name, tensor in model.state_dict().items():
        digest.update(f'{name}{tuple(tensor.shape)}{tensor.dtype}'.encode())
        digest.update(tensor.detach().contiguous().numpy().tobytes())
    return digest.hexdigest()


def critic_key(base: TinyAgent, config: TrainConfig) -> dict:
    """What decides a warmed critic: the file format, the base agent's weights, the seed and the critic's constants."""
    fields = ('seed', *CRITIC_FIELDS)
    return dict(format=CRITIC_FORMAT, base=weights_digest(base), **{f: getattr(config, f) for f in fields})


def save_critic(critic: Critic, base: TinyAgent, config: TrainConfig, path: Path | str) -> None:
    """Write the critic warmed from base under config to path, atomically."""
    save_atomically(dict(key=critic_key(base, config), state_dict=critic.state_dict()), Path(path))


def load_critic(path: Path | str, base: TinyAgent, config: TrainConfig) -> Critic:
    """The critic saved at path; a ValueError names each way it does not match base and config."""
    try:
        saved = torch.load(path, map_location='cpu', weights_only=True)
        key, state = saved['key'], saved['state_dict']
    except Exception as error:  # a missing or corrupt file fails in many ways; each means: do not use it
        raise ValueError(f'critic {path} is unusable ({type(error).__name__}: {error})') from error
    expected = critic_key(base, config)
    wrong = [f'{name}: file {key.get(name)!r}, run {value!r}' for name, value in expected.items()
             if key.get(name) != value]
    if wrong:
        what = ['another base agent' if w.startswith('base:') else w for w in wrong]
        raise ValueError(f'critic {path} was warmed for another run ({"; ".join(what)}); warm it again with '
                         f'`python -m agentrl warm-critic` for this config, seed and base agent')
    critic = make_critic(base)
    critic.load_state_dict(state)
    return critic
