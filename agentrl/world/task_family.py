"""A task family: the BugFix tasks a substrate's agent plays (how many bugs each has) and the caps of its episodes,
with the context its model needs to hold the longest of them. Everything that samples, trains, evaluates or
pretrains takes its tasks, environments and tokenizer from a family (agentrl/world/substrates.py gives each substrate
one).
"""
from __future__ import annotations

import random
from dataclasses import dataclass

from .env import BugFixEnv
from .tasks import Task, check_bugs, make_tasks, random_task
from .tokenizer import Tokenizer, build_tokenizer


@dataclass(frozen=True)
class TaskFamily:
    """bugs per task; max_turns and max_policy_tokens, the env's caps; max_len, the model's context in tokens."""
    bugs: int = 1
    max_turns: int = 5
    max_policy_tokens: int = 32
    max_len: int = 160

    def __post_init__(self):
        check_bugs(self.bugs)

    def tasks(self, split: str) -> list[Task]:
        """The evaluation tasks of one split (tasks.make_tasks) with this family's bugs."""
        return make_tasks(split, self.bugs)

    def random_task(self, rng: random.Random, exclude: frozenset[tuple[str, ...]]) -> Task:
        """A pretraining program with this family's bugs (tasks.random_task)."""
        return random_task(rng, exclude, self.bugs)

    def new_env(self) -> BugFixEnv:
        """A fresh environment with this family's caps."""
        return BugFixEnv(max_turns=self.max_turns, max_policy_tokens=self.max_policy_tokens)

    def tokenizer(self) -> Tokenizer:
        """The tool language and every word of this family's prompts (tokenizer.build_tokenizer)."""
        return build_tokenizer(self.tasks('all'))
