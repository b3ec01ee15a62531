"""The design's cells (workflow/design.py) and the helpers of the rules.

The config is validated in the Snakefile, before this file runs, against the schema that
workflow/design.py generates; what a schema cannot say (a cell's minibatches against its episodes per
iteration, a job's design against its parent's) is checked here, still before any job runs.
"""

import json
import math
import os
import shlex

from snakemake.exceptions import WorkflowError
from snakemake.logging import logger

from agentrl.algorithms import CRITIC_FIELDS  # the TrainConfig fields the critic's warm-up reads besides the seed
from agentrl.files import DamagedRecords, write_text  # write_text: atomic, a temporary sibling, then a rename
from agentrl.numerics import NUMERICS_VERSION  # pure: does not import torch
from workflow.design import baseline_name, cell_json, expand_design
from workflow.plan import DesignError, seed_plan
from workflow.state import basis, basis_file, digest, published, record_rows, sources_option, split_runs, write_basis
from workflow.state import set_aside, unreadable_runs  # a run.json that cannot be read: its run counts as missing

# --- the design a job sees is the one its parent planned ---------------------------------------
# A job that runs Snakemake again (every job under the SLURM executor) gets the parent's --configfile
# and --config but not --replace-workflow-config (Snakemake 9.27): the Snakefile therefore never merges
# two files. The parent's design also travels in the environment (sbatch --export=ALL, and local
# subprocesses inherit it), so that a job that would still see another design stops, naming why.

DESIGN_VARIABLE = "AGENTRL_DESIGN"


ABSENT = object()


def design_differences(planned, seen, prefix=""):
    """'key: planned -> seen' for every dotted key whose value differs between two configs."""
    if not (isinstance(planned, dict) and isinstance(seen, dict)):
        shown = ["(absent)" if value is ABSENT else json.dumps(value) for value in (planned, seen)]
        return [] if planned == seen else [f"{prefix or 'config'}: {shown[0]} -> {shown[1]}"]
    return [
        line
        for key in sorted(set(planned) | set(seen), key=str)
        for line in design_differences(
            planned.get(key, ABSENT), seen.get(key, ABSENT), f"{prefix}.{key}" if prefix else str(key)
        )
    ]


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
    PLAN = seed_plan(config)  # the seeds: a fixed list, or the stages of a sequential design (rules/stages.smk)
except DesignError as error:
    raise WorkflowError(str(error)) from None
CELLS = {name: cell.values for name, cell in DESIGN.items()}
BASELINE = baseline_name(config)
EXPERIMENTS = config["experiments"]

# The state the design continues from (workflow/state.py): the runs the published records hold for it, and the
# basis of its looks (a changed design, claims file or numerics version is another basis: the looks are remade).
RECORDS = f"{RESULTS}/records"
try:
    PUBLISHED = published(record_rows(RECORDS), DESIGN, EXPERIMENTS, NUMERICS_VERSION)
except DamagedRecords as error:  # every invocation verifies the records it plans from before it plans
    raise WorkflowError(str(error)) from None
if workflow.is_main_process:  # a run directory whose run.json cannot be read counts as missing: its job reruns
    for damaged in unreadable_runs(RESULTS):
        logger.warning(f"{damaged} cannot be read as a run: moved to {set_aside(damaged)}, its run is made again")
BASIS = basis(config, NUMERICS_VERSION)
BASIS_FILE = basis_file(RESULTS, BASIS)


wildcard_constraints:
    cell=r"[^/]+",
    seed=r"\d+",
    experiment=r"[a-z_]+",
    stage=r"\d+",


# --- helpers of the rules ---------------------------------------------------------------------


def cell_values(wildcards):
    """The TrainConfig fields of the requested cell; a cell outside the design is an error naming the design's."""
    if wildcards.cell not in CELLS:
        raise WorkflowError(f"cell {wildcards.cell} is not in the design; its cells are:\n  " + "\n  ".join(CELLS))
    return CELLS[wildcards.cell]


def cell_file(wildcards):
    """The cell's config file content: one JSON object of TrainConfig fields, keys sorted."""
    return cell_json(cell_values(wildcards))


# One job's time, one thread: a PPO cell does (epochs + 1) passes over each batch (sampling, then the
# epochs), REINFORCE two. Measured with `python -m agentrl.bench --chapter-run` (issue 12): the chapter's
# default cell (30 x 64 episodes, 4 epochs, its critic warmed beforehand) trains and evaluates in 26 s
# on one thread of this 2-core machine (matmul peak 98 GFLOP/s), 2.7 ms per episode and pass; a job adds
# about 5 s to start Python, import torch (and torch._dynamo, which torch.optim imports) and load the
# base agent and the critic. The estimate is tripled and rounded up.
SECONDS_PER_EPISODE_PASS, SECONDS_FIXED = 0.0027, 5


def train_runtime(wildcards):
    """Minutes to allow one trainer run of the cell."""
    values = cell_values(wildcards)
    passes = values["epochs"] + 1 if values["algorithm"] == "ppo" else 2
    episodes = values["iterations"] * values["episodes_per_iteration"]
    seconds = SECONDS_FIXED + SECONDS_PER_EPISODE_PASS * episodes * passes
    return max(5, math.ceil(3 * seconds / 60))


def run_path(name, seed):
    """The run.json of a cell's or an experiment's run; a name of neither is an error naming it."""
    if name not in CELLS and name not in EXPERIMENTS:
        raise WorkflowError(f"{name} is not a cell or experiment of this design")
    return f"{RESULTS}/{'runs' if name in CELLS else 'experiments'}/{name}/seed~{seed}/run.json"


def runs_of(seeds):
    """Where the runs of these names and seed counts (name -> n, the first n of the plan's seeds) are read from:
    (run.json files: run directories here or runs to make, the records' runs as analysis options)."""
    files, reused = split_runs({name: PLAN.seeds[:n] for name, n in seeds.items()}, run_path, PUBLISHED)
    return files, sources_option(files, RECORDS, reused)


def stage1_runs(names):
    """The first stage's runs of these names that the records do not hold (the all_runs and all_experiments targets)."""
    return runs_of({name: PLAN.looks[0] for name in names})[0]


# --- PPO's warmed critic: one per seed, shared by the seed's PPO cells (rules/critic.smk) -----


def critic_constants():
    """The critic's constants that the design's PPO cells share (absent: TrainConfig's defaults)."""
    found = {}
    for name, values in CELLS.items():
        if values["algorithm"] == "ppo":
            found.setdefault(cell_json({f: values[f] for f in CRITIC_FIELDS if f in values}), name)
    if len(found) > 1:
        raise WorkflowError(
            "the PPO cells must share the critic's constants (one warmed critic per seed); "
            "they differ:\n  " + "\n  ".join(f"{cell}: {text.strip()}" for text, cell in found.items())
        )
    return next(iter(found), cell_json({}))


def critic_input(wildcards):
    """A PPO cell's warmed critic for the job's seed; none for REINFORCE."""
    return [f"{RESULTS}/critics/seed~{wildcards.seed}.pt"] if cell_values(wildcards)["algorithm"] == "ppo" else []


def critic_option(wildcards):
    """The train command's --critic option: the warmed critic of a PPO cell's seed; nothing for REINFORCE."""
    return " ".join(f"--critic {shlex.quote(path)}" for path in critic_input(wildcards))
