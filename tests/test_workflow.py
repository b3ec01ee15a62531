"""The Snakemake workflow: lint, the default design's size, config validation, and the test design end to end.

Every workflow run happens in its own working directory under tmp_path (--directory), from the
repository's Snakefile and profile, so that its .snakemake metadata and locks are its own. Jobs
import agentrl and analysis from the repository (PYTHONPATH) and call `python` from this venv.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
import yaml
from checkout import copy_checkout
from agentrl.numerics.golden import comparable_csv, comparable_run

from agentrl.numerics import NUMERICS_VERSION
from workflow.design import (AXES, baseline_name, cell_json, config_schema, expand_design, json_types,
                             load_design)
from workflow.plan import COSTS_FILE, DesignError, seed_plan
from workflow.state import basis, basis_file, published, record_rows

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CONFIG = REPO / 'config' / 'config.yaml'
TEST_CONFIG = REPO / 'config' / 'test.yaml'
TEST_RESULTS = yaml.safe_load(TEST_CONFIG.read_text())['results_dir']
BASELINE_CELL = 'baseline'
TEST_CELLS = [BASELINE_CELL, 'lam~0.95', 'algorithm~reinforce']
# a budgeted test design: the greedy rule from 2 seeds, batches of 0.05 and a budget of 0.3 fixed 10-seed designs
GREEDY = dict(initial=2, max=4, policy='greedy', batch=0.05, budget=0.3)


def environment() -> dict:
    env = dict(os.environ)
    env['PATH'] = os.pathsep.join([str(Path(sys.executable).parent), env.get('PATH', '')])
    env['PYTHONPATH'] = os.pathsep.join(p for p in (env.get('PYTHONPATH'), str(REPO)) if p)
    return env


def command(workdir: Path, config: Path, *args) -> list[str]:
    return [sys.executable, '-m', 'snakemake', '--snakefile', str(REPO / 'Snakefile'), '--directory', str(workdir),
            '--configfile', str(config),
            '--profile', str(REPO / 'workflow' / 'profiles' / 'default'), *map(str, args)]


def snakemake(workdir: Path, *args, config: Path = TEST_CONFIG, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run snakemake in workdir; stdout and stderr together in .stdout. A budgeted design prices its batches by its
    cost table: the published one of its results folder is put beside its results in workdir, where it has one."""
    workdir.mkdir(parents=True, exist_ok=True)
    give_cost_table(workdir, config)
    return subprocess.run(command(workdir, config, *args), cwd=REPO, env=environment(), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=timeout)


def give_cost_table(workdir: Path, config: Path) -> None:
    """The published cost table of a budgeted design's results folder, copied to the same folder under workdir."""
    try:
        design = load_design(config)
        budgeted = seed_plan(design).budgeted
    except (DesignError, OSError):
        return  # a bad design: it stops before any job
    results = design.get('results_dir', 'results')
    published, there = REPO / results / COSTS_FILE, workdir / results / COSTS_FILE
    if budgeted and published.is_file() and not there.exists():
        there.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(published, there)


def succeeded(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 0, result.stdout[-6000:]
    return result.stdout


def dry_run_jobs(workdir: Path, *args, config: Path = TEST_CONFIG) -> list[tuple[str, str]]:
    """(rule, first output) of every job a dry run lists."""
    out = succeeded(snakemake(workdir, '--dry-run', *args, config=config))
    jobs = re.findall(r'^(?:local)?(?:rule|checkpoint) (\w+):\n(?:    .*\n)*?    output: ([^,\n]+)', out, flags=re.M)
    rules = re.findall(r'^(?:local)?(?:rule|checkpoint) (\w+):$', out, flags=re.M)
    assert len(jobs) == len(rules) - rules.count('all'), out[-3000:]
    return sorted(jobs + [('all', '')] * rules.count('all'))


def test_the_more_seeds_verb_plans_exactly_the_seeds_asked_for_one_cell(tmp_path):
    """`python -m workflow.seeds baseline 4`, then a dry run of its targets: baseline's seeds 0-3 and what they
    need (base agent, its config, the critic's config and one warmed critic a seed), nothing of another cell."""
    verb = [sys.executable, '-m', 'workflow.seeds']
    design = ['--configfile', str(TEST_CONFIG)]
    targets = subprocess.run([*verb, BASELINE_CELL, '4', *design], cwd=tmp_path, env=environment(), check=True,
                             stdout=subprocess.PIPE, text=True).stdout.split()
    assert targets == [f'{TEST_RESULTS}/runs/{BASELINE_CELL}/seed~{seed}/run.json' for seed in range(4)]
    jobs = dry_run_jobs(tmp_path, *targets)
    assert [output for rule, output in jobs if rule == 'train'] == targets
    assert sorted({rule for rule, _ in jobs}) == ['base_agent', 'cell_config', 'critic_config', 'train', 'warm_critic']
    assert sum(rule == 'warm_critic' for rule, _ in jobs) == 4
    unknown = subprocess.run([*verb, 'lam~0.5', '4', *design], cwd=tmp_path, env=environment(), capture_output=True, text=True)
    assert unknown.returncode == 2 and unknown.stderr.splitlines()[-1] == (
        'python -m workflow.seeds: error: cell or experiment lam~0.5 is not in this design; did you mean lam~0.95?')


def looks_basis(config: Path) -> str:
    """The basis file of a design's looks (workflow/state.py), as the workflow names it."""
    design = load_design(config)
    return basis_file(design['results_dir'], basis(design, NUMERICS_VERSION))


def write_config(path: Path, **changes) -> Path:
    """The test config with top-level keys replaced (a key given None is removed)."""
    config = yaml.safe_load(TEST_CONFIG.read_text())
    for key, value in changes.items():
        if value is None:
            config.pop(key, None)
        else:
            config[key] = value
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


# --- static checks and dry runs --------------------------------------------------------------

def test_lint_has_no_findings(tmp_path):
    result = snakemake(tmp_path, '--lint', config=DEFAULT_CONFIG)
    out = succeeded(result)
    assert 'Lints for' not in out and 'Congratulations, your workflow is in a good condition' in out, out


def test_default_dry_run_plans_the_first_stage_of_its_budgeted_design(tmp_path):
    config = yaml.safe_load(DEFAULT_CONFIG.read_text())
    plan = seed_plan(config)
    cells, seeds, experiments = len(expand_design(config)), plan.looks[0], len(config['experiments'])
    # from nothing (no records in the working directory; the design's cost table beside its results), every run of
    # the first stage: trainer runs, experiment runs, base agent, one config file per cell, PPO's critic (its config
    # file and one warmed critic per seed), the looks' basis, the first look, the aggregation and all
    expected = cells * seeds + experiments * seeds + 1 + cells + 1 + seeds + 1 + 1 + 1 + 1
    assert plan.budgeted and (seeds, plan.max_seeds) == (5, 40)
    out = succeeded(snakemake(tmp_path, '--dry-run', '--quiet', 'rules', config=DEFAULT_CONFIG))
    counts = dict(re.findall(r'^(\w+)\s+(\d+)$', out, flags=re.M))
    assert int(counts['total']) == expected, out
    assert (int(counts['train']), int(counts['cell_config']), int(counts['stage'])) == (cells * seeds, cells, 1)
    assert (int(counts['warm_critic']), int(counts['critic_config'])) == (seeds, 1)
    readme = (REPO / 'README.md').read_text().split('## The workflow')[-1]
    assert f'{expected} jobs' in readme, 'README.md, section "The workflow", must state the dry run job count'


def test_an_axis_is_added_by_editing_two_files(tmp_path):
    """A trainer field not yet swept (gamma) becomes an axis with two edits: its entry in AXES and its baseline level
    and sweep in config/config.yaml. The schema, the test design and every other cell's name follow; the workflow
    plans the new cell's first stage and the analysis labels it `gamma=0.99`."""
    clone = copy_checkout(tmp_path / 'clone')
    registry = clone / 'workflow' / 'design.py'
    entry = "    Axis('gamma', PPO, _number(minimum=0, maximum=1), 'the discount'),\n"
    registry.write_text(registry.read_text().replace("    Axis('kl_penalty',", entry + "    Axis('kl_penalty',", 1))
    design = yaml.safe_load(DEFAULT_CONFIG.read_text())
    design['baseline']['gamma'], design['sweeps']['gamma'] = 1.0, [1.0, 0.99]
    design['seeds'] = list(range(10))  # a fixed design: a budgeted one would need the new cell priced first
    (clone / 'config' / 'config.yaml').write_text(yaml.safe_dump(design, sort_keys=False))
    env = {**environment(), 'PYTHONPATH': str(clone)}

    def planned_runs(config: str) -> set[str]:
        out = succeeded(subprocess.run([sys.executable, '-m', 'snakemake', '--dry-run', '--configfile', config],
                                       cwd=clone, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                       timeout=600))
        outputs = re.findall(r'^rule train:\n(?:    .*\n)*?    output: (\S+)', out, flags=re.M)
        return {path.split('/')[-3] for path in outputs}

    before = expand_design(load_design(DEFAULT_CONFIG))
    # the cells whose first stage the published records hold run nothing again: only the new cell's first stage runs
    held = published(record_rows(REPO / 'results' / 'records'), before, [], NUMERICS_VERSION)
    lacking = {name for name in before if not set(seed_plan(design).seeds_at(1)) <= held.get(name, set())}
    assert planned_runs('config/config.yaml') == {*lacking, 'gamma~0.99'}
    assert planned_runs('config/test.yaml') == set(TEST_CELLS)  # it extends the default: gamma at its baseline
    label = subprocess.run([sys.executable, '-c',
                            'from analysis.pages.figures import level_name; from analysis.stats.cells import '
                            'axes; from workflow.design import expand_design, load_design; '
                            'cells = {n: c.values for n, c in expand_design(load_design("config/config.yaml")).items()}; '
                            'print(axes(cells, "baseline")["gamma"], level_name("gamma", 0.99))'],
                           cwd=clone, env=env, check=True, stdout=subprocess.PIPE, text=True).stdout
    assert label.strip() == "['gamma~0.99'] gamma=0.99"


def test_a_substrate_design_runs_every_job_on_its_substrate_in_its_own_results_folder(tmp_path):
    """config/substrates/larger.yaml: its first stage, each agentrl job given --substrate larger, every file under its
    results folder; the default design's records are not its records (its cost table is: a budgeted design prices
    its batches by it)."""
    design = load_design(REPO / 'config' / 'substrates' / 'larger.yaml')
    table = tmp_path / design['results_dir'] / 'costs.csv'
    table.parent.mkdir(parents=True)
    shutil.copy(REPO / design['results_dir'] / 'costs.csv', table)
    assert design['results_dir'] == 'results/substrates/larger' and design['baseline']['substrate'] == 'larger'
    def named(cells):  # every cell but the lr sweep's, whose names are the rates at the design's scale
        return [name for name in cells if not name.startswith('lr~')]
    assert named(expand_design(design)) == named(expand_design(load_design(DEFAULT_CONFIG)))
    out = succeeded(snakemake(tmp_path, '--dry-run', '--printshellcmds', config=REPO / 'config' / 'substrates' /
                              'larger.yaml'))
    commands = re.findall(r'^Shell command: python -m agentrl (.*)$', out, flags=re.M)
    cells, seeds = len(expand_design(design)), seed_plan(design).looks[0]
    assert len(commands) == 1 + seeds + (cells + len(design['experiments'])) * seeds, out[-3000:]
    assert all('--substrate larger' in line and 'results/substrates/larger/' in line for line in commands)


def test_a_fourth_substrate_is_added_as_the_readme_says(tmp_path):
    """README.md, "Substrates": an entry in SUBSTRATES and a design file under config/substrates/. The clone's design
    plans every job on the new substrate in its own folder, and its agent samples an episode of its tasks: nothing
    else changed."""
    clone = copy_checkout(tmp_path / 'clone')
    registry = clone / 'agentrl' / 'world' / 'substrates.py'
    entry = "    Substrate('tiny', 'a test substrate: a narrower, shallower TinyAgent', d_model=16, n_layers=1),\n"
    source = registry.read_text()
    assert source.count('\n)}\n') == 1, 'agentrl/world/substrates.py: SUBSTRATES must end with a line ")}"'
    registry.write_text(source.replace('\n)}\n', '\n' + entry + ')}\n'))
    design = clone / 'config' / 'substrates' / 'tiny.yaml'
    design.write_text('extends: config/config.yaml\nresults_dir: results/substrates/tiny\nbaseline:\n  substrate: tiny\n'
                      f'seeds: {list(range(10))}\n')  # fixed: a budgeted design would need its cost table measured
    env = {**environment(), 'PYTHONPATH': str(clone)}
    out = succeeded(subprocess.run([sys.executable, '-m', 'snakemake', '--dry-run', '--printshellcmds', '--configfile',
                                    str(design)], cwd=clone, env=env, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True, timeout=600))
    commands = re.findall(r'^Shell command: python -m agentrl (.*)$', out, flags=re.M)
    assert commands and all('--substrate tiny' in line and 'results/substrates/tiny/' in line for line in commands)
    sampled = subprocess.run([sys.executable, '-c',
                              'import torch; from agentrl.learning.base_agent import base_model_config; '
                              'from agentrl.agent.model import TinyAgent; from agentrl.agent.sampler import sample_tasks; '
                              'from agentrl.world.substrates import substrate; family = substrate("tiny").family; '
                              'tok = family.tokenizer(); torch.manual_seed(0); '
                              'model = TinyAgent(base_model_config(tok, "tiny")); '
                              'trajs = sample_tasks(model, family.tasks("train")[:1], 1, tok, '
                              'torch.Generator().manual_seed(0), family.new_env); '
                              'print(sum(p.numel() for p in model.parameters()), len(trajs))'],
                             cwd=clone, env=env, check=True, stdout=subprocess.PIPE, text=True).stdout.split()
    assert int(sampled[0]) < 45_760 and sampled[1] == '1'  # fewer parameters than the tinyagent; one episode


def test_the_stages_and_jobs_are_bounded_by_max():
    out = subprocess.run([sys.executable, '-m', 'workflow.design', 'stages', '--configfile', str(DEFAULT_CONFIG)],
                         cwd=REPO, env=environment(), check=True, stdout=subprocess.PIPE, text=True).stdout
    config = yaml.safe_load(DEFAULT_CONFIG.read_text())
    sources = len(expand_design(config)) + len(config['experiments'])
    plan = seed_plan(config)
    assert plan.budgeted and plan.stages == 12  # the first stage (0.5 of the budget), 10 batches of 0.25 and one more
    assert f"seeds per cell or experiment at each stage's look [5], then each its own; at most 12 stages and " \
        f"{sources * 40} run jobs ({sources} cells and experiments x 40 seeds)" in out, out
    assert seed_plan({'seeds': {'initial': 10, 'step': 7, 'max': 40}}).looks == (10, 17, 24, 31, 38, 40)
    assert seed_plan({'seeds': [3, 5]}).seeds_at(1) == [3, 5] and not seed_plan({'seeds': [3, 5]}).staged


def test_ppo_runs_of_a_seed_share_one_warmed_critic_and_reinforce_runs_take_none(tmp_path):
    out = succeeded(snakemake(tmp_path, '--dry-run', '--printshellcmds', config=TEST_CONFIG))
    trains = re.findall(r'python -m agentrl train .*$', out, flags=re.M)
    assert len(trains) == len(TEST_CELLS) * 2
    for line in trains:
        seed = re.search(r'--seed (\d+)', line).group(1)
        critic = f"--critic '{TEST_RESULTS}/critics/seed~{seed}.pt'"
        ppo = 'algorithm~reinforce' not in line
        assert (critic in line) == ppo and ('--critic' in line) == ppo, line
    warms = re.findall(r'python -m agentrl warm-critic .*$', out, flags=re.M)
    assert sorted(re.search(r'--seed (\d+)', line).group(1) for line in warms) == ['0', '1']


def test_default_cell_paths_name_where_the_cell_differs_from_the_baseline(tmp_path):
    outputs = {output for _, output in dry_run_jobs(tmp_path, config=DEFAULT_CONFIG)}
    for run in ('baseline/seed~0', 'lam~0.95/seed~3', 'epochs~8_minibatches~8/seed~4', 'lr~0.0005/seed~0', 'kl_penalty~1/seed~0',
                'value_clip~none/seed~0', 'algorithm~reinforce/seed~0'):
        assert f'results/runs/{run}/run.json' in outputs, run
    assert 'results/experiments/staleness/seed~4/run.json' in outputs


def test_the_same_design_listed_differently_gives_the_same_jobs(tmp_path):
    """Ints for floats, reordered levels, a cell listed twice: the same cells, paths and config contents."""
    config = yaml.safe_load(TEST_CONFIG.read_text())
    variant = write_config(tmp_path / 'variant.yaml', baseline={**config['baseline'], 'lam': 1},
                           sweeps={'lam': [0.95, 1.0], 'algorithm': ['reinforce', 'ppo']},
                           factorial=[{'lam': [1, 0.950], 'epochs': [2]}])
    assert dry_run_jobs(tmp_path / 'a', config=variant) == dry_run_jobs(tmp_path / 'b', config=TEST_CONFIG)


def test_a_design_file_is_the_whole_design_from_a_clones_root(tmp_path):
    """From the root of a clone, beside config/config.yaml: --configfile plans its design alone (no merge, no extra flag)."""
    clone = copy_checkout(tmp_path / 'clone')
    out = succeeded(subprocess.run([sys.executable, '-m', 'snakemake', '--dry-run', '--quiet', 'rules',
                                    '--configfile', 'config/test.yaml'], cwd=clone, env=environment(),
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300))
    counts = dict(re.findall(r'^(\w+)\s+(\d+)$', out, flags=re.M))
    # the first stage: 3 cells x 2 seeds, 1 experiment x 2 seeds, 3 cell configs, base agent, critic config,
    # 2 warmed critics, the looks' basis, its look; aggregation, all
    assert (int(counts['total']), int(counts['train']), int(counts['experiment'])) == (19, 6, 2), out


def clone_dry_run(clone: Path, *args) -> str:
    """A dry run in a clone, from its root with the default profile, as the README gives it: its output."""
    return succeeded(subprocess.run([sys.executable, '-m', 'snakemake', '--profile', 'workflow/profiles/default',
                                     '--cores', '2', '--dry-run', *map(str, args)], cwd=clone, env=environment(),
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300))


def planned(out: str) -> list[str]:
    """The line after each job stats' total row: the runs planned and their cost."""
    return re.findall(r'^total\s+\d+\n(.*)$', out, flags=re.M)


COST_TABLE = (r'CPU s of jobs by the cost table results/costs\.csv \(CPU seconds of one job, measured (?:\S+; )*\S+ on .+, '
              r'numerics version \d+\)')


def test_every_dry_run_ends_its_job_stats_with_the_runs_planned_and_their_cpu_seconds(tmp_path):
    """On the published records: the default design plans no run; a cell forced, or a level added, is priced by the
    cost table, runs and warmed critics (a level the table lacks named); a design without a table says so."""
    clone = copy_checkout(tmp_path / 'clone')
    assert set(planned(clone_dry_run(clone))) == {'no run planned'}
    forced = clone_dry_run(clone, '--force', *[f'results/runs/lam~0.95/seed~{seed}/run.json' for seed in range(10)])
    assert re.fullmatch(rf'10 runs and 10 warmed critics planned: about [\d,]+ {COST_TABLE}', planned(forced)[-1])
    (clone / 'added.yaml').write_text('extends: config/config.yaml\nsweeps: {lam: [1.0, 0.95, 0.9, 0.8]}\n'
                                      f'seeds: {list(range(10))}\n')  # fixed: its dry run prices what it can
    added = planned(clone_dry_run(clone, '--configfile', 'added.yaml'))[-1]
    assert re.fullmatch(rf'10 runs and 10 warmed critics planned: about [\d,]+ {COST_TABLE}; 10 runs not counted: the '
                        r'cost table lacks lam~0\.8', added)
    staged = clone_dry_run(clone, '--configfile', TEST_CONFIG.relative_to(REPO))
    assert planned(staged)[-1] == (
        '8 runs planned, none priced: the records hold no run of algorithm~reinforce, baseline, clip_gradients, '
        'lam~0.95; no cost table (python -m workflow.costs measures one)')
    assert 'stage 1 of at most 2: 3 cells and 1 experiments to 2 seeds, 8 runs added, 8 to make (the others are ' \
           'published or here)\n' in staged


def spawned_job(workdir: Path, parent_design: dict, config: Path) -> subprocess.CompletedProcess:
    """A dry run of Snakemake as a spawned job (--mode remote, as a SLURM job step starts it) under a parent's design."""
    env = {**environment(), 'AGENTRL_DESIGN': json.dumps(parent_design, sort_keys=True)}
    return subprocess.run([sys.executable, '-m', 'snakemake', '--mode', 'remote', '--nolock', '--dry-run',
                           '--snakefile', str(REPO / 'Snakefile'), '--directory', str(workdir),
                           '--configfile', str(config)],
                          cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)


def test_a_job_whose_design_is_not_its_parents_stops_naming_the_difference(tmp_path):
    result = spawned_job(tmp_path, load_design(DEFAULT_CONFIG), TEST_CONFIG)
    assert result.returncode != 0
    assert "this job's design is not the one its parent planned" in result.stdout, result.stdout[-3000:]
    for difference in ('baseline.epochs: 4 -> 2', 'trainer.iterations: 30 -> 2',
                       'results_dir: "results" -> "results/small"'):
        assert difference in result.stdout, result.stdout[-3000:]
    same = spawned_job(tmp_path, load_design(TEST_CONFIG), TEST_CONFIG)
    assert same.returncode == 0, same.stdout[-3000:]


def fault_lines(output: str, design: Path) -> list[str]:
    """The lines of Snakemake's output that name the design file; none where a schema or a traceback is printed."""
    assert 'Traceback' not in output and 'Error' not in output and 'schema' not in output, output[-3000:]
    return [line for line in output.splitlines() if line.startswith(f'{design}: ')]


@pytest.mark.parametrize('changes, lines', [
    (dict(seed=[0]), ['seed: unknown key; did you mean seeds or sweeps?']),
    (dict(trainer=dict(iteration=2, iterations=2, episodes_per_iteration=16)),
     ['trainer.iteration: unknown key; did you mean iterations?']),
    (dict(baseline=dict(yaml.safe_load(TEST_CONFIG.read_text())['baseline'], lamda=0.5, epochs=0)),
     ['baseline.lamda: unknown key; did you mean lam?', 'baseline.epochs = 0: at least 1']),
    (dict(sweeps={'lam': [0.95, 2]}), ['sweeps.lam[1] = 2: at most 1']),
    (dict(sweeps={'lambda': [0.95]}), ['sweeps.lambda: unknown key; did you mean lam?']),
    (dict(sweeps={'target_kl': [0]}), ['sweeps.target_kl[0] = 0: more than 0']),
    (dict(seeds=[0, 1, 1]), ['seeds = [0, 1, 1]: each item once']),
    (dict(seeds={'initial': 10, 'step': 5, 'max': -5}), ['seeds.max = -5: at least 2']),
    (dict(seeds={'initial': 10, 'step': 5, 'max': 5, 'policy': 'every source'}), ['seeds: max=5 is less than initial=10']),
    (dict(seeds=dict(GREEDY, policy='greed')),
     ['seeds.policy = "greed": one of every source, greedy, greedy in steps; did you mean greedy?']),
    (dict(seeds={**{key: value for key, value in GREEDY.items() if key != 'budget'}, 'policy': 'greedy in steps',
                 'step': 5}),
     ['seeds.budget: missing (a required key)']),
    (dict(seeds=GREEDY), [f'seeds: a budgeted design prices its batches by its cost table, and '
                          f'{TEST_RESULTS}/costs.csv does not exist (python -m workflow.costs measures one)']),
    (dict(sweeps={'epochs': ['four']}), ['sweeps.epochs[0] = "four": an integer']),
    (dict(trainer=dict(early_stop='epochs', iterations=2, episodes_per_iteration=16)),
     ['trainer.early_stop = "epochs": one of epoch, minibatch; did you mean epoch?']),
    (dict(sweeps={'minibatches': [32]}),
     ['cell minibatches~32: minibatches=32 is more than episodes_per_iteration=16 (trainer or algorithms.ppo)']),
])
def test_a_bad_config_stops_before_any_job_with_a_line_per_fault(tmp_path, changes, lines):
    """Each line names the design file, the key, the value and what is allowed; no schema, no traceback."""
    config = write_config(tmp_path / 'bad.yaml', **changes)
    result = snakemake(tmp_path / 'work', '--cores', 1, config=config)
    assert result.returncode != 0
    assert fault_lines(result.stdout, config) == [f'{config}: {line}' for line in lines], result.stdout[-3000:]
    assert not (tmp_path / 'work' / TEST_RESULTS).exists()


@pytest.mark.parametrize('target, line', [
    (f'{TEST_RESULTS}/runs/lam~0.59/seed~0/run.json', 'cell lam~0.59 is not in this design; did you mean lam~0.95?'),
    (f'{TEST_RESULTS}/configs/lam~0.59.json', 'cell lam~0.59 is not in this design; did you mean lam~0.95?'),
    (f'{TEST_RESULTS}/experiments/clip_gradient/seed~0/run.json',
     'experiment clip_gradient is not in this design; did you mean clip_gradients?'),
    (f'{TEST_RESULTS}/experiments/surrogate/seed~0/run.json',
     'experiment surrogate is not in this design; it has: clip_gradients'),  # one of agentrl's, not the design's
    (f'{TEST_RESULTS}/runs/baseline/seed~abc/run.json',
     'seed~abc is not a seed: expected a whole number (seed~0, seed~1, ...)'),
    (f'{TEST_RESULTS}/experiments/clip_gradients/seed~-1/run.json',
     'seed~-1 is not a seed: expected a whole number (seed~0, seed~1, ...)'),
])
def test_a_target_the_design_lacks_stops_in_one_line_naming_the_close_names(tmp_path, target, line):
    result = snakemake(tmp_path, '--dry-run', '--force', target)
    assert result.returncode != 0
    assert fault_lines(result.stdout, TEST_CONFIG) == [f'{TEST_CONFIG}: {line}']


def test_a_design_extending_one_that_is_not_yaml_stops_in_one_line_naming_its_file_and_line(tmp_path):
    bad, design = tmp_path / 'bad.yaml', tmp_path / 'design.yaml'
    bad.write_text('extends: config/test.yaml\nseeds: [0, 1\nresults_dir: results/x\n')  # the list is not closed
    design.write_text(f'extends: {bad}\n')
    result = snakemake(tmp_path / 'work', '--dry-run', config=design)
    assert result.returncode != 0 and fault_lines(result.stdout, design) == [
        f"{design}: {bad}:3: could not parse YAML: expected ',' or ']', but got ':' (while parsing a flow sequence, "
        'line 2)']


def test_the_schema_knows_every_trainconfig_field():
    from agentrl.learning.config import TrainConfig
    from agentrl.chapter.experiments import EXPERIMENTS
    schema = config_schema()
    trainer = set(schema['$defs']['trainer']['properties'])
    assert trainer | set(AXES) | {'seed'} == set(TrainConfig.__dataclass_fields__)
    assert set(schema['$defs']['axes']) == set(schema['properties']['baseline']['properties']) == set(AXES)
    assert set(schema['$defs']['levels']['properties']) == set(AXES)
    assert schema['properties']['experiments']['items']['enum'] == list(EXPERIMENTS)
    defaults = TrainConfig().to_dict()
    config = yaml.safe_load(DEFAULT_CONFIG.read_text())
    assert {k: defaults[k] for k in config['trainer']} == config['trainer'], 'the default trainer: the chapter defaults'


def probes(schema: dict) -> list[tuple[object, bool]]:
    """(value, whether the schema fragment allows it) at each edge of a fragment's range, type and choices."""
    if 'enum' in schema:
        return [(value, True) for value in schema['enum']] + [('no-such-value', False)]
    kinds = json_types(schema)
    if kinds <= {'boolean'}:
        return [(True, True), (False, True)]
    step = 1 if 'integer' in kinds else 1e-9
    found = [(None, 'null' in kinds)]
    if 'minimum' in schema:
        found += [(schema['minimum'], True), (schema['minimum'] - step, False)]
    if 'exclusiveMinimum' in schema:
        found += [(schema['exclusiveMinimum'], False), (schema['exclusiveMinimum'] + step, True)]
    if 'maximum' in schema:
        found += [(schema['maximum'], True), (schema['maximum'] + step, False)]
    return found


# Fields whose range TrainConfig checks only together with another field's value.
CONTEXT = {'norm_const': {'loss_mode': 'seq_mean_token_sum_norm'}, 'loss_mode': {'norm_const': 1.0},
           'episodes_per_iteration': {'minibatches': 1}}


@pytest.mark.parametrize('name', sorted(set(AXES) | set(config_schema()['$defs']['trainer']['properties'])))
def test_the_schema_and_trainconfig_agree_on_every_range(name):
    from agentrl.learning.config import TrainConfig
    schema = config_schema()
    fragment = schema['$defs']['axes'].get(name) or schema['$defs']['trainer']['properties'][name]
    for value, allowed in probes(fragment):
        if value is None and name in CONTEXT:
            continue  # null is allowed or not by the other field (the schema cannot say)
        try:
            TrainConfig(**CONTEXT.get(name, {}), **{name: value})
            accepted = True
        except ValueError:
            accepted = False
        assert accepted == allowed, f'{name}={value!r}: the schema says {allowed}, TrainConfig {accepted}'


def test_every_cell_the_analysis_names_is_in_the_default_design():
    """A claim or chapter table naming a trainer cell that the design lacks would only ever be inconclusive. The
    design's cells are its config files as the cell_config rule writes them (workflow.design.cell_json)."""
    from analysis.stats.cells import select
    from analysis.ledger.chapter import load_chapter
    from analysis.ledger.claims import expand, load_claims
    cells = expand_design(load_design(DEFAULT_CONFIG))
    configs = {name: json.loads(cell_json(cell.values)) for name, cell in cells.items()}
    named = [spec['cell'] for claim in load_claims()['claims'] for spec in expand(claim['inputs']) if 'cell' in spec]
    named += [mapped.get('cell', {}) for table in load_chapter()['tables'].values()
              for mapped in table.get('cells', {}).values()]
    baseline = baseline_name(yaml.safe_load(DEFAULT_CONFIG.read_text()))
    assert baseline in configs and len(named) >= 40
    assert [cell for cell in named if select(configs, cell, baseline) is None] == []
    assert select(configs, {'clip_high': 0.35}, baseline) is None  # the check can fail


# --- the test design end to end --------------------------------------------------------------

def run_workflow(workdir: Path, cores: int) -> Path:
    succeeded(snakemake(workdir, '--cores', cores))
    return workdir


def copy_workdir(workdir: Path, target: Path) -> Path:
    """A copy of a finished working directory (results and .snakemake metadata, modification times kept)."""
    shutil.copytree(workdir, target, symlinks=True)
    return target


def test_end_to_end_from_base_agent_to_aggregation(parallel):
    results = parallel / TEST_RESULTS
    for cell in TEST_CELLS:
        config = json.loads((results / 'configs' / f'{cell}.json').read_text())
        for seed in (0, 1, 2):  # stage 2 gave every cell seed 2
            run = json.loads((results / 'runs' / cell / f'seed~{seed}' / 'run.json').read_text())
            assert (run['kind'], run['name'], run['seed']) == ('train', cell, seed)
            assert run['config'] == {**run['config'], **config, 'seed': seed}
            assert (results / 'logs' / 'runs' / cell / f'seed~{seed}.log').read_text().count('iter ') >= 2
            assert (results / 'benchmarks' / 'runs' / cell / f'seed~{seed}.tsv').exists()
    assert json.loads((results / 'configs' / 'algorithm~reinforce.json').read_text())['algorithm'] == 'reinforce'
    for seed in (0, 1):
        run = json.loads((results / 'experiments' / 'clip_gradients' / f'seed~{seed}' / 'run.json').read_text())
        assert (run['kind'], run['name'], run['seed']) == ('experiment', 'clip_gradients', seed)
    assert sorted(p.name for p in (results / 'runs').iterdir()) == sorted(TEST_CELLS)
    looks = [json.loads((results / 'stages' / f'stage~{k}.json').read_text()) for k in (1, 2)]
    assert [look['next'] for look in looks] == [dict.fromkeys(sorted(TEST_CELLS), 3), {}]
    assert [look['stop'] for look in looks] == ['', 'beyond max'] and 'cost_s' not in looks[0]
    # at 2 seeds, under min_seeds, every open claim asks for seeds; at 3, the max, none is projected within it
    assert looks[0]['open'] and looks[0]['beyond_max'] == [] and looks[1]['open'] == []
    assert set(looks[1]['decided']) | set(looks[1]['beyond_max']) == set(looks[0]['open'])
    assert (results / 'claims.md').read_text().startswith('# ')
    assert BASELINE_CELL in (results / 'README.md').read_text()
    assert list((results / 'tables').glob('*.csv')) and list((results / 'figures').glob('*.svg'))


def test_a_cells_config_file_can_be_made_by_hand(parallel):
    """`python -m workflow.design cell NAME` prints the file the workflow wrote, so a cell runs without Snakemake."""
    for cell in TEST_CELLS:
        by_hand = subprocess.run([sys.executable, '-m', 'workflow.design', 'cell', cell, '--configfile', str(TEST_CONFIG)],
                                 cwd=REPO, env=environment(), check=True, stdout=subprocess.PIPE, text=True).stdout
        assert by_hand == (parallel / TEST_RESULTS / 'configs' / f'{cell}.json').read_text()


CHROMIUM, CHROMEDRIVER = '/usr/bin/chromium', '/usr/bin/chromedriver'  # Debian's chromium, chromium-driver


def headless_chromium():
    """Selenium driving Debian's Chromium headless, without network side traffic (skips where either is missing)."""
    webdriver = pytest.importorskip('selenium.webdriver')
    from selenium.webdriver.chrome.service import Service
    if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
        pytest.skip(f'{CHROMIUM} or {CHROMEDRIVER} missing: on Debian, `apt-get install -y chromium chromium-driver`')
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ('--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-quic',
                 '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'):
        options.add_argument(flag)
    return webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))


def shows_every_figure(browser, report: Path, category: str, names: list[str]) -> None:
    """The report opened afresh: `category` lists exactly `names`, and each opens with its SVG rendered."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    browser.get(report.as_uri())
    wait = WebDriverWait(browser, 20)
    wait.until(lambda b: b.find_elements(By.XPATH, f"//*[text()='{category}']"))[0].click()
    listed = wait.until(lambda b: [td.text for td in b.find_elements(By.XPATH, '//tr/td[1]')])
    assert sorted(listed) == names, category
    for name in names:
        browser.find_element(By.XPATH, f"//td[text()='{name}']/..//a[@iconname='eye']").click()
        image = wait.until(lambda b: b.find_elements(By.XPATH, f"//img[contains(@src, '/{name}.svg')]"))[0]
        size = wait.until(lambda b: b.execute_script(
            'const i = arguments[0]; return i.complete && i.naturalWidth > 0 ? [i.naturalWidth, i.naturalHeight] : null;',
            image))
        assert min(size) > 100, (name, size)  # decoded and laid out, not a broken-image icon


def test_the_report_shows_every_figure_in_a_real_browser(parallel, tmp_path):
    """`snakemake --report report.zip`, unpacked and opened in headless Chromium: each figure is listed, opens, and its
    SVG renders from the archive's own data folder; so does the ledger's figure, and each claim's figure under the
    claim's id."""
    report = tmp_path / 'report.zip'
    succeeded(snakemake(parallel, '--report', report))
    with zipfile.ZipFile(report) as archive:
        assert archive.testzip() is None
        archive.extractall(tmp_path)
    figures = sorted(p.stem for p in (parallel / TEST_RESULTS / 'figures').glob('*.svg'))
    assert {'fig8_1', 'fig8_2', 'fig8_3', 'learning_curves', 'claims'} <= set(figures)
    from analysis.ledger.claims import load_claims
    claims = sorted(p.stem for p in (parallel / TEST_RESULTS / 'claims').glob('*.svg'))
    assert claims and set(claims) <= {c['id'] for c in load_claims()['claims']}
    assert sorted(p.stem for p in (tmp_path / 'report' / 'data').rglob('*.svg')) == sorted(figures + claims)
    page = tmp_path / 'report' / 'report.html'
    browser = headless_chromium()
    try:
        browser.set_window_size(1400, 1000)
        shows_every_figure(browser, page, 'Figures', figures)
        shows_every_figure(browser, page, 'Claim figures', claims)
    finally:
        browser.quit()


def test_rerun_after_a_complete_run_does_nothing(parallel):
    out = succeeded(snakemake(parallel, '--dry-run'))
    assert 'Nothing to be done' in out, out[-3000:]


def test_a_removed_run_is_read_from_the_records_and_one_they_lack_reruns(parallel, tmp_path):
    """Records are the state: a removed run directory the records hold is not rerun (its looks and the aggregation
    are, reading it from the records); removed from the records too, it reruns with the looks after it."""
    work = copy_workdir(parallel, tmp_path / 'work')
    shutil.rmtree(work / TEST_RESULTS / 'runs' / 'algorithm~reinforce' / 'seed~1')
    train = ('train', f'{TEST_RESULTS}/runs/algorithm~reinforce/seed~1/run.json')
    planned = dry_run_jobs(work)  # the look after stage 2 waits for the first (a checkpoint): the run remakes both
    assert ('stage', f'{TEST_RESULTS}/stages/stage~1.json') in planned and ('aggregate', f'{TEST_RESULTS}/claims.md') \
        in planned and not [job for job in planned if job[0] in ('train', 'experiment')]
    looks = [f'{TEST_RESULTS}/stages/stage~1.json', f'{TEST_RESULTS}/stages/stage~2.json']
    out = succeeded(snakemake(work, '--cores', 2))
    assert re.findall(r'^(?:local)?checkpoint stage:\n(?:    .*\n)*?    output: (\S+)', out, flags=re.M) == looks
    assert not re.findall(r'^(?:local)?rule train:', out, flags=re.M)
    shutil.rmtree(work / TEST_RESULTS / 'records')
    assert [job for job in dry_run_jobs(work) if job[0] == 'train'] == [train]
    out = succeeded(snakemake(work, '--cores', 2))
    assert re.findall(r'^(?:local)?checkpoint stage:\n(?:    .*\n)*?    output: (\S+)', out, flags=re.M) == looks
    assert len(re.findall(r'^(?:local)?rule train:', out, flags=re.M)) == 1


def test_a_design_stopped_half_way_is_published_by_the_records_target_and_continued_from_them(parallel, tmp_path):
    """`snakemake records` adds the design's runs made so far to its records (not a run outside the design); a clone
    holding only those records plans exactly the run they lack."""
    work = copy_workdir(parallel, tmp_path / 'work')
    results = work / TEST_RESULTS
    shutil.rmtree(results / 'records')
    shutil.rmtree(results / 'runs' / 'algorithm~reinforce' / 'seed~1')  # not made yet
    shutil.copytree(results / 'runs' / BASELINE_CELL / 'seed~0', results / 'runs' / 'not~a-cell' / 'seed~0')
    out = succeeded(snakemake(work, '--cores', 1, 'records'))
    assert not re.findall(r'^(?:local)?(?:rule|checkpoint) (?!records:)', out, flags=re.M)  # nothing but the records
    made = sorted((p.parent.parent.name, int(p.parent.name.split('~')[1])) for p in results.glob('*/*/seed~*/run.json')
                  if p.parent.parent.name != 'not~a-cell')
    assert sorted((row['name'], row['seed']) for row in record_rows(results / 'records')) == made
    for folder in ('runs', 'experiments', 'stages', 'configs'):
        shutil.rmtree(results / folder)
    jobs = dry_run_jobs(work)
    assert [job for job in jobs if job[0] in ('train', 'experiment')] == [
        ('train', f'{TEST_RESULTS}/runs/algorithm~reinforce/seed~1/run.json')]


def test_the_records_target_without_a_run_made_stops_in_one_line_naming_why(tmp_path):
    result = snakemake(tmp_path, '--cores', 1, 'records')
    assert result.returncode == 1 and fault_lines(result.stdout, TEST_CONFIG) == [
        f'{TEST_CONFIG}: no run of the design is made yet under {TEST_RESULTS}: nothing to add to its records']
    assert not (tmp_path / TEST_RESULTS / 'records').exists()


@pytest.mark.parametrize('damaged', ['runs.parquet', 'summaries.parquet', 'minibatches.parquet', 'aggregate.json',
                                     'SHA256SUMS'])
def test_damaged_records_stop_every_invocation_naming_the_file_and_the_way_back(parallel, tmp_path, damaged):
    """A record file truncated after a complete run: the next invocation (a dry run, or a run) refuses before it
    plans, in one line naming the file and how to restore it; nothing already computed is touched."""
    work = copy_workdir(parallel, tmp_path / 'work')
    records = work / TEST_RESULTS / 'records'
    data = (records / damaged).read_bytes()
    (records / damaged).write_bytes(data[:len(data) // 2])
    before = {p: p.read_bytes() for p in (work / TEST_RESULTS).rglob('*') if p.is_file()}
    for args in (['--dry-run'], ['--cores', 1]):
        result = snakemake(work, *args)
        assert result.returncode != 0
        line = next(line for line in result.stdout.splitlines() if 'the run records are damaged' in line)
        assert f'{TEST_RESULTS}/records/{damaged}' in line and '`git checkout -- ' in line, result.stdout[-3000:]
        assert 'python -m analysis aggregate --runs' in line
    assert {p: p.read_bytes() for p in (work / TEST_RESULTS).rglob('*') if p.is_file()} == before


def test_an_unreadable_run_json_is_rerun_with_a_warning_naming_it(parallel, tmp_path):
    """A run.json truncated after a complete run (the records gone too, or they would give the run): the next
    invocation warns, naming it, sets it aside and makes that run again, the same numbers as before; nothing else
    reruns but the looks and the aggregation that read it."""
    work = copy_workdir(parallel, tmp_path / 'work')
    shutil.rmtree(work / TEST_RESULTS / 'records')
    run_json = work / TEST_RESULTS / 'runs' / 'algorithm~reinforce' / 'seed~1' / 'run.json'
    whole = run_json.read_text()
    run_json.write_text(whole[:len(whole) // 2])
    out = succeeded(snakemake(work, '--cores', 2))
    assert f'{TEST_RESULTS}/runs/algorithm~reinforce/seed~1/run.json cannot be read as a run' in out
    assert re.findall(r'^(?:local)?rule train:\n(?:    .*\n)*?    output: (\S+)', out, flags=re.M) == [
        f'{TEST_RESULTS}/runs/algorithm~reinforce/seed~1/run.json']
    assert comparable_run(run_json) == comparable_run(parallel / TEST_RESULTS / 'runs' / 'algorithm~reinforce' / 'seed~1'
                                                      / 'run.json')
    assert 'Nothing to be done' in succeeded(snakemake(work, '--dry-run'))


def test_a_dry_run_prints_the_next_stages_plan_before_any_job(parallel, tmp_path):
    """Stage 1 looked at, stage 2 not run yet: the dry run names stage 2's cells and lists exactly its jobs."""
    work = copy_workdir(parallel, tmp_path / 'work')
    plan = json.loads((work / TEST_RESULTS / 'stages' / 'stage~1.json').read_text())['next']
    assert plan == dict.fromkeys(sorted(TEST_CELLS), 3)  # 2 seeds decide no claim
    for cell in plan:
        shutil.rmtree(work / TEST_RESULTS / 'runs' / cell / 'seed~2')
    (work / TEST_RESULTS / 'stages' / 'stage~2.json').unlink()
    shutil.rmtree(work / TEST_RESULTS / 'records')  # or the records give the removed runs
    out = succeeded(snakemake(work, '--dry-run'))
    assert 'stage 2 of at most 2: 3 cells and 0 experiments to 3 seeds, 3 runs added, 3 to make' in out, out[-3000:]
    assert dry_run_jobs(work) == [('aggregate', f'{TEST_RESULTS}/claims.md'), ('all', ''),
                                  ('stage', f'{TEST_RESULTS}/stages/stage~2.json')] + [
        ('train', f'{TEST_RESULTS}/runs/{cell}/seed~2/run.json') for cell in sorted(TEST_CELLS)]


def test_the_aggregation_reads_the_designs_runs_only(parallel, tmp_path):
    """A run left from a cell outside the design (dropped or renamed) is not aggregated."""
    work = copy_workdir(parallel, tmp_path / 'work')
    stale = work / TEST_RESULTS / 'runs' / 'algorithm~stale' / 'seed~0'
    shutil.copytree(work / TEST_RESULTS / 'runs' / 'algorithm~reinforce' / 'seed~0', stale)
    run = json.loads((stale / 'run.json').read_text())
    (stale / 'run.json').write_text(json.dumps(dict(run, name='algorithm~stale')))
    succeeded(snakemake(work, '--cores', 1, '--forcerun', 'aggregate'))
    tables = work / TEST_RESULTS / 'tables'
    assert 'algorithm~reinforce' in (tables / 'cells.csv').read_text()
    assert not [p.name for p in tables.glob('*.csv') if 'algorithm~stale' in p.read_text()]


def test_a_changed_value_reruns_only_the_cells_it_changes(parallel, tmp_path):
    config = yaml.safe_load(TEST_CONFIG.read_text())
    faster = write_config(tmp_path / 'lr.yaml', algorithms={'reinforce': {'lr': 3e-3}})
    assert dry_run_jobs(parallel, config=faster) == [
        ('aggregate', f'{TEST_RESULTS}/claims.md'), ('all', ''), ('basis', looks_basis(faster)),
        ('cell_config', f'{TEST_RESULTS}/configs/algorithm~reinforce.json'),
        ('stage', f'{TEST_RESULTS}/stages/stage~1.json'),
        ('train', f'{TEST_RESULTS}/runs/algorithm~reinforce/seed~0/run.json'),
        ('train', f'{TEST_RESULTS}/runs/algorithm~reinforce/seed~1/run.json')]  # seed 2 once stage 1 is looked at again
    relisted = write_config(tmp_path / 'same.yaml', baseline={**config['baseline'], 'lam': 1},
                            sweeps={'lam': [0.95, 1], 'algorithm': ['reinforce']})
    assert 'Nothing to be done' in succeeded(snakemake(parallel, '--dry-run', config=relisted))


def test_a_stage_killed_half_way_leaves_no_run_and_the_next_invocation_finishes_it(parallel, tmp_path):
    """Stage 2 (seed 2) killed while its first run trains: the next invocation runs what is missing, no more."""
    work = copy_workdir(parallel, tmp_path / 'work')
    run = work / TEST_RESULTS / 'runs' / BASELINE_CELL / 'seed~2'
    log = work / TEST_RESULTS / 'logs' / 'runs' / BASELINE_CELL / 'seed~2.log'
    shutil.rmtree(work / TEST_RESULTS / 'records')  # or the records give the run
    shutil.rmtree(run)
    log.unlink()
    with open(tmp_path / 'snakemake.out', 'w') as out:
        proc = subprocess.Popen(command(work, TEST_CONFIG, '--cores', 1), cwd=REPO, env=environment(), stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while not (log.exists() and 'iter ' in log.read_text()):  # the trainer is midway through its iterations
            assert proc.poll() is None and time.monotonic() < deadline, (tmp_path / 'snakemake.out').read_text()
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # snakemake and its job, as a power cut would
        proc.wait()
    assert not (run / 'run.json').exists()
    # what is left is at most the empty output folder and a hidden temporary one, which the analysis skips
    left = [p.name for p in run.parent.iterdir() if 'seed~2' in p.name and not p.name.startswith('.')]
    assert left in ([], ['seed~2'])
    succeeded(snakemake(work, '--unlock'))
    out = succeeded(snakemake(work, '--cores', 2, '--rerun-incomplete'))
    assert (run / 'run.json').exists() and 'aggregate' in out
    assert re.findall(r'^(?:local)?rule train:\n(?:    .*\n)*?    output: (\S+)', out, flags=re.M) == [
        f'{TEST_RESULTS}/runs/{BASELINE_CELL}/seed~2/run.json']
    assert 'Nothing to be done' in succeeded(snakemake(work, '--dry-run'))


# --- a budgeted design: the greedy policy's batches -----------------------------------------------

# its cost table: a PPO cell 10 CPU s a job, REINFORCE 5, the experiment 4, a warmed critic 1: the fixed 10-seed design
# costs 300 job-seconds, its budget 90, the first stage 60, a batch at least 15
GREEDY_COSTS = (
    'source,kind,cpu_s,wall_s,method,fixed_s,per_iteration_s,cpu,numerics_version,measured\n'
    'critic,critic,1,1,the job,,,test,5,2026-12-07\nbaseline,cell,10,10,the job,,,test,5,2026-12-07\n'
    'lam~0.95,cell,10,10,the job,,,test,5,2026-12-07\nalgorithm~reinforce,cell,5,5,the job,,,test,5,2026-12-07\n'
    'clip_gradients,experiment,4,4,the job,,,test,5,2026-12-07\n')


@pytest.fixture(scope='module')
def budgeted(parallel, tmp_path_factory) -> tuple[Path, Path]:
    """(working directory, design): the test design under the greedy policy (GREEDY), its cost table beside its
    results, from the test design's first stage (parallel's seeds 0 and 1; seed 2, the records and the looks
    removed); read only: a test works on a copy."""
    root = tmp_path_factory.mktemp('budgeted')
    design = root / 'greedy.yaml'
    design.write_text(yaml.safe_dump(dict(extends='config/test.yaml', seeds=GREEDY)))
    work = copy_workdir(parallel, root / 'work')
    results = work / TEST_RESULTS
    for cell in TEST_CELLS:
        shutil.rmtree(results / 'runs' / cell / 'seed~2')
        (results / 'logs' / 'runs' / cell / 'seed~2.log').unlink()
    shutil.rmtree(results / 'records')
    shutil.rmtree(results / 'stages')
    (results / 'costs.csv').write_text(GREEDY_COSTS)
    return work, design


def trained(out: str) -> list[str]:
    """The run.json files a Snakemake output made (train and experiment jobs), in order."""
    return re.findall(r'^(?:local)?rule (?:train|experiment):\n(?:    .*\n)*?    output: (\S+)', out, flags=re.M)


def test_a_dry_run_of_a_budgeted_design_prints_the_next_batch_and_its_job_seconds(budgeted, tmp_path):
    """The first stage looked at, the first batch not run: the dry run names its sources, each with its seeds, and
    what it costs by the cost table (the look's), and lists exactly its jobs."""
    work, design = copy_workdir(budgeted[0], tmp_path / 'work'), budgeted[1]
    first = succeeded(snakemake(work, '--cores', 2, f'{TEST_RESULTS}/stages/stage~1.json', config=design))
    assert 'stage 1 of at most 4: 3 cells and 1 experiments to 2 seeds, 8 runs added, 0 to make' in first
    look = json.loads((work / TEST_RESULTS / 'stages' / 'stage~1.json').read_text())
    assert look['seeds'] == dict.fromkeys(sorted([*TEST_CELLS, 'clip_gradients']), 2)
    assert (look['next'], look['stop'], look['cost_s'], look['left_s']) == (
        {BASELINE_CELL: 3, 'algorithm~reinforce': 3}, '', 16, 30)  # 10 + 5 and a critic; 90 - 60 left
    out = succeeded(snakemake(work, '--dry-run', config=design))
    assert ('stage 2 of at most 4: 2 cells and 0 experiments to 3 seeds, 2 runs added, 2 to make (the others are '
            'published or here)\n  cells: baseline (3), algorithm~reinforce (3)\n  experiments: none\n  the batch: 16 '
            'job-seconds by the cost table, 30 of the budget left before it\n') in out, out[-3000:]
    # the job stats price what is made: seed 2's warmed critic is here (the budget counts it in the batch)
    assert re.fullmatch(r'2 runs and 0 warmed critics planned: about 15 CPU s of jobs by the cost table '
                        rf'{TEST_RESULTS}/costs\.csv \(.+\)', planned(out)[-1])
    assert dry_run_jobs(work, config=design) == [
        ('aggregate', f'{TEST_RESULTS}/claims.md'), ('all', ''), ('stage', f'{TEST_RESULTS}/stages/stage~2.json'),
        ('train', f'{TEST_RESULTS}/runs/algorithm~reinforce/seed~2/run.json'),
        ('train', f'{TEST_RESULTS}/runs/baseline/seed~2/run.json')]


def budgeted_looks(work: Path) -> list[dict]:
    """A budgeted run's looks, stage 1 on."""
    paths = sorted((work / TEST_RESULTS / 'stages').glob('stage~*.json'), key=lambda p: int(p.stem.split('~')[1]))
    return [json.loads(path.read_text()) for path in paths]


def test_a_budgeted_design_runs_batch_after_batch_until_its_policy_stops(budgeted, tmp_path):
    """From the first stage: a batch of two cells, one of the third, each to seed 2, then no open claim asks (each is
    projected beyond max): the design ends with the budget not spent; every batch within it, and nothing left to do."""
    work, design = copy_workdir(budgeted[0], tmp_path / 'work'), budgeted[1]
    out = succeeded(snakemake(work, '--cores', 2, config=design))
    looks = budgeted_looks(work)
    assert [(look['next'], look['stop'], look['cost_s'], look['left_s']) for look in looks] == [
        ({BASELINE_CELL: 3, 'algorithm~reinforce': 3}, '', 16, 30), ({'lam~0.95': 3}, '', 10, 14),
        ({}, 'beyond max', 0, 4)]
    assert looks[-1]['seeds'] == {'algorithm~reinforce': 3, BASELINE_CELL: 3, 'clip_gradients': 2, 'lam~0.95': 3}
    assert sorted(trained(out)) == [f'{TEST_RESULTS}/runs/{cell}/seed~2/run.json' for cell in sorted(TEST_CELLS)]
    assert 'the batch: 10 job-seconds by the cost table, 14 of the budget left before it' in out
    assert 'Nothing to be done' in succeeded(snakemake(work, '--dry-run', config=design))
    # what it spent, look by look, by the cost table: 2 seeds of 29 job-s and 2 critics, then each batch
    spent = subprocess.run([sys.executable, '-m', 'analysis.ledger.spending', '--configfile', str(design)], cwd=work,
                           env=environment(), capture_output=True, text=True, check=True).stdout
    assert re.search(r'\| 1 \| 2 \| 8 \| 60 \| \d+ \| \d+ \| \d+ \| 3 seeds to 2 of them, 16 job-s \|\n'
                     r'\| 2 \| 2 to 3 \| 10 \| 76 \| \d+ \| \d+ \| \d+ \| 3 seeds to 1 of them, 10 job-s \|\n'
                     r'\| 3 \| 2 to 3 \| 11 \| 86 \| \d+ \| 0 \| \d+ \| none \(beyond max\) \|', spent), spent
    assert re.search(r'\| tinyagent \| 3 \| 11 \| 86 \| 0\.29 \| ', spent), spent


def test_a_budgeted_batch_killed_half_way_is_finished_by_the_next_invocation(budgeted, tmp_path):
    """The first batch killed while one of its runs trains: the next invocation makes what is missing, no run twice,
    and reaches the same looks as a run never stopped."""
    work, design = copy_workdir(budgeted[0], tmp_path / 'work'), budgeted[1]
    logs = [work / TEST_RESULTS / 'logs' / 'runs' / cell / 'seed~2.log' for cell in TEST_CELLS]
    with open(tmp_path / 'snakemake.out', 'w') as out:
        proc = subprocess.Popen(command(work, design, '--cores', 1), cwd=REPO, env=environment(), stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while not any(log.exists() and 'iter ' in log.read_text() for log in logs):  # a batch's run is midway
            assert proc.poll() is None and time.monotonic() < deadline, (tmp_path / 'snakemake.out').read_text()
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # snakemake and its job, as a power cut would
        proc.wait()
    made = {p for p in (work / TEST_RESULTS).glob('*/*/seed~2/run.json')}
    assert len(made) < 2 and not (work / TEST_RESULTS / 'stages' / 'stage~2.json').exists()
    succeeded(snakemake(work, '--unlock', config=design))
    out = succeeded(snakemake(work, '--cores', 2, '--rerun-incomplete', config=design))
    expected = {f'{TEST_RESULTS}/runs/{cell}/seed~2/run.json' for cell in TEST_CELLS}
    assert sorted(trained(out)) == sorted(expected - {str(p.relative_to(work)) for p in made})
    assert [(look['next'], look['stop']) for look in budgeted_looks(work)] == [
        ({BASELINE_CELL: 3, 'algorithm~reinforce': 3}, ''), ({'lam~0.95': 3}, ''), ({}, 'beyond max')]
    assert 'Nothing to be done' in succeeded(snakemake(work, '--dry-run', config=design))


# --- serial and parallel runs agree ----------------------------------------------------------

def test_parallel_runs_give_the_same_numbers_as_serial_ones(serial, parallel):
    runs = sorted(p.relative_to(serial) for p in (serial / TEST_RESULTS).rglob('run.json'))
    assert len(runs) == 3 * len(TEST_CELLS) + 2  # stage 2 gave the cells a third seed, not the experiment
    assert runs == sorted(p.relative_to(parallel) for p in (parallel / TEST_RESULTS).rglob('run.json'))
    for path in runs:
        assert comparable_run(serial / path) == comparable_run(parallel / path), path
    tables = sorted(p.relative_to(serial) for p in (serial / TEST_RESULTS).rglob('*.csv'))
    assert tables == sorted(p.relative_to(parallel) for p in (parallel / TEST_RESULTS).rglob('*.csv'))
    assert any(p.parts[2] == 'tables' for p in tables)
    for path in tables:
        assert comparable_csv(serial / path) == comparable_csv(parallel / path), path


def test_the_literature_axes_run_end_to_end(tmp_path):
    """Issue 59's axes, as cells of a design that extends the test design: a symmetric clip (clip_low with clip_high,
    a factorial block of one level each) and advantages not whitened; each cell is named by its levels, runs through
    the trainer and records them in its run.json."""
    design = tmp_path / 'literature.yaml'
    design.write_text(yaml.safe_dump(dict(extends='config/test.yaml', sweeps=dict(whiten_advantages=[False]),
                                          factorial=[dict(clip_low=[0.3], clip_high=[0.3])])))
    cells = {'whiten_advantages~false': dict(whiten_advantages=False),
             'clip_low~0.3_clip_high~0.3': dict(clip_low=0.3, clip_high=0.3)}
    assert list(expand_design(load_design(design))) == [BASELINE_CELL, *cells]
    targets = [f'{TEST_RESULTS}/runs/{cell}/seed~0/run.json' for cell in cells]
    succeeded(snakemake(tmp_path / 'work', '--cores', '2', *targets, config=design))
    for cell, levels in cells.items():
        run = json.loads((tmp_path / 'work' / TEST_RESULTS / 'runs' / cell / 'seed~0' / 'run.json').read_text())
        assert run['config'] == {**run['config'], **levels}, (cell, run['config'])
        assert 0 <= run['summary']['pass_train'] <= 1
