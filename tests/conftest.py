"""Every test computes under agentrl's numeric settings (agentrl.numerics), on one thread."""
import agentrl  # noqa: F401  (puts agentrl.numerics.SETTINGS in force before any torch computation)
import pytest
import torch

torch.set_num_threads(1)


@pytest.fixture(scope='session')
def tok():
    """The tokenizer of every task (immutable: one for the session)."""
    return agentrl.build_tokenizer(agentrl.make_tasks('all'))


@pytest.fixture(scope='module')
def base(tok):
    """The pretrained base agent, from the cache (trained once if missing); each test module gets its own copy."""
    return agentrl.make_base_agent(tok)
