"""The test design on a real SLURM cluster: a single-node cluster on localhost, the SLURM profile, a local run to compare.

The module's fixture brings the cluster up with workflow/scripts/slurm_localhost.sh (Debian's slurm-wlm
and munge; root), then runs config/test.yaml twice at the same time, each from the root of its own copy
of the checkout (beside its config/config.yaml, as a user runs it), with the README's commands:
  - through SLURM: `snakemake --profile workflow/profiles/slurm --profile workflow/profiles/slurm/localhost
    --configfile config/test.yaml`, the job logs kept (--slurm-keep-successful-logs);
  - locally: `snakemake --profile workflow/profiles/default --cores 2 --configfile config/test.yaml`.
Every SLURM job runs Snakemake again inside its allocation; had it planned another design than its
parent (config/config.yaml merged back in), the aggregation would fail or compare unequal here.
The local run fills the SLURM run's idle time (status polling, job start-up), so the two together take
little more than the SLURM run alone.

How "every job ran as a SLURM job" is checked, without sacct (the cluster has no accounting):
the executor names every job it submits after the run's ID ("SLURM run ID: ..." in its output) and
comments it `rule_<rule>[_wildcards_<values>]`; the controller keeps finished jobs for MinJobAge
(3600 s in the script's slurm.conf), so after the run `squeue --states=all --name <run ID>` lists every
job of the run. That list must be exactly one COMPLETED job per job of a non-local rule (base_agent,
train and experiment for every run directory of the local run, aggregate), in the run's working
directory; the job IDs must be those the executor reported; each job's kept SLURM log must show the
job step's Snakemake finishing that rule; and each job's own log (results/logs/..., written by its
command) must have been last written between its SLURM job's start and end.

Skipped, with the reason, only where SLURM cannot run: slurmctld not installed, or not root (the
script starts munged, slurmctld and slurmd). Any other failure of the script fails the test.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import pytest
import yaml
from checkout import copy_checkout
from comparable import comparable_csv, comparable_run

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / 'workflow' / 'scripts' / 'slurm_localhost.sh'
PROFILE = REPO / 'workflow' / 'profiles' / 'slurm'
LOCALHOST_PROFILE = PROFILE / 'localhost'
TEST_RESULTS = Path(yaml.safe_load((REPO / 'config' / 'test.yaml').read_text())['results_dir'])
SLURM_DIR = Path(os.environ.get('AGENTRL_SLURM_DIR', '/tmp/agentrl-slurm'))
SLURM_RULES = {'base_agent', 'warm_critic', 'train', 'experiment', 'aggregate'}  # the rest are local rules
INSTALL = 'apt-get install -y slurm-wlm munge'


# --- the profile, without a cluster ---------------------------------------------------------

def cluster_rules() -> dict[str, tuple[str, str, str]]:
    """Rule -> (threads, runtime, mem_mb) of every non-local rule, from workflow/rules/*.smk."""
    found = {}
    for path in sorted((REPO / 'workflow' / 'rules').glob('*.smk')):
        for name, body in re.findall(r'^rule (\w+):\n((?:[ \t]+.*\n|\n)*)', path.read_text(), flags=re.M):
            if 'localrule: True' not in body:
                found[name] = tuple(re.search(rf'^\s+{key}[:=] ?(\w+),?$', body, flags=re.M).group(1)
                                    for key in ('threads', 'runtime', 'mem_mb'))
    return found


def test_the_profile_maps_every_cluster_rule():
    text = (PROFILE / 'config.yaml').read_text()
    profile = yaml.safe_load(text)
    assert profile['executor'] == 'slurm'
    rules = cluster_rules()
    assert set(rules) == SLURM_RULES
    assert {rule: str(res['cpus_per_task']) for rule, res in profile['set-resources'].items()} == {
        rule: threads for rule, (threads, _, _) in rules.items()}
    for rule, (threads, runtime, mem_mb) in rules.items():  # the profile's table of resources is up to date
        runtime = runtime if runtime.isdigit() else f'per cell ({runtime})'
        assert re.search(rf'^#\s+{rule}\s+{threads}\s+{re.escape(runtime)}\s+{mem_mb}$', text, flags=re.M), rule
    assert 'default-resources' not in profile, 'keep --default-resources slurm_partition=... free for users'
    localhost = yaml.safe_load((LOCALHOST_PROFILE / 'config.yaml').read_text())
    assert (localhost['slurm-status-command'], localhost['slurm-no-account']) == ('squeue', True)


def test_the_executor_plugin_is_pinned():
    pins = dict(line.split('==') for line in (REPO / 'envs' / 'requirements.txt').read_text().split() if '==' in line)
    from importlib.metadata import version
    for name in ('snakemake-executor-plugin-slurm', 'snakemake-executor-plugin-slurm-jobstep'):
        assert pins.get(name) == version(name), name


# --- the cluster and the two runs -------------------------------------------------------------

def environment() -> dict:
    """The jobs' environment (sbatch --export=ALL passes it on): this venv's python, the cache.

    Jobs import agentrl and analysis from their working directory, the copy's root (`python -m`).
    """
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(('SLURM_', 'SBATCH_', 'SRUN_', 'AGENTRL_DESIGN', 'PYTHONPATH'))}
    env['PATH'] = os.pathsep.join([str(Path(sys.executable).parent), env.get('PATH', '')])
    # the base agent's cache, the same for local and SLURM jobs (they run as this user, on this host)
    env['AGENTRL_CACHE_DIR'] = env.get('AGENTRL_CACHE_DIR') or str(Path.home() / '.cache' / 'agentrl')
    env['SLURM_CONF'] = str(SLURM_DIR / 'etc' / 'slurm.conf')
    return env


def script(action: str) -> subprocess.CompletedProcess:
    return subprocess.run(['bash', str(SCRIPT), action, str(SLURM_DIR)], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=300)


@pytest.fixture(scope='module')
def cluster():
    if not shutil.which('slurmctld', path=os.environ.get('PATH', '') + ':/usr/sbin:/sbin'):
        pytest.skip(f'SLURM is not installed (no slurmctld): on Debian/Ubuntu, `{INSTALL}` (as root)')
    if os.geteuid() != 0:
        pytest.skip('starting munged, slurmctld and slurmd needs root; this test runs as uid '
                    f'{os.geteuid()}')
    was_up = script('status').returncode == 0
    up = script('up')
    if up.returncode != 0:
        if re.search(r'Permission denied|Operation not permitted|must run as root', up.stdout):
            pytest.skip(f'workflow/scripts/slurm_localhost.sh lacks privileges here:\n{up.stdout[-2000:]}')
        pytest.fail(f'workflow/scripts/slurm_localhost.sh failed:\n{up.stdout[-4000:]}')
    yield up.stdout
    if not was_up:
        script('down')


def snakemake(*args) -> list[str]:
    """The README's command for the test design, run from a copy's root."""
    return [sys.executable, '-m', 'snakemake', *map(str, args), '--configfile', 'config/test.yaml']


@pytest.fixture(scope='module')
def runs(cluster, tmp_path_factory):
    """(SLURM working directory, its output, local working directory, seconds the two took together)."""
    root = tmp_path_factory.mktemp('slurm')
    env = environment()
    # the base agent cached before either run, so that no job of either pretrains it
    subprocess.run([sys.executable, '-m', 'agentrl', 'base-agent', '--out', str(root / 'base_agent.pt')],
                   cwd=REPO, env=env, check=True, stdout=subprocess.DEVNULL, timeout=900)
    slurm, local = copy_checkout(root / 'slurm'), copy_checkout(root / 'local')
    assert (slurm / 'config' / 'config.yaml').exists()  # the default design a job could merge back in
    start = time.monotonic()
    with open(root / 'local.out', 'w') as local_out:
        local_run = subprocess.Popen(snakemake('--profile', 'workflow/profiles/default', '--cores', 2),
                                     cwd=local, env=env, stdout=local_out, stderr=subprocess.STDOUT)
        try:
            slurm_run = subprocess.run(
                snakemake('--profile', 'workflow/profiles/slurm', '--profile', 'workflow/profiles/slurm/localhost',
                          '--slurm-keep-successful-logs'),
                cwd=slurm, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=1200)
            local_rc = local_run.wait(timeout=900)
        finally:
            if local_run.poll() is None:
                local_run.kill()
    seconds = time.monotonic() - start
    assert slurm_run.returncode == 0, slurm_run.stdout[-6000:]
    assert local_rc == 0, (root / 'local.out').read_text()[-6000:]
    print(f'\nSLURM and local runs of config/test.yaml together: {seconds:.0f} s')
    return slurm, slurm_run.stdout, local, seconds


def squeue_jobs(run_id: str) -> list[dict]:
    """The controller's record of every job named run_id, finished ones included (kept for MinJobAge)."""
    out = subprocess.run(['squeue', '--states=all', '--noheader', '--name', run_id,
                          '--format=%i|%T|%k|%Z|%S|%e'], env=environment(), check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    keys = ('id', 'state', 'comment', 'workdir', 'start', 'end')
    return [dict(zip(keys, line.split('|'))) for line in out.splitlines() if line.strip()]


def expected_jobs(local: Path) -> dict[str, tuple[str, Path]]:
    """SLURM job comment -> (rule, its log file), for every non-local job of the design (from the local run).

    The log is the job's command's own output (`> {log}`): written only while the command runs. (Outputs
    and benchmark files are no evidence: Snakemake touches them on the submitting host when a job ends.)
    """
    results = local / TEST_RESULTS
    jobs = {'rule_base_agent': ('base_agent', TEST_RESULTS / 'logs' / 'base_agent.log'),
            'rule_aggregate': ('aggregate', TEST_RESULTS / 'logs' / 'aggregate.log')}
    for kind, rule in (('runs', 'train'), ('experiments', 'experiment')):
        for run in sorted((results / kind).glob('*/seed~*/run.json')):
            name, seed = run.parent.parent.name, run.parent.name
            jobs[f'rule_{rule}_wildcards_{name}_{seed.removeprefix("seed~")}'] = (
                rule, TEST_RESULTS / 'logs' / kind / name / f'{seed}.log')
    for critic in sorted((results / 'critics').glob('seed~*.pt')):
        jobs[f'rule_warm_critic_wildcards_{critic.stem.removeprefix("seed~")}'] = (
            'warm_critic', TEST_RESULTS / 'logs' / 'critics' / f'{critic.stem}.log')
    return jobs


def test_every_job_ran_as_a_slurm_job(runs):
    slurm, out, local, _ = runs
    run_id = re.search(r'^SLURM run ID: (\S+)$', out, flags=re.M).group(1)
    submitted = dict(re.findall(r'^Job (\d+) has been submitted with SLURM jobid (\d+) ', out, flags=re.M))
    jobs = squeue_jobs(run_id)
    expected = expected_jobs(local)
    assert {rule for rule, _ in expected.values()} == SLURM_RULES  # the base agent, runs, experiments, aggregation
    assert sorted(job['comment'] for job in jobs) == sorted(expected), jobs
    assert sorted(job['id'] for job in jobs) == sorted(submitted.values()), (jobs, submitted)
    for job in jobs:
        rule, log = expected[job['comment']]
        assert (job['state'], Path(job['workdir'])) == ('COMPLETED', slurm), job
        wildcards = job['comment'].removeprefix(f'rule_{rule}').removeprefix('_wildcards_')
        slurm_log = slurm / '.snakemake' / 'slurm_logs' / f'rule_{rule}' / wildcards / f'{job["id"]}.log'
        assert f'Finished jobid: 0 (Rule: {rule})' in slurm_log.read_text(), slurm_log
        start, end = (datetime.fromisoformat(job[key]).timestamp() for key in ('start', 'end'))
        written = (slurm / log).stat().st_mtime
        assert start - 1 <= written <= end + 1, (job, log, written)  # squeue's times are to the second
    # the local rules ran on the submitting host, not as SLURM jobs
    local_rules = re.findall(r'^localrule (\w+):$', out, flags=re.M)
    assert (local_rules.count('cell_config'), local_rules.count('critic_config')) == (3, 1)


def test_slurm_results_equal_a_local_runs_number_for_number(runs):
    slurm, _, local, _ = runs
    def files(root: Path, pattern: str) -> list[Path]:
        return sorted(p.relative_to(root / TEST_RESULTS) for p in (root / TEST_RESULTS).rglob(pattern))
    assert files(slurm, 'run.json') == files(local, 'run.json')
    assert {p.parts[0] for p in files(local, 'run.json')} == {'runs', 'experiments'}
    for path in files(local, 'run.json'):
        assert comparable_run(slurm / TEST_RESULTS / path) == comparable_run(local / TEST_RESULTS / path), path
    assert files(slurm, '*.csv') == files(local, '*.csv')
    assert any(p.parts[0] == 'tables' for p in files(local, '*.csv'))
    for path in files(local, '*.csv'):
        assert comparable_csv(slurm / TEST_RESULTS / path) == comparable_csv(local / TEST_RESULTS / path), path
    assert files(slurm, 'configs/*.json') == files(local, 'configs/*.json')
    for path in files(local, 'configs/*.json'):
        assert (slurm / TEST_RESULTS / path).read_text() == (local / TEST_RESULTS / path).read_text(), path
