"""The pinned environments: envs/agentrl.yaml (the jobs that train, with torch) and envs/analysis.yaml (the
analysis, without torch), each pinned as envs/requirements.txt and complete; each rule runs in the one it needs."""
import importlib.metadata
import re
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[1]
# environment -> what its jobs import (agentrl: tensor.numpy(); analysis: no torch)
ENVS = {'agentrl': {'torch', 'numpy'},
        'analysis': {'pandas', 'pyarrow', 'scipy', 'statsmodels', 'seaborn', 'matplotlib', 'pyyaml'}}
INSTALLERS = {'pip', 'setuptools', 'wheel'}  # the environment's own tools, pinned by conda


def requirements() -> dict[str, str]:
    """Package (canonical name) -> the version envs/requirements.txt pins."""
    lines = (REPO / 'envs' / 'requirements.txt').read_text().split()
    return {canonicalize_name(name): version for name, version in (line.split('==') for line in lines if '==' in line)}


def conda_pins(env: str) -> dict[str, str]:
    """Package (canonical name) -> the version envs/<env>.yaml pins under pip."""
    spec = yaml.safe_load((REPO / 'envs' / f'{env}.yaml').read_text())
    pip = next(d['pip'] for d in spec['dependencies'] if isinstance(d, dict))
    return {canonicalize_name(name): version for name, version in (line.split('==') for line in pip if '==' in line)}


def dependencies(name: str) -> set[str]:
    """The packages an installed package needs (no extras), canonical names."""
    found = set()
    for line in importlib.metadata.requires(name) or []:
        requirement = Requirement(line)
        if requirement.marker is None or requirement.marker.evaluate({'extra': ''}):
            found.add(canonicalize_name(requirement.name))
    return found - INSTALLERS


def needed(packages: set[str]) -> set[str]:
    """These packages and every package they need, transitively."""
    found, todo = set(), list(packages)
    while todo:
        name = todo.pop()
        if name not in found:
            found.add(name)
            todo.extend(dependencies(name))
    return found


@pytest.mark.parametrize('env', ENVS)
def test_an_environment_pins_what_its_jobs_need_as_the_requirements_do(env):
    """Exactly the packages its jobs import and their dependencies, each at envs/requirements.txt's version."""
    pins = conda_pins(env)
    assert set(pins) == needed(ENVS[env])
    assert {name: requirements().get(name) for name in pins} == pins
    assert ('torch' in pins) == (env == 'agentrl')


def rule_environments() -> dict[str, tuple[str, str]]:
    """Rule -> (the package its shell command runs with `python -m`, its conda environment file's stem)."""
    found = {}
    for path in sorted((REPO / 'workflow' / 'rules').glob('*.smk')):
        for block in re.split(r'(?m)^(?=(?:rule|checkpoint) )', path.read_text())[1:]:
            name = re.match(r'(?:rule|checkpoint) (\w+)', block).group(1)
            command, conda = re.search(r'shell:.*?python -m (\w+)', block, re.S), re.search(r'conda:\s*"([^"]+)"', block)
            if command:
                found[name] = (command.group(1), conda and Path(conda.group(1)).stem)
    return found


def test_every_job_runs_in_the_environment_of_the_package_it_runs():
    environments = rule_environments()
    assert {'aggregate', 'stage', 'train', 'base_agent'} <= set(environments)
    assert {rule: package for rule, (package, _) in environments.items()} == \
        {rule: env for rule, (_, env) in environments.items()}
