"""The kernel probe that compares two CPUs line by line: the same lines in two processes here, and a digest that sees
one bit."""
import subprocess
import sys

import torch

from agentrl.learning.base_agent import base_model_config
from agentrl.numerics.probe import digest, probes
from agentrl.world.substrates import DEFAULT, substrate


def probe_lines(substrate: str = DEFAULT) -> list[str]:
    return subprocess.run([sys.executable, '-m', 'agentrl.numerics.probe', '--substrate', substrate], check=True,
                          capture_output=True, text=True).stdout.splitlines()


def test_the_probe_prints_the_cpu_then_one_digest_a_kernel_the_same_in_two_processes():
    first = probe_lines()
    assert first == probe_lines()
    assert 'numerics version' in first[0] and 'substrate tinyagent' in first[0]
    names = list(probes(base_model_config(substrate(DEFAULT).family.tokenizer())))
    assert [line[:32].rstrip() for line in first[1:]] == names
    assert all(len(line.split()[-1]) == 16 for line in first[1:])


def test_a_digest_sees_one_bit_and_the_order_of_its_tensors():
    one = torch.tensor([1.0])
    assert digest(one) != digest(torch.nextafter(one, torch.tensor([2.0])))
    assert digest(one, 2 * one) != digest(2 * one, one)


def test_the_larger_substrate_probes_its_own_shapes():
    assert probe_lines('larger')[1:] != probe_lines()[1:]
