"""The base agent: TinyAgent pretrained on demonstrations (demos.py), cached on disk under a content key."""
from __future__ import annotations

import hashlib
import json
import sys
import time
from dataclasses import asdict
from pathlib import Path

import torch

from ..agent.model import TinyAgent, TinyAgentConfig
from ..files import default_cache_dir, write_file
from ..numerics import NUMERICS_VERSION
from ..world.substrates import DEFAULT, PretrainConfig, substrate
from ..world.task_family import TaskFamily
from ..world.tokenizer import Tokenizer
from .demos import pretrain

CACHE_FORMAT = 1


# Modules whose code decides the demonstrations or the model (paths below agentrl/): their source is part of
# the cache key.
_SOURCES = ('world/lang.py', 'world/tasks.py', 'world/env.py', 'world/tokenizer.py', 'agent/model.py',
            'learning/losses.py', 'learning/demos.py', 'world/task_family.py', 'agent/matmul.py', 'agent/matmul.cpp')


def cache_key(tok: Tokenizer, model_config: TinyAgentConfig, config: PretrainConfig,
              family: TaskFamily = TaskFamily()) -> str:
    """Hash of everything that decides the weights: what pretraining reads of the tasks (their names,
    and their programs, which it excludes), the vocabulary, the configs and the code that uses them; and the
    task family, where it is not the default one (the default's key hashes what it did before families)."""
    tasks = [[t.name, t.reference] for t in family.tasks('all')]
    code = hashlib.sha256(b''.join((Path(__file__).parents[1] / name).read_bytes() for name in _SOURCES)).hexdigest()
    inputs = dict(format=CACHE_FORMAT, tasks=tasks, vocab=tok.vocab, model=model_config.to_dict(),
                  pretrain=asdict(config), code=code, torch=torch.__version__.split('+')[0], numerics=NUMERICS_VERSION)
    if family != TaskFamily():
        inputs['family'] = asdict(family)
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()[:20]


def _checked_load(path: Path, key: str, model_config: TinyAgentConfig) -> TinyAgent:
    """The saved model at path, or a ValueError saying why it cannot be used."""
    try:
        saved = torch.load(path, map_location='cpu', weights_only=True)
        if saved.get('key') != key:
            raise ValueError(f'its key {saved.get("key")!r} is not the expected {key!r}')
        model = TinyAgent(model_config)
        model.load_state_dict(saved['state_dict'])
    except Exception as error:  # a corrupt file can fail in many ways; each one means: do not use it
        raise ValueError(f'base agent {path} is unusable ({type(error).__name__}: {error})') from error
    return model.eval()


def _load(path: Path, key: str, model_config: TinyAgentConfig) -> TinyAgent | None:
    """The cached model, or None (with a message) when the file is missing, corrupt or mismatched."""
    if not path.exists():
        return None
    try:
        return _checked_load(path, key, model_config)
    except ValueError as error:
        print(f'agentrl: {error}; rebuilding', file=sys.stderr)
        return None


def base_model_config(tok: Tokenizer, name: str = DEFAULT) -> TinyAgentConfig:
    """The base agent's model config on substrate `name` (agentrl/world/substrates.py)."""
    return TinyAgentConfig(vocab_size=len(tok), **substrate(name).model_fields())


def _config_and_key(tok: Tokenizer, name: str = DEFAULT,
                    config: PretrainConfig | None = None) -> tuple[TinyAgentConfig, str]:
    """The model config of this tokenizer on substrate `name` and the cache key of its base agent pretrained with
    config (None: the substrate's, Substrate.pretrain_config)."""
    model_config = base_model_config(tok, name)
    return model_config, cache_key(tok, model_config, config or substrate(name).pretrain_config(),
                                   substrate(name).family)


def load_base_agent(path: Path | str, tok: Tokenizer, name: str = DEFAULT) -> TinyAgent:
    """A base agent of substrate `name` exported with save_base_agent; a stale, corrupt or other substrate's file
    raises ValueError."""
    model_config, key = _config_and_key(tok, name)
    return _checked_load(Path(path), key, model_config)


def save_base_agent(model: TinyAgent, tok: Tokenizer, path: Path | str, name: str = DEFAULT) -> None:
    """Export substrate `name`'s base agent to a fixed path (the workflow's DAG node), atomically."""
    _save(model, _config_and_key(tok, name)[1], Path(path))


def _save(model: TinyAgent, key: str, path: Path) -> None:
    save_atomically(dict(key=key, state_dict=model.state_dict()), path)


def save_atomically(obj, path: Path) -> None:
    """torch.save(obj) to path, atomically (agentrl.files.write_file: identical weights, identical bytes)."""
    write_file(path, lambda f: torch.save(obj, f))


def base_agent_path(tok: Tokenizer, cache_dir: Path | str | None = None, name: str = DEFAULT,
                    config: PretrainConfig | None = None) -> Path:
    """Where the base agent of this tokenizer, substrate `name` and pretraining config (None: the substrate's) is
    cached."""
    return _cache_path(_config_and_key(tok, name, config)[1], cache_dir)


def _cache_path(key: str, cache_dir: Path | str | None) -> Path:
    return Path(cache_dir or default_cache_dir()) / f'base-agent-{key}.pt'


def make_base_agent(tok: Tokenizer, cache_dir: Path | str | None = None, name: str = DEFAULT,
                    config: PretrainConfig | None = None) -> TinyAgent:
    """The pretrained base agent of substrate `name` (pretrained with config; None: the substrate's): loaded from the
    cache, or trained once and cached."""
    config = config or substrate(name).pretrain_config()
    model_config, key = _config_and_key(tok, name, config)
    path = _cache_path(key, cache_dir)
    model = _load(path, key, model_config)
    if model is None:
        start = time.perf_counter()
        model = pretrain(tok, model_config, config, log=lambda line: print(f'agentrl: {line}', file=sys.stderr),
                         family=substrate(name).family)
        _save(model, key, path)
        print(f'agentrl: base agent trained in {time.perf_counter() - start:.0f} s, cached at {path}',
              file=sys.stderr)
    return model
