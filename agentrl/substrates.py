"""The substrates a claim can be judged on, each described here and nowhere else: the agent's size. A substrate
decides the base agent (its model config, hence its cache key and its pretraining); the trainer, the losses and
the experiments take whatever base agent they are given and need no change to run on another. Pure data: the
workflow and the analysis read the substrates' names without torch.

    tinyagent  the chapter's substrate as this project calibrated it (46k parameters: d_model 32, 2 layers)
    larger     a deeper and wider TinyAgent on the same tasks (207k parameters, 4.5x: d_model 64, 4 layers)

Adding one: an entry of SUBSTRATES (a test checks that each builds a model and that names are unique).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Substrate:
    """An agent the chapter's claims are tested on: its TinyAgent's shape (TinyAgentConfig fields)."""
    name: str
    summary: str
    d_model: int
    n_layers: int
    n_heads: int = 4
    d_ff: int = 256

    def model_fields(self) -> dict:
        """The base agent's TinyAgentConfig fields but its vocabulary size."""
        return dict(d_model=self.d_model, n_layers=self.n_layers, n_heads=self.n_heads, d_ff=self.d_ff)


DEFAULT = 'tinyagent'
SUBSTRATES = {s.name: s for s in (
    # d_model 32: Adam's first steps move every weight by about the learning rate, so fewer, narrower weights move
    # the policy less per step; after one REINFORCE step at the chapter's lr 2e-3 ESS/N was 0.45 at d_model 64
    # (107k parameters, an earlier task set, ten seeds), 0.56 at 48 and 0.61 at 32 (this task set); the chapter's
    # is 0.78 (results/measurements.md, "What the substrate measures")
    Substrate(DEFAULT, "the chapter's TinyAgent on BugFix, as calibrated here", d_model=32, n_layers=2),
    Substrate('larger', 'a deeper and wider TinyAgent on the same BugFix tasks', d_model=64, n_layers=4),
)}


def substrate(name: str) -> Substrate:
    """The substrate of this name; a ValueError naming the known ones otherwise."""
    if name not in SUBSTRATES:
        raise ValueError(f'substrate {name!r} is not known: expected one of {", ".join(SUBSTRATES)}')
    return SUBSTRATES[name]
