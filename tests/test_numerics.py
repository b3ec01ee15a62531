"""Same numbers on any x86-64 machine with AVX2: runs are bit-identical whatever the caller's environment asks
for, and differ where the numeric settings are defeated (so these tests can fail). The numerics version: a golden
run's digest is pinned with it (agentrl/numerics/golden.json), so numbers that move without a new version fail here,
and a new version without a new pinned digest too."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from agentrl import numerics
from agentrl.numerics.golden import (CONFIG, GOLDEN_FILE, SEED, comparable_csv, comparable_run, cpu_capability,
                                     golden_run, pin, pinned, run_digest, vendors, where)
from agentrl.numerics import NUMERICS_VERSION, Cpu, this_cpu

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(numerics.outside_guarantee() is not None,
                                reason=f'outside the same-numbers guarantee: {numerics.outside_guarantee()}')

CALLER_ENVIRONMENTS = {  # what a caller's shell may hold: other code paths, or none of the controls at all
    'none': {},
    'narrow': {'ATEN_CPU_CAPABILITY': 'default', 'MKL_CBWR': 'COMPATIBLE', 'ONEDNN_MAX_CPU_ISA': 'SSE41',
               'OMP_NUM_THREADS': '2'},
    'wide': {'ATEN_CPU_CAPABILITY': 'avx512', 'MKL_CBWR': 'AVX512', 'ONEDNN_MAX_CPU_ISA': 'AVX512_CORE_AMX'},
}
SHORT_RUNS = {  # the chapter's defaults and REINFORCE's, shortened to a few iterations
    'ppo': dict(iterations=2, episodes_per_iteration=32, eval_episodes_per_task=2, critic_warmup_episodes_per_task=2),
    'reinforce': dict(algorithm='reinforce', lr=2e-3, iterations=3, episodes_per_iteration=32,
                      eval_episodes_per_task=2),
}


def caller_environment(values: dict) -> dict:
    """This process's environment with the numeric controls replaced by a caller's values."""
    env = {k: v for k, v in os.environ.items() if k not in numerics.SETTINGS}
    return {**env, **values, 'PYTHONPATH': str(REPO)}


def run_cli(tmp_path: Path, algorithm: str, environment: str) -> Path:
    config = tmp_path / f'{algorithm}.json'
    config.write_text(json.dumps(SHORT_RUNS[algorithm]))
    out = tmp_path / environment / algorithm
    subprocess.run([sys.executable, '-m', 'agentrl', 'train', '--config', str(config), '--seed', '3', '--out', str(out)],
                   check=True, cwd=REPO, env=caller_environment(CALLER_ENVIRONMENTS[environment]),
                   capture_output=True)
    return out


@pytest.mark.parametrize('algorithm', sorted(SHORT_RUNS))
def test_a_run_is_bit_identical_whatever_the_callers_environment(tmp_path, algorithm):
    runs = {environment: run_cli(tmp_path, algorithm, environment) for environment in CALLER_ENVIRONMENTS}
    reference = runs.pop('none')
    for environment, run in runs.items():
        assert comparable_run(run / 'run.json') == comparable_run(reference / 'run.json'), environment
        for table in ('iterations', 'epochs', 'minibatches'):
            assert comparable_csv(run / f'{table}.csv') == comparable_csv(reference / f'{table}.csv'), (environment,
                                                                                                         table)
        meta = json.loads((run / 'run.json').read_text())['provenance']
        assert meta['numeric_settings'] == numerics.SETTINGS and meta['cpu_capability'] == numerics.DISPATCH


LOG_PROBS = '''
import hashlib, sys
import torch
torch.ones(2, 2) @ torch.ones(2, 2)  # a computation before agentrl: the caller's code paths are now fixed
import agentrl as arl
from agentrl import numerics
tok = arl.build_tokenizer(arl.make_tasks('all'))
base = arl.make_base_agent(tok)
from agentrl.agent.sampler import sample_tasks
batch = arl.collate(sample_tasks(base, arl.make_tasks('train'), 2, tok, torch.Generator().manual_seed(0)), tok.pad_id)
print(hashlib.sha256(arl.sequence_log_probs(base, batch['ids']).detach().numpy().tobytes()).hexdigest())
print(numerics.problems())
'''


def log_probs_digest(environment: dict) -> tuple[str, str]:
    """A batch's log-probs' digest, computed in a process whose first torch computation ran before agentrl."""
    out = subprocess.run([sys.executable, '-c', LOG_PROBS], check=True, cwd=REPO, text=True, capture_output=True,
                         env=caller_environment({**environment, 'OMP_NUM_THREADS': '1'})).stdout.split('\n')
    return out[0], out[1]


def test_defeated_settings_change_the_numbers_and_are_named():
    pinned, pinned_problems = log_probs_digest({k: v for k, v in numerics.SETTINGS.items()})
    defeated, defeated_problems = log_probs_digest(CALLER_ENVIRONMENTS['narrow'])
    assert pinned_problems == '[]'
    assert defeated != pinned
    assert 'torch dispatches to DEFAULT, expected AVX2' in defeated_problems
    assert 'MKL runs branch COMPATIBLE (0x3), expected COMPATIBLE,STRICT (0x10003)' in defeated_problems


def test_require_refuses_naming_what_to_set(monkeypatch):
    numerics.require()  # MKL and ATen read the settings now, before the environment changes
    monkeypatch.setenv('MKL_CBWR', 'AVX2')
    with pytest.raises(numerics.NumericsError,
                       match=r"MKL_CBWR='AVX2', expected 'COMPATIBLE,STRICT'.*MKL_CBWR=COMPATIBLE,STRICT"):
        numerics.require()
    monkeypatch.setenv('MKL_CBWR', 'COMPATIBLE,STRICT')
    torch.set_num_threads(2)
    try:
        with pytest.raises(numerics.NumericsError, match='torch uses 2 threads, expected 1'):
            numerics.require()
    finally:
        torch.set_num_threads(1)
    numerics.require()


def test_provenance_names_the_cpu_dispatch_and_settings():
    meta = numerics.provenance()
    assert set(meta) == {*numerics.PROVENANCE_KEYS, 'cpu_vendor'}
    assert meta['numerics_version'] == numerics.NUMERICS_VERSION and meta['cpu'] and meta['cpu_vendor']
    assert meta['cpu_capability'] == 'AVX2' and meta['numeric_settings'] == numerics.SETTINGS
    assert meta['guarantee'] == numerics.GUARANTEE


@pytest.mark.parametrize('fields, model', [
    ({'model name': 'AMD EPYC', 'cpu family': '25', 'model': '1', 'stepping': '1'},
     'AMD EPYC (family 25, model 1, stepping 1)'),  # two generations share a virtual machine's model name
    ({'model name': 'Intel(R) Xeon(R) Processor'}, 'Intel(R) Xeon(R) Processor'),  # no numbers: the name alone
])
def test_the_cpu_is_named_by_its_family_model_and_stepping_where_the_system_gives_them(monkeypatch, fields, model):
    monkeypatch.setattr(numerics, 'cpuinfo', fields.get)
    assert numerics.this_cpu().model == model


@pytest.mark.parametrize('imports, applied', [
    # no torch: untouched
    ('import analysis.__main__, analysis.pages.report, analysis.ledger.simulation, workflow.state', False),
    ('import agentrl, agentrl.files', False),
    ('import agentrl; import torch', True),  # the settings come with torch
    ('import torch; import agentrl', True),  # torch first (no computation yet): at agentrl's import
])
def test_the_settings_are_set_only_in_a_process_that_loads_torch(imports, applied):
    code = (f'import os, sys; before = dict(os.environ); {imports}; '
            'print("torch" in sys.modules, os.environ == before, all(os.environ.get(k) == v for k, v in '
            '__import__("agentrl.numerics").numerics.SETTINGS.items()))')
    env = {k: v for k, v in os.environ.items() if k not in numerics.SETTINGS}
    out = subprocess.run([sys.executable, '-c', code], check=True, cwd=REPO, env={**env, 'PYTHONPATH': str(REPO)},
                         text=True, capture_output=True).stdout.split()
    assert out == [str(applied), str(not applied), str(applied)]


def test_importing_agentrl_numerics_imports_no_torch():
    code = 'import sys, agentrl.numerics, agentrl; print("torch" in sys.modules)'
    out = subprocess.run([sys.executable, '-c', code], check=True, cwd=REPO, text=True, capture_output=True)
    assert out.stdout.strip() == 'False'


REGENERATE = 'python -m agentrl.numerics.golden --write'


def test_the_golden_digest_is_pinned_for_the_declared_numerics_version():
    golden = pinned()
    assert (golden['config'], golden['seed']) == (CONFIG, SEED), f'the golden run changed: pin it again ({REGENERATE})'
    assert golden['numerics_version'] == NUMERICS_VERSION, (
        f'NUMERICS_VERSION is {NUMERICS_VERSION}, {GOLDEN_FILE.name} pins version {golden["numerics_version"]}: '
        f'pin the new numbers with {REGENERATE}')


def test_the_golden_runs_numbers_are_those_of_the_declared_numerics_version(tmp_path):
    """The guarantee covers every x86-64 CPU with AVX2 and FMA, of any vendor: on each the golden run's digest is one
    pinned for this numerics version, or the test fails naming the CPU (a vendor or model never measured included:
    its first run is the evidence). Only a CPU outside the guarantee skips."""
    cpu = this_cpu()
    outside = cpu.outside() or (None if 'fma' in cpu.flags else f'this CPU ({cpu.model}, {cpu.vendor}) does not '
                                                                    'announce FMA: the fixed-order kernel needs it')
    if outside:
        pytest.skip(outside)
    golden = pinned()
    assert cpu_capability() == golden['cpu_capability'], (
        f'torch dispatches to {cpu_capability()} on {cpu.model} ({cpu.vendor}), the golden digest was pinned on '
        f'{golden["cpu_capability"]}: agentrl\'s numeric settings are defeated here')
    digest = run_digest(golden_run(tmp_path))
    assert digest in golden['digests'], (
        f'on {cpu.model} ({cpu.vendor}) the golden run\'s digest {digest} is none of those pinned under numerics '
        f'version {NUMERICS_VERSION} ({", ".join(f"{d[:12]} on {where(seen)}" for d, seen in golden["digests"].items())}): '
        f'a change that moves numbers bumps NUMERICS_VERSION (agentrl/numerics/__init__.py), then {REGENERATE}; a CPU '
        'whose numbers differ from every pinned one breaks the guarantee: compare it with the records (python -m '
        'analysis.records.recheck) and the kernels (python -m agentrl.numerics.probe) before pinning anything')


def test_pinning_adds_a_cpu_to_its_digest_under_its_vendor_and_a_new_version_starts_afresh():
    golden = pinned()
    digest, seen = next(iter(golden['digests'].items()))
    vendor, models = next(iter(seen.items()))
    again = pin(golden, digest, Cpu('x86_64', 'another CPU', vendor, frozenset()), golden['cpu_capability'])
    assert again['digests'][digest][vendor] == sorted([*models, 'another CPU'])
    assert {k: v for k, v in again['digests'].items() if k != digest} == {
        k: v for k, v in golden['digests'].items() if k != digest}
    third = Cpu('x86_64', 'a third CPU', 'ElsewhereVendor', frozenset())
    added = pin(golden, 'f' * 64, third, golden['cpu_capability'])
    assert added['digests'] == {**golden['digests'], 'f' * 64: {'ElsewhereVendor': ['a third CPU']}}
    assert vendors(added) == vendors(golden) | {'ElsewhereVendor'}
    moved = pin({**golden, 'numerics_version': NUMERICS_VERSION - 1}, 'f' * 64, third, 'AVX2')
    assert moved['digests'] == {'f' * 64: {'ElsewhereVendor': ['a third CPU']}}
    assert moved['numerics_version'] == NUMERICS_VERSION


def test_the_digest_sees_every_number_and_no_wall_time(tmp_path):
    run = tmp_path / 'run'
    run.mkdir()
    (run / 'run.json').write_text('{"summary": {"pass_train": 0.5, "wall_s": 1.0}, "provenance": {"host": "a"}}')
    (run / 'iterations.csv').write_text('iteration,kl,wall_s\n1,0.01,2.5\n')
    first = run_digest(run)
    (run / 'run.json').write_text('{"summary": {"pass_train": 0.5, "wall_s": 9.0}, "provenance": {"host": "b"}}')
    (run / 'iterations.csv').write_text('iteration,kl,wall_s\n1,0.01,7.5\n')
    assert run_digest(run) == first
    (run / 'iterations.csv').write_text('iteration,kl,wall_s\n1,0.010000001,7.5\n')
    assert run_digest(run) != first
