"""Pretraining the base agent: noisy demonstrations and supervised learning on them.

Demonstrations are sure of the action format and unsure of the repair: some submit at once,
some test first, about half attempt a repair and nearly all of those retry after a failing test
(the retries make the long episodes), each attempt the true repair with probability `correct`,
else a plausible one-token edit of the hinted line drawn kind-first. They play tasks outside the
30 evaluation tasks, with the bugs per task and in the env of the substrate's task family, and the
loss is on policy tokens only. RL then amplifies the repairs the base agent sometimes makes.
"""
from __future__ import annotations

import random

import torch

from .. import numerics
from ..agent.model import TinyAgent, TinyAgentConfig, token_log_probs
from ..world.env import BugFixEnv
from ..world.lang import Line, sample_repair
from ..world.substrates import DemoPolicy, PretrainConfig
from ..world.task_family import TaskFamily
from ..world.tasks import Task, scope
from ..world.tokenizer import Tokenizer
from .losses import adam, masked_mean


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
        line = int(next(w for w in last.split() if w[0] == 'L')[1:]) - 1
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


def demonstration(task: Task, tok: Tokenizer, policy: DemoPolicy, rng: random.Random,
                  env: BugFixEnv) -> tuple[list[int], list[bool]]:
    """One demonstrated episode in env (reset here) -> (token ids [T], policy flags [T])."""
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


def pretrain(tok: Tokenizer, model_config: TinyAgentConfig, config: PretrainConfig, log=None,
             family: TaskFamily = TaskFamily()) -> TinyAgent:
    """Supervised learning on demonstrations of the family's random tasks, on one thread, deterministically."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        numerics.require()
        with torch.random.fork_rng():
            torch.manual_seed(config.seed)
            model = TinyAgent(model_config)
        rng = random.Random(config.seed)
        exclude = frozenset(task.reference for task in family.tasks('all'))
        opt = adam(model.parameters(), config.lr)
        schedule = torch.optim.lr_scheduler.LambdaLR(
            opt, lambda step: min(1.0, (step + 1) / 50) * (0.1 + 0.9 * (1 - step / config.steps)))
        for step in range(config.steps):
            demos = [demonstration(family.random_task(rng, exclude), tok, config.demos, rng, family.new_env())
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
