"""The test design on a real SLURM cluster: a single-node cluster on localhost, the SLURM profile, a local run to compare.

The module's fixture brings the cluster up with workflow/scripts/slurm_localhost.sh (Debian's slurm-wlm
and munge; root), then runs config/test.yaml (a staged design of two stages) twice at the same time,
each from the root of its own copy of the checkout (beside its config/config.yaml, as a user runs it),
with the README's commands:
  - through SLURM: `snakemake --profile workflow/profiles/slurm --profile workflow/profiles/slurm/localhost
    --configfile config/test.yaml`, the job logs kept (--slurm-keep-successful-logs);
  - locally: `snakemake --profile workflow/profiles/default --cores 2 --configfile config/test.yaml`.
Every SLURM job runs Snakemake again inside its allocation; had it planned another design than its
parent (config/config.yaml merged back in), the aggregation would fail or compare unequal here.
The local run fills the SLURM run's idle time (status polling, job start-up), so the two together take
little more than the SLURM run alone.

Two node failures, as Snakemake sees them, during the SLURM run: the fixture cancels (scancel), once
each, a running experiment job and a running `seed` group whose critic has finished. Both must be
submitted again (the profile's retries) and succeed; no job that another SLURM job finished runs again.

How "every job ran in a SLURM job" is checked, without sacct (the cluster has no accounting): the
executor names every job it submits after the run's ID ("SLURM run ID: ..." in its output) and comments
it `rule_<rule>[_wildcards_<values>]`, a group `rule_<group>_<its rules>`; the controller keeps finished
jobs for MinJobAge (3600 s in the script's slurm.conf), so after the run `squeue --states=all --name <run
ID>` lists every SLURM job of the run, with its state, time limit, CPUs and memory. Each SLURM job's kept
log shows the job step's Snakemake running each of its rule jobs (a `localrule <rule>:` block: the job's
output and evaluated resources, then `Finished jobid: 0 (Rule: <rule>)` once it succeeded). Each rule job
of the local run (base_agent, warm_critic, train and experiment for every output, aggregate) must have
finished in exactly one COMPLETED SLURM job of the run's working directory, and its own log
(results/logs/..., written by its command) must have been last written between that job's start and end.

Skipped, with the reason, only where SLURM cannot run: slurmctld not installed, or not root (the
script starts munged, slurmctld and slurmd). Any other failure of the script fails the test.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pytest
import yaml
from checkout import copy_checkout
from test_workflow import give_cost_table
from agentrl.numerics.golden import comparable_csv, comparable_run
from workflow.design import expand_design, load_design
from workflow.plan import seed_plan

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / 'workflow' / 'scripts' / 'slurm_localhost.sh'
PROFILE = REPO / 'workflow' / 'profiles' / 'slurm'
LOCALHOST_PROFILE = PROFILE / 'localhost'
TEST_RESULTS = Path(yaml.safe_load((REPO / 'config' / 'test.yaml').read_text())['results_dir'])
SLURM_DIR = Path(os.environ.get('AGENTRL_SLURM_DIR', '/tmp/agentrl-slurm'))
SLURM_RULES = {'base_agent', 'warm_critic', 'train', 'experiment', 'aggregate'}  # the rest are local rules
GROUP = 'seed'  # the profile's group: a seed's critic and the PPO runs that read it
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


def test_the_profile_groups_only_cluster_rules_one_thread_each():
    """A group runs its jobs in turn on one CPU (cores: 1), so each rule must take one thread; a local rule
    in a group would make the group local; --group-components breaks in this checkpointed DAG."""
    profile = yaml.safe_load((PROFILE / 'config.yaml').read_text())
    assert profile['cores'] == 1
    assert {threads for threads, _, _ in cluster_rules().values()} == {'1'}
    assert profile['groups'] == {'warm_critic': GROUP, 'train': GROUP}
    assert set(profile['groups']) <= SLURM_RULES
    assert 'group-components' not in profile, 'Snakemake 9.27.1 duplicates jobs across groups after a checkpoint'
    assert profile['retries'] >= 1


def test_the_profiles_table_counts_the_default_designs_slurm_jobs(tmp_path):
    """The dry run of the default design through the profile: its first stage's SLURM jobs, as the table says."""
    copy = copy_checkout(tmp_path / 'copy')
    give_cost_table(tmp_path, REPO / 'config' / 'config.yaml')  # a budgeted design prices its batches by it
    out = subprocess.run([sys.executable, '-m', 'snakemake', '--profile', 'workflow/profiles/slurm', '--dry-run',
                          '--config', f'results_dir={tmp_path / "results"}'], cwd=copy, env=environment(),
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-4000:]
    groups = [re.findall(r'^    rule (\w+):$', body, flags=re.M)
              for body in re.split(r'^\[.*\] Group job \w+ \(jobs in lexicogr\. order\):$', out.stdout, flags=re.M)[1:]]
    single = [rule for rule in re.findall(r'^rule (\w+):$', out.stdout, flags=re.M) if rule in SLURM_RULES]
    sizes = sorted(len(rules) for rules in groups)
    cells = expand_design(load_design(REPO / 'config' / 'config.yaml')).values()
    ppo = sum(cell.values['algorithm'] == 'ppo' for cell in cells)
    # REINFORCE's runs alone; each seed's critic with its PPO runs
    seeds = seed_plan(load_design(REPO / 'config' / 'config.yaml')).looks[0]
    assert sizes == [1] * (seeds * (len(cells) - ppo)) + [ppo + 1] * seeds
    assert all(rules.count('warm_critic') == 1 for rules in groups if len(rules) > 1)
    assert sorted(single) == ['aggregate', 'base_agent'] + ['experiment'] * (6 * seeds)
    stage_one = len(groups) + len(single) - 1  # the aggregation comes after the last stage
    jobs = sum(sizes) + len(single) - 1
    text = (PROFILE / 'config.yaml').read_text()
    assert f'stage 1: {stage_one} SLURM jobs for {jobs} jobs' in text, (stage_one, jobs)


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


def squeue(*options: str) -> list[dict]:
    """The controller's record of the jobs squeue selects with options (finished ones: for MinJobAge)."""
    keys = {'id': '%i', 'state': '%T', 'comment': '%k', 'workdir': '%Z', 'start': '%S', 'end': '%e',
            'time_limit': '%l', 'cpus': '%C', 'memory': '%m'}
    out = subprocess.run(['squeue', '--noheader', *options, '--format=' + '|'.join(keys.values())],
                         env=environment(), check=True, stdout=subprocess.PIPE, text=True).stdout
    return [dict(zip(keys, line.split('|'))) for line in out.splitlines() if line.strip()]


# The SLURM jobs to kill: kind -> (their comment's start, what their log shows once it is time: an experiment
# running; a seed group's critic finished, its PPO runs not yet).
KILL = {'experiment': ('rule_experiment_', '\nlocalrule experiment:\n'),
        'group': (f'rule_{GROUP}_train_warm_critic', 'Finished jobid: 0 (Rule: warm_critic)')}


def fail_two_jobs(workdir: Path, run: subprocess.Popen) -> dict[str, str]:
    """Kill, once each, a running experiment job and a running seed group whose critic has finished.

    scancel is what Snakemake sees of a node lost under a job: the job ends CANCELLED, its running rule
    job is killed half-way. Returns SLURM job ID -> 'experiment' or 'group'.
    """
    cancelled = {}
    logs = workdir / '.snakemake' / 'slurm_logs'
    while run.poll() is None and len(cancelled) < len(KILL):
        for job in squeue('--states=RUNNING'):
            for kind, (comment, shown) in KILL.items():
                if (kind in cancelled.values() or Path(job['workdir']) != workdir
                        or not job['comment'].startswith(comment)):
                    continue
                log = next(logs.rglob(f'{job["id"]}.log'), None)
                if log is not None and shown in log.read_text():
                    subprocess.run(['scancel', job['id']], env=environment(), check=True)
                    cancelled[job['id']] = kind
        time.sleep(0.25)  # an experiment of the test design runs for about 3 s
    return cancelled


@dataclass
class Runs:
    slurm: Path      # the SLURM run's working directory (a copy's root)
    out: str         # the SLURM run's output
    local: Path      # the local run's
    cancelled: dict  # SLURM job ID -> 'experiment' or 'group', as fail_two_jobs cancelled them
    seconds: float   # the two runs together


@pytest.fixture(scope='module')
def runs(cluster, tmp_path_factory) -> Runs:
    root = tmp_path_factory.mktemp('slurm')
    env = environment()
    # the base agent cached before either run, so that no job of either pretrains it
    subprocess.run([sys.executable, '-m', 'agentrl', 'base-agent', '--out', str(root / 'base_agent.pt')],
                   cwd=REPO, env=env, check=True, stdout=subprocess.DEVNULL, timeout=900)
    slurm, local = copy_checkout(root / 'slurm'), copy_checkout(root / 'local')
    assert (slurm / 'config' / 'config.yaml').exists()  # the default design a job could merge back in
    start = time.monotonic()
    with open(root / 'local.out', 'w') as local_out, open(root / 'slurm.out', 'w') as slurm_out:
        local_run = subprocess.Popen(snakemake('--profile', 'workflow/profiles/default', '--cores', 2),
                                     cwd=local, env=env, stdout=local_out, stderr=subprocess.STDOUT)
        slurm_run = subprocess.Popen(
            snakemake('--profile', 'workflow/profiles/slurm', '--profile', 'workflow/profiles/slurm/localhost',
                      '--slurm-keep-successful-logs'),
            cwd=slurm, env=env, stdout=slurm_out, stderr=subprocess.STDOUT)
        try:
            cancelled = fail_two_jobs(slurm, slurm_run)
            slurm_rc, local_rc = slurm_run.wait(timeout=1200), local_run.wait(timeout=900)
        finally:
            for run in (slurm_run, local_run):
                if run.poll() is None:
                    run.kill()
    seconds = time.monotonic() - start
    out = (root / 'slurm.out').read_text()
    assert slurm_rc == 0, out[-6000:]
    assert local_rc == 0, (root / 'local.out').read_text()[-6000:]
    print(f'\nSLURM and local runs of config/test.yaml together: {seconds:.0f} s')
    return Runs(slurm, out, local, cancelled, seconds)


# --- what the SLURM jobs ran ----------------------------------------------------------------------

@dataclass
class Step:
    """A rule job as the job step's Snakemake ran it inside a SLURM job."""
    rule: str
    output: str     # its first output, relative to the working directory
    runtime: int    # minutes, as evaluated
    mem_mb: int
    finished: bool


def steps(slurm_log: Path) -> list[Step]:
    """The rule jobs a SLURM job ran, in order, from its log: each one's `localrule <rule>:` block."""
    found = []
    for part in re.split(r'^(?=localrule \w+:$)', slurm_log.read_text(), flags=re.M)[1:]:
        rule, block = re.match(r'localrule (\w+):\n((?: {4}.*\n)*)', part).groups()
        fields = dict(re.findall(r'^ {4}(\w+): (.*)$', block, flags=re.M))
        resources = dict(re.findall(r'(\w+)=([^,]+)', fields['resources']))
        found.append(Step(rule, fields['output'].split(', ')[0], int(resources['runtime']),
                          int(resources['mem_mb']), f'Finished jobid: 0 (Rule: {rule})' in part))
    return found


def command(slurm_log: Path) -> str:
    """The Snakemake command line the SLURM job ran (its first)."""
    return re.search(r'^  Command: (.*)$', slurm_log.read_text(), flags=re.M).group(1)


def minutes(time_limit: str) -> int:
    """squeue's time limit ([D-]H:MM:SS or M:SS) in minutes."""
    days, _, clock = time_limit.rpartition('-')
    parts = [int(p) for p in clock.split(':')]
    seconds = sum(p * 60 ** i for i, p in enumerate(reversed(parts)))
    return (int(days or 0) * 86400 + seconds) // 60


@dataclass
class SlurmJob:
    id: str
    job: str            # Snakemake's ID of the job or group it submitted
    record: dict        # squeue's
    steps: list[Step]
    log: Path


def slurm_jobs(runs: Runs) -> list[SlurmJob]:
    """Every SLURM job of the run, in submission order; their IDs, squeue's and the executor's, must agree."""
    run_id = re.search(r'^SLURM run ID: (\S+)$', runs.out, flags=re.M).group(1)
    records = {job['id']: job for job in squeue('--states=all', '--name', run_id)}
    submitted = re.findall(r'^Job (\S+) has been submitted with SLURM jobid (\d+) \(log: (.+)\)\.$',
                           runs.out, flags=re.M)
    assert sorted(records) == sorted(slurm_id for _, slurm_id, _ in submitted), (records, submitted)
    return [SlurmJob(slurm_id, job, records[slurm_id], steps(Path(log)), Path(log))
            for job, slurm_id, log in submitted]


def expected_jobs(local: Path) -> dict[str, tuple[str, Path]]:
    """First output -> (rule, its log file), for every non-local job of the design (from the local run).

    The log is the job's command's own output (`> {log}`): written only while the command runs. (Outputs
    and benchmark files are no evidence: Snakemake touches them on the submitting host when a job ends.)
    """
    logs = TEST_RESULTS / 'logs'
    jobs = {str(TEST_RESULTS / 'base_agent.pt'): ('base_agent', logs / 'base_agent.log'),
            str(TEST_RESULTS / 'claims.md'): ('aggregate', logs / 'aggregate.log')}
    for kind, rule in (('runs', 'train'), ('experiments', 'experiment')):
        for run in sorted((local / TEST_RESULTS / kind).glob('*/seed~*/run.json')):
            name, seed = run.parent.parent.name, run.parent.name
            jobs[str(run.relative_to(local))] = (rule, logs / kind / name / f'{seed}.log')
    for critic in sorted((local / TEST_RESULTS / 'critics').glob('seed~*.pt')):
        jobs[str(critic.relative_to(local))] = ('warm_critic', logs / 'critics' / f'{critic.stem}.log')
    return jobs


def seed_of(output: str) -> str:
    return re.search(r'seed~(\d+)', output).group(1)


def test_every_job_ran_in_a_completed_slurm_job_grouped_by_seed(runs):
    jobs, expected = slurm_jobs(runs), expected_jobs(runs.local)
    assert {rule for rule, _ in expected.values()} == SLURM_RULES  # the base agent, runs, experiments, aggregation
    completed = [job for job in jobs if job.record['state'] == 'COMPLETED']
    assert sorted(job.id for job in jobs if job not in completed) == sorted(runs.cancelled)
    finished_in = {}
    for job in completed:
        assert Path(job.record['workdir']) == runs.slurm, job.record
        assert job.steps and all(step.finished for step in job.steps), job.log
        for step in job.steps:
            assert step.output not in finished_in, (step, job.id, finished_in.get(step.output))
            finished_in[step.output] = job
    assert sorted(finished_in) == sorted(expected)
    for output, (rule, log) in expected.items():
        job = finished_in[output]
        assert rule in {step.rule for step in job.steps}
        start, end = (datetime.fromisoformat(job.record[key]).timestamp() for key in ('start', 'end'))
        written = (runs.slurm / log).stat().st_mtime
        assert start - 1 <= written <= end + 1, (job.record, log, written)  # squeue's times are to the second
    # each SLURM job: one job of an ungrouped rule, or one seed's critic with its PPO runs, or a REINFORCE run
    for job in completed:
        rules = sorted({step.rule for step in job.steps})
        if rules[0] in ('warm_critic', 'train'):
            assert job.record['comment'] == f'rule_{GROUP}_' + '_'.join(rules), job.record
            assert len({seed_of(step.output) for step in job.steps}) == 1, job.steps
            trains = [step.output for step in job.steps if step.rule == 'train']
            if 'warm_critic' in rules:
                assert job.steps[0].rule == 'warm_critic' and not any('/algorithm~reinforce/' in t for t in trains), job.steps
            else:
                assert len(job.steps) == 1 and '/algorithm~reinforce/' in trains[0], job.steps
        else:
            assert len(job.steps) == 1 and job.record['comment'].startswith(f'rule_{rules[0]}'), job.record
        # one CPU, a group's jobs one after another: the sum of their runtimes, the most memory of one
        assert job.record['cpus'] == '1', job.record
        assert minutes(job.record['time_limit']) == sum(step.runtime for step in job.steps), (job.record, job.steps)
        assert job.record['memory'] == f'{max(step.mem_mb for step in job.steps)}M', job.record
    # every PPO run shares the SLURM job of its seed's critic: fewer SLURM jobs than grouped jobs
    for output, (rule, _) in expected.items():
        if rule == 'train' and '/algorithm~reinforce/' not in output:
            assert finished_in[output] is finished_in[str(TEST_RESULTS / 'critics' / f'seed~{seed_of(output)}.pt')]
    grouped = [output for output, (rule, _) in expected.items() if rule in ('warm_critic', 'train')]
    group_jobs = {finished_in[output].id for output in grouped}
    assert len(group_jobs) < len(grouped)
    print(f'\nSLURM jobs: {len(jobs)} ({len(runs.cancelled)} cancelled and retried) for {len(expected)} rule jobs; '
          f'{len(group_jobs)} of the completed ones for {len(grouped)} critic and trainer jobs')
    # the local rules ran on the submitting host, not as SLURM jobs (the failed jobs' logs it shows left out)
    own = re.sub(r'^Logfile .*:\n(={80})\n.*?^\1$', '', runs.out, flags=re.M | re.S)
    local_rules = re.findall(r'^local(?:rule|checkpoint) (\w+):$', own, flags=re.M)
    assert sorted(local_rules) == ['all', 'basis', 'cell_config', 'cell_config', 'cell_config', 'critic_config',
                                   'stage', 'stage'], local_rules


def test_a_job_killed_on_its_node_is_retried_without_rerunning_what_finished(runs):
    jobs = slurm_jobs(runs)
    assert sorted(runs.cancelled.values()) == ['experiment', 'group'], runs.cancelled
    retried = set()
    for cancelled in (job for job in jobs if job.id in runs.cancelled):
        assert cancelled.record['state'] == 'CANCELLED', cancelled.record
        assert f'Trying to restart job {cancelled.job}.' in runs.out
        first, retry = [job for job in jobs if job.job == cancelled.job]  # submitted twice: the retry last
        assert (first, retry.record['state']) == (cancelled, 'COMPLETED'), retry.record
        assert '--attempt 1 ' in command(first.log) and '--attempt 2 ' in command(retry.log)
        targets = re.compile(r'--target-jobs (.*?) --allowed-rules')
        assert targets.search(command(first.log)).group(1) == targets.search(command(retry.log)).group(1)
        # killed before all its jobs finished; the retry runs them all
        assert {s.output for s in first.steps if s.finished} < {s.output for s in retry.steps}, (first.log, retry.log)
        if runs.cancelled[first.id] == 'group':
            # the critic had finished; a retried group runs all its jobs again, the critic too
            assert (first.steps[0].rule, first.steps[0].finished) == ('warm_critic', True), first.steps
        else:
            assert [s.rule for s in retry.steps] == ['experiment'] and not any(s.finished for s in first.steps)
        outputs = {step.output for step in retry.steps}
        assert {job.id for job in jobs for step in job.steps if step.output in outputs} <= {first.id, retry.id}
        retried |= outputs
    # no job another SLURM job ran is run again: each job outside the two retries started exactly once
    started = [step.output for job in jobs for step in job.steps if step.output not in retried]
    assert sorted(started) == sorted(set(expected_jobs(runs.local)) - retried)
    assert len(jobs) == len({job.job for job in jobs}) + 2  # two retries, no other second submission


def test_both_stages_ran_through_slurm(runs):
    for stage in (1, 2):
        path = TEST_RESULTS / 'stages' / f'stage~{stage}.json'
        assert (runs.slurm / path).read_text() == (runs.local / path).read_text(), path
    first, second = (json.loads((runs.slurm / TEST_RESULTS / 'stages' / f'stage~{s}.json').read_text())
                     for s in (1, 2))
    assert (set(first['seeds'].values()), set(first['next'].values()), second['next']) == ({2}, {3}, {})
    seeds = {}
    for run in (runs.slurm / TEST_RESULTS).glob('*/*/seed~*/run.json'):
        seeds.setdefault(run.parent.parent.name, set()).add(run.parent.name)
    grown = set(first['next'])
    assert grown and {name: len(s) for name, s in seeds.items()} == {name: 3 if name in grown else 2 for name in seeds}


def test_slurm_results_equal_a_local_runs_number_for_number(runs):
    slurm, local = runs.slurm, runs.local
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
