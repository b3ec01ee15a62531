"""The BugFix tasks: 20 for training and 10 held out, each a tiny program with one wrong token (or more).

The held-out tasks have names and bugs the training tasks do not. The task set is fixed text:
no randomness. `random_task` draws programs outside the set, for pretraining the base agent.

With bugs=2 each task keeps its bug (task_set.py) and gets a second one by a fixed rule: the first
candidate, in this order, that leaves a valid task (each bug matters, both fixes together pass)
which no single edit action repairs, else the first valid one: kind by kind as the base agent
repairs them most (variable, operator, comparison, constant), then line by line from line 1 (the
first bug's line skipped), then the line's plausible edits of that kind in `candidate_repairs`
order. Only pick, limit and cap keep a second bug that one edit repairs: on their test inputs the
reference returns b, so an edit of the return to b repairs them whatever their bugs. No randomness:
the two-bug set is fixed text too.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache, cached_property

import random

from .lang import (COMPARISONS, CONSTANTS, OPERATORS, VARIABLES, Line, candidate_repairs, edit_kind, parse_program,
                   replace_token, run, sample_repair, token_kind)
from .task_set import HELDOUT, TRAIN

SPLITS = ('all', 'train', 'heldout')
BUG_COUNTS = (1, 2)
SECOND_BUG_KINDS = ('variable', 'operator', 'comparison', 'constant')  # most often repaired by the base agent first
# What an edit action may put in place of an editable word, by the word's kind (env.py's edit).
SAME_KIND = {'operand': VARIABLES + CONSTANTS, 'operator': OPERATORS, 'comparison': COMPARISONS}

# Test inputs by arity: every program runs on all of them.
CASES = {
    2: ((0, 0), (1, 2), (2, 1), (3, 3), (4, 7), (6, 2), (5, 9), (9, 4)),
    3: ((0, 0, 0), (1, 2, 3), (3, 2, 1), (2, 2, 5), (4, 1, 7), (6, 3, 2), (9, 5, 4), (7, 8, 6)),
}


@dataclass(frozen=True)
class Task:
    """A named program (reference lines) and its bug: line `bug_line` (1-based) has `wrong` for `right`;
    more_bugs: further (line, right, wrong) bugs, each on a line of its own."""
    name: str
    params: tuple[str, ...]
    reference: tuple[str, ...]
    bug_line: int
    right: str
    wrong: str
    more_bugs: tuple[tuple[int, str, str], ...] = ()

    @cached_property
    def reference_program(self) -> tuple[Line, ...]:
        return parse_program(self.reference)

    @property
    def bugs(self) -> tuple[tuple[int, str, str], ...]:
        """Every bug as (line, right, wrong), the first one first."""
        return ((self.bug_line, self.right, self.wrong),) + self.more_bugs

    @cached_property
    def buggy_program(self) -> tuple[Line, ...]:
        return edited(self.reference_program, self.bugs)  # each (line, right, wrong): right -> wrong

    @property
    def cases(self) -> tuple[tuple[int, ...], ...]:
        return CASES[len(self.params)]

    @cached_property
    def reference_traces(self) -> tuple[list, ...]:
        return tuple(run(self.reference_program, self.params, args)[1] for args in self.cases)

    @property
    def fix(self) -> str:
        """The first bug's one-token repair as an action."""
        return self.fixes[0]

    @property
    def fixes(self) -> tuple[str, ...]:
        """Every bug's one-token repair as an action, the first bug's first."""
        return tuple(f'edit L{k} {wrong} {right}' for k, right, wrong in self.bugs)

    @property
    def prompt(self) -> str:
        """The task as the agent first sees it."""
        lines = ' '.join(f'L{i} {line.text}' for i, line in enumerate(self.buggy_program, 1))
        return f'fix {self.name} {" ".join(self.params)} : {lines}'

    def repairs(self, program: tuple[Line, ...], line_index: int) -> list[tuple[str, str]]:
        """Plausible one-token edits of one line of a program (0-based line index)."""
        return candidate_repairs(program[line_index], scope(self.params, program, line_index))


def edited(program: tuple[Line, ...], edits) -> tuple[Line, ...]:
    """The program with each (line, old, new) of edits applied (1-based lines); ProgramError if one cannot be."""
    lines = list(program)
    for k, old, new in edits:
        lines[k - 1] = replace_token(lines[k - 1], old, new)
    return tuple(lines)


def scope(params: tuple[str, ...], program: tuple[Line, ...], line_index: int) -> tuple[str, ...]:
    """Variables readable at a line: the parameters and every earlier target."""
    targets = tuple(line.target for line in program[:line_index] if line.target is not None)
    return tuple(dict.fromkeys(params + targets))


def make_tasks(split: str = 'all', bugs: int = 1) -> list[Task]:
    """The tasks of one split: 'all' (30), 'train' (20) or 'heldout' (10), each with `bugs` bugs (1 or 2)."""
    if split not in SPLITS:
        raise ValueError(f'unknown split {split!r}; expected one of {", ".join(SPLITS)}')
    check_bugs(bugs)
    every = [_task(*spec) for spec in TRAIN + HELDOUT] if bugs == 1 else list(_two_bug_tasks())
    return {'all': every, 'train': every[:len(TRAIN)], 'heldout': every[len(TRAIN):]}[split]


@cache
def _two_bug_tasks() -> tuple[Task, ...]:
    """Every task with its second bug, train then held-out (computed once: the rule plays many programs)."""
    return tuple(with_second_bug(task) for task in make_tasks('all'))


def check_bugs(bugs: int) -> None:
    """A ValueError naming a bug count other than those allowed (BUG_COUNTS)."""
    if bugs not in BUG_COUNTS:
        raise ValueError(f'bugs={bugs!r} is not allowed; expected one of {", ".join(map(str, BUG_COUNTS))}')


def with_second_bug(task: Task) -> Task:
    """The task with a second bug by the module's rule: of the valid candidates (by kind, then line, then edit) the
    first that no single edit repairs, else the first."""
    valid = [candidate for kind in SECOND_BUG_KINDS for candidate in _second_bugs(task, kind) if is_valid(candidate)]
    if not valid:
        raise ValueError(f'task {task.name!r} has no valid second bug')
    return next((candidate for candidate in valid if not one_edit_repairs(candidate)), valid[0])


def _second_bugs(task: Task, kind: str):
    """Tasks with one more bug of this kind, line by line, on every line but the bugs' ones."""
    program, taken = task.reference_program, {k for k, _, _ in task.bugs}
    for index, line in enumerate(program):
        if index + 1 in taken:
            continue
        for right, wrong in candidate_repairs(line, scope(task.params, program, index)):
            if edit_kind(right) == kind:
                yield replace(task, more_bugs=task.more_bugs + ((index + 1, right, wrong),))


def one_edit_repairs(task: Task) -> bool:
    """True when a single edit action makes the buggy program pass every test."""
    return any(passes_all(task, program) for program in _one_edit_away(task.buggy_program))


def _one_edit_away(program: tuple[Line, ...]):
    """Every program one edit action away: some line's editable word replaced by another word of its kind."""
    for index, line in enumerate(program):
        for old in dict.fromkeys(line.words[i] for i in line.editable):
            for new in SAME_KIND[token_kind(old)]:
                if new != old:
                    yield edited(program, [(index + 1, old, new)])


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


def random_task(rng: random.Random, exclude: frozenset[tuple[str, ...]] = frozenset(), bugs: int = 1) -> Task:
    """A random program with `bugs` detectable plausible bugs on distinct lines, named after a random task;
    not in exclude. It has `bugs` or `bugs` + 1 computing lines, then a return."""
    check_bugs(bugs)
    names = task_names()
    while True:
        params = ('a', 'b') if rng.random() < 0.65 else ('a', 'b', 'c')
        readable, lines, target = params, [], 't'
        for _ in range(rng.randint(bugs, bugs + 1)):
            conditional = bool(lines) and rng.random() < 0.7
            target = rng.choice(('t', 'u')) if lines and not conditional else 't'
            lines.append(_random_line(target, readable, conditional, rng))
            readable = tuple(dict.fromkeys(readable + (target,)))
        lines.append(f'return {target}')
        if tuple(lines) in exclude:
            continue
        program = parse_program(lines)
        indices = sorted(rng.sample(range(len(program)), bugs))
        edits = [sample_repair(program[i], scope(params, program, i), rng) for i in indices]
        if None in edits:
            continue
        (first, (right, wrong)), *more = zip(indices, edits)
        task = Task(rng.choice(names), params, tuple(lines), first + 1, right, wrong,
                    tuple((i + 1, r, w) for i, (r, w) in more))
        if is_valid(task):
            return task


def is_valid(task: Task) -> bool:
    """The bugs sit on distinct lines and are editable words, the reference runs on every input, the buggy program
    fails one, so does every program with all fixes but one (each bug matters), and all fixes together repair it."""
    lines = [k for k, _, _ in task.bugs]
    if len(set(lines)) < len(lines) or any(token_kind(wrong) is None for _, _, wrong in task.bugs):
        return False
    try:
        buggy = task.buggy_program
        fixes = [(k, wrong, right) for k, right, wrong in task.bugs]
        fixed = edited(buggy, fixes)
        all_but_one = [edited(buggy, fixes[:i] + fixes[i + 1:]) for i in range(len(fixes))]
    except ValueError:
        return False
    reference_ok = all(trace[-1][0] == 'return' for trace in task.reference_traces)
    return (reference_ok and not any(passes_all(task, program) for program in all_but_one)
            and passes_all(task, fixed))
