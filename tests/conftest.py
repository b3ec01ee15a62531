"""Every test computes under agentrl's numeric settings (agentrl.numerics), on one thread. The test design's runs
to its end, which several modules read, are made once a session."""
from pathlib import Path

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


@pytest.fixture(scope='session')
def serial(tmp_path_factory) -> Path:
    """The working directory where the workflow ran the test design (config/test.yaml) to its end on one core; read
    only: a test that changes it works on a copy."""
    from test_workflow import run_workflow
    return run_workflow(tmp_path_factory.mktemp('serial'), cores=1)


@pytest.fixture(scope='session')
def parallel(tmp_path_factory) -> Path:
    """The same on two cores."""
    from test_workflow import run_workflow
    return run_workflow(tmp_path_factory.mktemp('parallel'), cores=2)
