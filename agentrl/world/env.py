"""BugFixEnv: one episode of one task, played through a small tool language.

Actions (one per turn, words separated by spaces):
    test                 -> 'pass', or 'fail a=1 b=2 Lk LINE': the first failing input and the
                            first line whose state differs from the reference program's
    edit Lk OLD NEW      -> 'ok Lk LINE' (the new line), replacing the first OLD at an editable
                            position of line k by NEW of the same kind
    submit               -> the episode ends; reward 1 if every test passes, else 0
Anything malformed gets 'error REASON' and costs its turn. A turn cap and a policy-token cap
end runaway episodes with reward 0.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .lang import Line, ProgramError, first_difference, replace_token, run, token_kind
from .tasks import Task, passes_all

_LINE_REF = re.compile(r'L(\d+)$')


@dataclass(frozen=True)
class Step:
    """The tool's answer to one action."""
    observation: str
    done: bool
    reward: float


class BugFixEnv:
    """A multi-turn episode: reset(task) -> prompt; step(action) -> Step."""

    def __init__(self, max_turns: int = 5, max_action_tokens: int = 6, max_policy_tokens: int = 32):
        if min(max_turns, max_action_tokens, max_policy_tokens) < 1 or max_action_tokens < 2:
            raise ValueError(f'caps must be positive and max_action_tokens >= 2, got max_turns={max_turns}, '
                             f'max_action_tokens={max_action_tokens}, max_policy_tokens={max_policy_tokens}')
        self.max_turns, self.max_action_tokens, self.max_policy_tokens = max_turns, max_action_tokens, max_policy_tokens
        self.task: Task | None = None

    def reset(self, task: Task) -> str:
        self.task, self.program = task, task.buggy_program
        self.turns, self.policy_tokens, self.done, self.reward = 0, 0, False, 0.0
        return task.prompt

    @property
    def token_budget(self) -> int:
        """Policy tokens the next action may use, its end-of-turn token included."""
        return min(self.max_action_tokens, self.max_policy_tokens - self.policy_tokens)

    def step(self, action: str) -> Step:
        """Apply one action; words are the action without its end-of-turn token."""
        if self.task is None or self.done:
            raise RuntimeError('step() needs reset() first and a running episode')
        words = action.split()
        self.turns += 1
        self.policy_tokens += min(len(words) + 1, self.token_budget)
        if len(words) >= self.max_action_tokens:
            observation = 'error long'
        elif words == ['submit']:
            return self._end(1.0 if passes_all(self.task, self.program) else 0.0)
        else:
            observation = self._act(words)
        if self.turns >= self.max_turns or self.policy_tokens >= self.max_policy_tokens:
            return self._end(0.0)
        return Step(observation, False, 0.0)

    def _end(self, reward: float) -> Step:
        self.done, self.reward = True, reward
        return Step('', True, reward)

    def _act(self, words: list[str]) -> str:
        if not words:
            return 'error empty'
        verb, args = words[0], words[1:]
        if verb not in ('test', 'edit', 'submit'):
            return 'error verb'
        if verb == 'test' and not args:
            return self._test()
        if verb != 'edit' or len(args) != 3 or not _LINE_REF.match(args[0]):
            return 'error parse'
        k = int(args[0][1:])
        if not 1 <= k <= len(self.program):
            return 'error line'
        return self._edit(k, args[1], args[2])

    def _test(self) -> str:
        for args, reference in zip(self.task.cases, self.task.reference_traces):
            value, trace = run(self.program, self.task.params, args)
            if value is None or value != reference[-1][1]:
                k = first_difference(trace, reference) + 1
                case = ' '.join(f'{name}={value}' for name, value in zip(self.task.params, args))
                return f'fail {case} L{k} {self.program[k - 1].text}'
        return 'pass'

    def _edit(self, k: int, old: str, new: str) -> str:
        line: Line = self.program[k - 1]
        if not any(line.words[i] == old for i in line.editable):
            return 'error token'
        if token_kind(new) != token_kind(old):
            return 'error kind'
        try:
            edited = replace_token(line, old, new)
        except ProgramError:
            return 'error parse'
        self.program = self.program[:k - 1] + (edited,) + self.program[k:]
        return f'ok L{k} {edited.text}'
