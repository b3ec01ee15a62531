"""What the base agent's pretraining is given: the demonstrator's choice probabilities and the supervised run's
constants (agentrl/demos.py runs it). Pure data: a substrate (agentrl/substrates.py) names its own demonstrator.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class DemoPolicy:
    """Probabilities of the demonstrator's choices, by what it last saw."""
    submit_first: float = 0.40  # at the prompt: submit at once
    edit_first: float = 0.12  # at the prompt: edit a guessed line without testing
    edit_after_fail: float = 0.85  # after the first failing test: attempt a repair (else submit)
    retry_after_fail: float = 0.95  # after a failing test that follows an edit
    test_after_edit: float = 0.95  # after an edit: test it (else submit)
    correct: float = 0.60  # an attempt is the repair (else a uniformly chosen plausible edit)


@dataclass(frozen=True)
class PretrainConfig:
    steps: int = 1600
    batch_size: int = 32
    lr: float = 3e-3
    seed: int = 0
    demos: DemoPolicy = field(default_factory=DemoPolicy)
