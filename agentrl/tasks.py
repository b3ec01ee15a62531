"""The BugFix tasks: 20 for training and 10 held out, each a tiny program with one wrong token.

The held-out tasks have names and bugs the training tasks do not. The task set is fixed text:
no randomness. `random_task` draws programs outside the set, for pretraining the base agent.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import random

from .lang import (COMPARISONS, OPERATORS, Line, candidate_repairs, parse_program, replace_token, run,
                   sample_repair, token_kind)
from .task_set import HELDOUT, TRAIN

SPLITS = ('all', 'train', 'heldout')

# Test inputs by arity: every program runs on all of them.
CASES = {
    2: ((0, 0), (1, 2), (2, 1), (3, 3), (4, 7), (6, 2), (5, 9), (9, 4)),
    3: ((0, 0, 0), (1, 2, 3), (3, 2, 1), (2, 2, 5), (4, 1, 7), (6, 3, 2), (9, 5, 4), (7, 8, 6)),
}


@dataclass(frozen=True)
class Task:
    """A named program (reference lines) and its bug: line `bug_line` (1-based) has `wrong` for `right`."""
    name: str
    params: tuple[str, ...]
    reference: tuple[str, ...]
    bug_line: int
    right: str
    wrong: str

    @cached_property
    def reference_program(self) -> tuple[Line, ...]:
        return parse_program(self.reference)

    @cached_property
    def buggy_program(self) -> tuple[Line, ...]:
        lines = list(self.reference_program)
        lines[self.bug_line - 1] = replace_token(lines[self.bug_line - 1], self.right, self.wrong)
        return tuple(lines)

    @property
    def cases(self) -> tuple[tuple[int, ...], ...]:
        return CASES[len(self.params)]

    @cached_property
    def reference_traces(self) -> tuple[list, ...]:
        return tuple(run(self.reference_program, self.params, args)[1] for args in self.cases)

    @property
    def fix(self) -> str:
        """The one-token repair as an action."""
        return f'edit L{self.bug_line} {self.wrong} {self.right}'

    @property
    def prompt(self) -> str:
        """The task as the agent first sees it."""
        lines = ' '.join(f'L{i} {line.text}' for i, line in enumerate(self.buggy_program, 1))
        return f'fix {self.name} {" ".join(self.params)} : {lines}'

    def repairs(self, program: tuple[Line, ...], line_index: int) -> list[tuple[str, str]]:
        """Plausible one-token edits of one line of a program (0-based line index)."""
        return candidate_repairs(program[line_index], scope(self.params, program, line_index))


def scope(params: tuple[str, ...], program: tuple[Line, ...], line_index: int) -> tuple[str, ...]:
    """Variables readable at a line: the parameters and every earlier target."""
    targets = tuple(line.target for line in program[:line_index] if line.target is not None)
    return tuple(dict.fromkeys(params + targets))


def make_tasks(split: str = 'all') -> list[Task]:
    """The tasks of one split: 'all' (30), 'train' (20) or 'heldout' (10)."""
    if split not in SPLITS:
        raise ValueError(f'unknown split {split!r}; expected one of {", ".join(SPLITS)}')
    train, heldout = [_task(*spec) for spec in TRAIN], [_task(*spec) for spec in HELDOUT]
    return {'all': train + heldout, 'train': train, 'heldout': heldout}[split]


def _task(name: str, params: str, reference: str, bug: tuple[int, str, str]) -> Task:
    return Task(name, tuple(params.split()), tuple(line.strip() for line in reference.split(';')), *bug)


def task_names() -> tuple[str, ...]:
    """Every task name, train then held-out."""
    return tuple(spec[0] for spec in TRAIN + HELDOUT)


def passes_all(task: Task, program: tuple[Line, ...]) -> bool:
    """True when a program returns the reference's value on every test input."""
    return all(run(program, task.params, args)[0] == trace[-1][1]
               for args, trace in zip(task.cases, task.reference_traces))


# Random programs for pretraining: 1 or 2 computing lines, then a return.


def _random_operand(readable: tuple[str, ...], rng: random.Random) -> str:
    return rng.choice(readable) if rng.random() < 0.7 else str(rng.randrange(10))


def _random_line(target: str, scope: tuple[str, ...], conditional: bool, rng: random.Random) -> str:
    expr = f'{rng.choice(scope)} {rng.choice(OPERATORS)} {_random_operand(scope, rng)}'
    if not conditional:
        return f'{target} = {expr}'
    left = rng.choice(scope)
    right = _random_operand(tuple(v for v in scope if v != left), rng)
    value = expr if rng.random() < 0.5 else _random_operand(scope, rng)
    return f'if {left} {rng.choice(COMPARISONS)} {right} then {target} = {value}'


def random_task(rng: random.Random, exclude: frozenset[tuple[str, ...]] = frozenset()) -> Task:
    """A random program with one detectable plausible bug, named after a random task; not in exclude."""
    names = task_names()
    while True:
        params = ('a', 'b') if rng.random() < 0.65 else ('a', 'b', 'c')
        readable, lines, target = params, [], 't'
        for _ in range(rng.randint(1, 2)):
            conditional = bool(lines) and rng.random() < 0.7
            target = rng.choice(('t', 'u')) if lines and not conditional else 't'
            lines.append(_random_line(target, readable, conditional, rng))
            readable = tuple(dict.fromkeys(readable + (target,)))
        lines.append(f'return {target}')
        if tuple(lines) in exclude:
            continue
        program = parse_program(lines)
        line_index = rng.randrange(len(program))
        edit = sample_repair(program[line_index], scope(params, program, line_index), rng)
        if edit is None:
            continue
        right, wrong = edit
        task = Task(rng.choice(names), params, tuple(lines), line_index + 1, right, wrong)
        if is_valid(task):
            return task


def is_valid(task: Task) -> bool:
    """The reference runs on every input, the bug fails one, and the task's fix repairs it."""
    try:
        buggy = task.buggy_program
        fixed = list(buggy)
        fixed[task.bug_line - 1] = replace_token(buggy[task.bug_line - 1], task.wrong, task.right)
    except ValueError:
        return False
    reference_ok = all(trace[-1][0] == 'return' for trace in task.reference_traces)
    return (reference_ok and not passes_all(task, buggy) and passes_all(task, tuple(fixed))
            and token_kind(task.wrong) is not None)
