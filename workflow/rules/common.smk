"""The design's cells (workflow/design.py) and the helpers of the rules.

The config is validated in the Snakefile, before this file runs, against the schema that
workflow/design.py generates; what a schema cannot say (a cell's minibatches against its episodes per
iteration, a job's design against its parent's) is checked here, still before any job runs.
"""

import json
import logging
import os
import shlex
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.logging import get_event, logger
from snakemake_interface_logger_plugins.common import LogEvent

from agentrl.files import DamagedRecords, write_text  # write_text: atomic, a temporary sibling, then a rename
from agentrl.numerics import NUMERICS_VERSION  # pure: does not import torch
from workflow.design import baseline_name, cell_json, design_differences, expand_design, runtime_minutes, shared_critic
from workflow.design import substrate_of
from workflow.faults import not_in_design
from workflow.plan import COSTS_FILE, DesignError, check_budget, planned_cost, seed_plan
from workflow.state import basis, basis_file, digest, published, record_rows, recorded_seconds, sources_option
from workflow.state import seeds_present, split_runs, write_basis
from workflow.state import run_file, set_aside, unreadable_runs  # run.json paths; a run.json that cannot be read reruns
from workflow.state import job_costs, run_of

# --- the design a job sees is the one its parent planned ---------------------------------------
# A job that runs Snakemake again (every job under the SLURM executor) gets the parent's --configfile
# and --config but not --replace-workflow-config (Snakemake 9.27): the Snakefile therefore never merges
# two files. The parent's design also travels in the environment (sbatch --export=ALL, and local
# subprocesses inherit it), so that a job that would still see another design stops, naming why.

DESIGN_VARIABLE = "AGENTRL_DESIGN"


def check_parents_design(config):
    """Publish the design to spawned jobs (main process), or compare a spawned job's with it."""
    if workflow.is_main_process:
        os.environ[DESIGN_VARIABLE] = json.dumps(config, sort_keys=True)
    elif DESIGN_VARIABLE not in os.environ:
        logger.warning(f"{DESIGN_VARIABLE} is not set: this job cannot check that its design is its parent's")
    else:
        differences = design_differences(json.loads(os.environ[DESIGN_VARIABLE]), config)
        if differences:
            raise WorkflowError(
                "this job's design is not the one its parent planned (parent -> job):\n  "
                + "\n  ".join(differences)
                + "\nGive the design as one file (--configfile FILE), the same for the parent and its jobs."
            )


check_parents_design(config)


RESULTS = os.path.normpath(config["results_dir"])
try:
    DESIGN = expand_design(config)
    PLAN = seed_plan(config)  # the seeds: a fixed list, or the stages of a staged design (rules/stages.smk)
except DesignError as error:
    sys.exit(f"{DESIGN_FILE}: {error}")  # one line, as it is (a WorkflowError would add its location and traceback)
CELLS = {name: cell.values for name, cell in DESIGN.items()}
BASELINE = baseline_name(config)
SUBSTRATE = substrate_of(config)  # every agentrl job's --substrate: the agent and tasks of all the design's runs
EXPERIMENTS = config["experiments"]

# The state the design continues from (workflow/state.py): the runs the published records hold for it, and the
# basis of its looks (a changed design, claims file or numerics version is another basis: the looks are remade).
RECORDS = f"{RESULTS}/records"
try:
    RECORD_ROWS = record_rows(RECORDS)
except DamagedRecords as error:  # every invocation verifies the records it plans from before it plans
    raise WorkflowError(str(error)) from None
PUBLISHED = published(RECORD_ROWS, DESIGN, EXPERIMENTS, NUMERICS_VERSION)
if workflow.is_main_process:  # a run directory whose run.json cannot be read counts as missing: its job reruns
    for damaged in unreadable_runs(RESULTS):
        logger.warning(f"{damaged} cannot be read as a run: moved to {set_aside(damaged)}, its run is made again")
BASIS = basis(config, NUMERICS_VERSION)
BASIS_FILE = basis_file(RESULTS, BASIS)
try:  # the design's cost table (workflow/state.py), None where it has none: a dry run prices its runs by it
    COSTS = job_costs(RESULTS)
    check_budget(PLAN, COSTS, [*CELLS, *EXPERIMENTS], f"{RESULTS}/{COSTS_FILE}")  # a budgeted design's batches
except DesignError as error:
    sys.exit(f"{DESIGN_FILE}: {error}")
except ValueError as error:
    sys.exit(str(error))  # one line naming the file and its line


# A cell, an experiment or a seed that is not the design's reaches its rule, whose input functions stop the workflow
# with one line naming it (known, known_seed), not Snakemake's MissingRuleException.
wildcard_constraints:
    cell=r"[^/]+",
    seed=r"[^/]+",
    experiment=r"[a-z_]+",
    stage=r"\d+",


# --- helpers of the rules ---------------------------------------------------------------------


def known(kind, name, names):
    """A name of the design's cells or experiments; another stops the workflow with one line naming it and the close
    ones (SystemExit: Snakemake would wrap an input function's exception with the rule, wildcards and traceback)."""
    if name not in names:
        sys.exit(f"{DESIGN_FILE}: {not_in_design(kind, name, names)}")
    return name


def cell_values(wildcards):
    """The TrainConfig fields of the requested cell; a cell outside the design stops the workflow (known)."""
    return CELLS[known("cell", wildcards.cell, CELLS)]


def known_seed(wildcards):
    """Stop the workflow with one line naming the job's seed where it is not a whole number (as known)."""
    if not wildcards.seed.isdigit():
        sys.exit(f"{DESIGN_FILE}: seed~{wildcards.seed} is not a seed: expected a whole number (seed~0, seed~1, ...)")


def job_base(wildcards):
    """A job's input, the base agent; a seed that is not a whole number stops the workflow (known_seed)."""
    known_seed(wildcards)
    return rules.base_agent.output[0]


def experiment_base(wildcards):
    """An experiment's input, the base agent; an experiment outside the design stops the workflow (known), as does a
    seed that is not a whole number (known_seed)."""
    known("experiment", wildcards.experiment, EXPERIMENTS)
    return job_base(wildcards)


def cell_file(wildcards):
    """The cell's config file content: one JSON object of TrainConfig fields, keys sorted."""
    return cell_json(cell_values(wildcards))


def train_runtime(wildcards):
    """Minutes to allow one trainer run of the cell (workflow/design.py, runtime_minutes)."""
    return runtime_minutes(cell_values(wildcards))


def run_path(name, seed):
    """The run.json of a cell's or an experiment's run; a name of neither is an error naming it."""
    if name not in CELLS and name not in EXPERIMENTS:
        raise WorkflowError(f"{name} is not a cell or experiment of this design")
    return run_file(RESULTS, name, seed, name in CELLS)


def every_seed(name, planned, final=False):
    """A cell's or experiment's planned seeds, and every seed of it outside the design's plan that the records or its
    run directories hold (workflow/state.py: published, seeds_present; the more-seeds verb's, another machine's): each
    counts in the ledger. A seed of the plan beyond `planned` is a later stage's, not read before that stage; after
    the last stage (final) every seed held counts, the plan's too (earlier runs its policy gave no batch)."""
    held = PUBLISHED.get(name, set()) | seeds_present(RESULTS, name, name in CELLS)
    return sorted(set(planned) | (held if final else held - set(PLAN.seeds)))


def runs_of(seeds, final=False):
    """Where the runs of these names and seed counts (name -> n, the first n of the plan's seeds), and of every other
    seed the records or run directories hold for them (every_seed), are read from: (run.json files: run directories
    here or runs to make, the records' runs as analysis options)."""
    wanted = {name: every_seed(name, PLAN.seeds[:n], final) for name, n in seeds.items()}
    files, reused = split_runs(wanted, run_path, PUBLISHED)
    return files, sources_option(files, RECORDS, reused)


def made_runs_option():
    """The analysis' options that add the design's runs made so far (run directories of its cells and experiments at
    any seed) to the records, where there are records."""
    made = [
        run_path(name, seed)
        for name in [*CELLS, *EXPERIMENTS]
        for seed in sorted(seeds_present(RESULTS, name, name in CELLS))
    ]
    if not made:  # one line (SystemExit, as known)
        sys.exit(f"{DESIGN_FILE}: no run of the design is made yet under {RESULTS}: nothing to add to its records")
    records = ["--records", shlex.quote(RECORDS)] if os.path.isdir(RECORDS) else []
    return " ".join([*records, "--run-files", *map(shlex.quote, made)])


# --- a dry run's (and a run's) plan, priced -------------------------------------------------------
# Snakemake calls no hook of the workflow before a dry run's jobs (onstart runs in a real run only): a filter on its
# logger ends the job stats it logs once the DAG is built (LogEvent.RUN_INFO) with the runs planned and their cost.


def planned_runs(jobs):
    """The runs (name, seed) of the train and experiment jobs among these, and the number of warm_critic jobs."""
    jobs = list(jobs)
    runs = [run_of(job.output[0]) for job in jobs if job.rule.name in ("train", "experiment")]
    return runs, sum(job.rule.name == "warm_critic" for job in jobs)


class PlannedCost(logging.Filter):
    """Snakemake's job stats, then the runs its DAG plans and their cost (workflow/plan.py, planned_cost): by the
    design's cost table, else at the records' median wall times."""

    def filter(self, record):
        if get_event(record) == LogEvent.RUN_INFO:
            jobs = workflow.dag.needrun_jobs(exclude_finished=False)  # a dry run's second stats: its jobs "finished"
            runs, critics = planned_runs(jobs)
            seconds = recorded_seconds(RECORDS) if COSTS is None else {}
            made_on = [row["cpu"] for row in RECORD_ROWS if row.get("cpu")]
            record.msg = f"{record.msg}{planned_cost(runs, critics, seconds, made_on, COSTS)}\n"
        return True


if workflow.is_main_process:
    logger.addFilter(PlannedCost())


def stage1_runs(names):
    """The first stage's runs of these names that the records do not hold (the all_runs and all_experiments targets)."""
    return runs_of({name: PLAN.looks[0] for name in names})[0]


# --- PPO's warmed critic: one per seed, shared by the seed's PPO cells (rules/critic.smk) -----


def critic_constants():
    """The critic's constants that the design's PPO cells share (workflow/design.py, shared_critic)."""
    try:
        return shared_critic(CELLS)
    except DesignError as error:
        raise WorkflowError(str(error)) from None


def critic_input(wildcards):
    """A PPO cell's warmed critic for the job's seed; none for REINFORCE."""
    return [f"{RESULTS}/critics/seed~{wildcards.seed}.pt"] if cell_values(wildcards)["algorithm"] == "ppo" else []


def critic_option(wildcards):
    """The train command's --critic option: the warmed critic of a PPO cell's seed; nothing for REINFORCE."""
    return " ".join(f"--critic {shlex.quote(path)}" for path in critic_input(wildcards))
