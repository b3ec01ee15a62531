"""The substrates a claim can be judged on, each described here and nowhere else: the agent's size, the task family
it plays (agentrl/world/task_family.py: bugs per task, the episode caps, the model's context) and the demonstrator its
base agent learns from. A substrate decides the base agent (its model config, its pretraining's tasks, episodes and
demonstrations, hence its cache key) and the tasks, environments and tokenizer of sampling, training and the
experiments; the trainer, the losses and the experiments take the substrate by name and need no change to run on
another. Pure data (no torch): the workflow and the analysis read the substrates' names.

    tinyagent  the chapter's substrate as this project calibrated it (46k parameters: d_model 32, 2 layers)
    larger     a deeper and wider TinyAgent on the same tasks (207k parameters, 4.5x: d_model 64, 4 layers)
    longer     the tinyagent's shape on two-bug tasks: episodes with about twice the policy tokens

Adding one: an entry of SUBSTRATES (a test checks that each builds a model and that names are unique).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .task_family import TaskFamily


# What the base agent's pretraining is given: the demonstrator's choice probabilities and the supervised run's
# constants (agentrl/learning/demos.py runs it). Pure data.
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


@dataclass(frozen=True)
class Substrate:
    """An agent the chapter's claims are tested on: its TinyAgent's shape (TinyAgentConfig fields), its tasks and the
    demonstrator its base agent learns from."""
    name: str
    summary: str
    d_model: int
    n_layers: int
    n_heads: int = 4
    d_ff: int = 256
    family: TaskFamily = TaskFamily()
    demos: DemoPolicy = DemoPolicy()
    # a trainer run's time against tinyagent's, for the cluster's time limits (workflow/design.py, runtime_minutes):
    # from the published records, the median cell's seconds per episode and pass against substrate 1's (larger 1.43,
    # longer's version-3 records 1.62; both partly on an AMD EPYC, substrate 1 on an Intel Xeon)
    run_cost: float = 1.0

    def model_fields(self) -> dict:
        """The base agent's TinyAgentConfig fields but its vocabulary size; its context the family's."""
        return dict(max_len=self.family.max_len, d_model=self.d_model, n_layers=self.n_layers, n_heads=self.n_heads,
                    d_ff=self.d_ff)

    def pretrain_config(self) -> PretrainConfig:
        """The base agent's pretraining: the default steps, batch, rate and seed on this substrate's demonstrator."""
        return PretrainConfig(demos=self.demos)


DEFAULT = 'tinyagent'
SUBSTRATES = {s.name: s for s in (
    # d_model 32: Adam's first steps move every weight by about the learning rate, so fewer, narrower weights move
    # the policy less per step; after one REINFORCE step at the chapter's lr 2e-3 ESS/N was 0.45 at d_model 64
    # (107k parameters, an earlier task set, ten seeds), 0.56 at 48 and 0.61 at 32 (this task set); the chapter's
    # is 0.78 (results/measurements.md, "Each substrate against the chapter")
    Substrate(DEFAULT, "the chapter's TinyAgent on BugFix, as calibrated here", d_model=32, n_layers=2),
    Substrate('larger', 'a deeper and wider TinyAgent on the same BugFix tasks', d_model=64, n_layers=4,
              run_cost=1.5),
    # two bugs: test, edit, test, edit, test, submit is 6 turns and 18 policy tokens, with room for retries; the
    # longest episode the caps allow (every answer a 16-token failing test) is 2 + prompt + 64 + 9 x 16 tokens,
    # 252 for a 42-token prompt (three computing lines and a return), the longest a pretraining program has.
    # Demonstrators that submit at once 40% of the time left its base agent at 12.6 policy tokens per episode, 1.6x
    # the tinyagent's 8.0 (train pass 0.075); 20%, chosen from the demonstrations' own lengths (16.5 tokens against
    # 13.3) before any pretraining, gives 2.3x (18.3 tokens, pass 0.097)
    Substrate('longer', "the chapter's TinyAgent on BugFix tasks with two bugs each", d_model=32, n_layers=2,
              family=TaskFamily(bugs=2, max_turns=10, max_policy_tokens=64, max_len=256),
              demos=DemoPolicy(submit_first=0.20), run_cost=1.6),
)}


def substrate(name: str) -> Substrate:
    """The substrate of this name; a ValueError naming the known ones otherwise."""
    if name not in SUBSTRATES:
        raise ValueError(f'substrate {name!r} is not known: expected one of {", ".join(SUBSTRATES)}')
    return SUBSTRATES[name]
