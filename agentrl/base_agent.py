"""The base agent: TinyAgent pretrained on noisy demonstrations, cached on disk under a content key.

Demonstrations are sure of the action format and unsure of the repair: some submit at once,
some test first, about half attempt a repair, each attempt a uniformly chosen plausible
one-token edit of the hinted line. They play tasks outside the 30 evaluation tasks, and the
loss is on policy tokens only. RL then amplifies the repairs the base agent sometimes makes.
"""
from __future__ import annotations

import hashlib
import json
import os
import random
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch

from .env import BugFixEnv
from .lang import Line, sample_repair
from .losses import masked_mean, token_log_probs
from .model import TinyAgent, TinyAgentConfig
from .tasks import Task, make_tasks, random_task, scope
from .tokenizer import Tokenizer

CACHE_FORMAT = 1


@dataclass(frozen=True)
class DemoPolicy:
    """Probabilities of the demonstrator's choices, by what it last saw."""
    submit_first: float = 0.28  # at the prompt: submit at once
    edit_first: float = 0.12  # at the prompt: edit a guessed line without testing
    edit_after_fail: float = 0.85  # after the first failing test: attempt a repair (else submit)
    retry_after_fail: float = 0.70  # after a failing test that follows an edit
    test_after_edit: float = 0.80  # after an edit: test it (else submit)
    correct: float = 0.40  # an attempt is the repair (else a uniformly chosen plausible edit)


@dataclass(frozen=True)
class PretrainConfig:
    steps: int = 1600
    batch_size: int = 32
    lr: float = 3e-3
    seed: int = 0
    demos: DemoPolicy = field(default_factory=DemoPolicy)


def _demo_action(env: BugFixEnv, last: str, edited: bool, policy: DemoPolicy, rng: random.Random) -> str:
    """The demonstrator's next action given the tool's last answer."""
    task, program = env.task, env.program
    if last == 'prompt':
        u = rng.random()
        if u < policy.submit_first:
            return 'submit'
        line = rng.randrange(len(program)) if u < policy.submit_first + policy.edit_first else None
    elif last.startswith('fail'):
        if rng.random() >= (policy.retry_after_fail if edited else policy.edit_after_fail):
            return 'submit'
        line = int(next(w for w in last.split() if w.startswith('L'))[1:]) - 1
    elif last.startswith('ok'):
        return 'test' if rng.random() < policy.test_after_edit else 'submit'
    else:  # 'pass'
        return 'submit'
    if line is None:
        return 'test'
    repair = _repair(program[line], task.reference_program[line])
    if repair is None or rng.random() >= policy.correct:
        repair = sample_repair(program[line], scope(task.params, program, line), rng)
    return f'edit L{line + 1} {repair[0]} {repair[1]}'


def _repair(line: Line, reference: Line) -> tuple[str, str] | None:
    """The edit (old, new) that restores a line's first differing token, if the line differs."""
    return next(((w, r) for w, r in zip(line.words, reference.words) if w != r), None)


def demonstration(task: Task, tok: Tokenizer, policy: DemoPolicy, rng: random.Random) -> tuple[list[int], list[bool]]:
    """One demonstrated episode -> (token ids [T], policy flags [T])."""
    env = BugFixEnv()
    ids = [tok.bos_id] + tok.encode(env.reset(task)) + [tok.eot_id]
    flags = [False] * len(ids)
    last, edited = 'prompt', False
    while not env.done:
        action = _demo_action(env, last, edited, policy, rng)
        edited = edited or action.startswith('edit')
        step = env.step(action)
        ids += tok.encode(action) + [tok.eot_id]
        flags += [True] * (len(action.split()) + 1)
        if not step.done:
            ids += tok.encode(step.observation) + [tok.eot_id]
            flags += [False] * (len(step.observation.split()) + 1)
            last = step.observation
    return ids, flags


def _pad(rows: list[list], value) -> torch.Tensor:
    width = max(len(r) for r in rows)
    return torch.tensor([r + [value] * (width - len(r)) for r in rows])


def pretrain(tok: Tokenizer, model_config: TinyAgentConfig, config: PretrainConfig, log=None) -> TinyAgent:
    """Supervised learning on demonstrations, on one thread, deterministically."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with torch.random.fork_rng():
            torch.manual_seed(config.seed)
            model = TinyAgent(model_config)
        rng = random.Random(config.seed)
        exclude = frozenset(task.reference for task in make_tasks('all'))
        opt = torch.optim.Adam(model.parameters(), lr=config.lr)
        schedule = torch.optim.lr_scheduler.LambdaLR(
            opt, lambda step: min(1.0, (step + 1) / 50) * (0.1 + 0.9 * (1 - step / config.steps)))
        for step in range(config.steps):
            demos = [demonstration(random_task(rng, exclude), tok, config.demos, rng)
                     for _ in range(config.batch_size)]
            ids = _pad([d[0] for d in demos], tok.pad_id)
            mask = _pad([d[1] for d in demos], False)[:, 1:].float()  # [B, T-1]
            loss = -masked_mean(token_log_probs(model(ids), ids), mask)
            opt.zero_grad()
            loss.backward()
            opt.step()
            schedule.step()
            if log and (step % 200 == 0 or step == config.steps - 1):
                log(f'pretrain step {step:4d} | loss {loss.item():.4f}')
    finally:
        torch.set_num_threads(threads)
    return model.eval()


# Modules whose code decides the demonstrations or the model: their source is part of the cache key.
_SOURCES = ('lang.py', 'tasks.py', 'env.py', 'model.py', 'base_agent.py')


def cache_key(tok: Tokenizer, model_config: TinyAgentConfig, config: PretrainConfig) -> str:
    """Hash of everything that decides the weights: tasks, vocabulary, configs and the code that uses them."""
    tasks = [[t.name, t.params, t.reference, t.bug_line, t.right, t.wrong] for t in make_tasks('all')]
    code = hashlib.sha256(b''.join((Path(__file__).parent / name).read_bytes() for name in _SOURCES)).hexdigest()
    blob = json.dumps(dict(format=CACHE_FORMAT, tasks=tasks, vocab=tok.vocab, model=model_config.to_dict(),
                           pretrain=asdict(config), code=code, torch=torch.__version__.split('+')[0]),
                      sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def default_cache_dir() -> Path:
    return Path(os.environ.get('AGENTRL_CACHE_DIR', Path.home() / '.cache' / 'agentrl'))


def _load(path: Path, key: str, model_config: TinyAgentConfig) -> TinyAgent | None:
    """The cached model, or None (with a message) when the file is missing, corrupt or mismatched."""
    if not path.exists():
        return None
    try:
        saved = torch.load(path, map_location='cpu', weights_only=True)
        if saved.get('key') != key:
            raise ValueError(f'its key {saved.get("key")!r} is not the expected {key!r}')
        model = TinyAgent(model_config)
        model.load_state_dict(saved['state_dict'])
    except Exception as error:  # a corrupt file can fail in many ways; every one means rebuild
        print(f'agentrl: base-agent cache {path} is unusable ({type(error).__name__}: {error}); rebuilding',
              file=sys.stderr)
        return None
    return model.eval()


def save_atomically(obj, path: Path) -> None:
    """torch.save to a temporary file in the same folder, then rename over path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f'.{path.name}.', suffix='.tmp')
    os.close(fd)
    try:
        torch.save(obj, tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def base_agent_path(tok: Tokenizer, cache_dir: Path | str | None = None,
                    model_config: TinyAgentConfig | None = None, config: PretrainConfig = PretrainConfig()) -> Path:
    """Where the base agent of this tokenizer and these configs is cached."""
    key = cache_key(tok, model_config or TinyAgentConfig(vocab_size=len(tok)), config)
    return Path(cache_dir or default_cache_dir()) / f'base-agent-{key}.pt'


def make_base_agent(tok: Tokenizer, cache_dir: Path | str | None = None,
                    model_config: TinyAgentConfig | None = None,
                    config: PretrainConfig = PretrainConfig()) -> TinyAgent:
    """The pretrained base agent: loaded from the cache, or trained once and cached."""
    model_config = model_config or TinyAgentConfig(vocab_size=len(tok))
    key = cache_key(tok, model_config, config)
    path = base_agent_path(tok, cache_dir, model_config, config)
    model = _load(path, key, model_config)
    if model is None:
        start = time.perf_counter()
        model = pretrain(tok, model_config, config, log=lambda line: print(f'agentrl: {line}', file=sys.stderr))
        save_atomically(dict(key=key, state_dict=model.state_dict()), path)
        print(f'agentrl: base agent trained in {time.perf_counter() - start:.0f} s, cached at {path}',
              file=sys.stderr)
    return model
