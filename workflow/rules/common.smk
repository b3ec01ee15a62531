"""The design's expansion: config -> trainer cells, each with one canonical name and one config file.

The config is validated against workflow/schemas/config.schema.yaml in the Snakefile, before this
file runs; what a schema cannot say (a cell's minibatches against its episodes per iteration, the
schema and AXES declaring the same axes, a job's design against its parent's) is checked here, still
before any job runs.
"""
import itertools
import json
import math
import os
from collections import namedtuple

import yaml
from snakemake.exceptions import WorkflowError
from snakemake.logging import logger


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
    return [line for key in sorted(set(planned) | set(seen), key=str)
            for line in design_differences(planned.get(key, ABSENT), seen.get(key, ABSENT),
                                           f"{prefix}.{key}" if prefix else str(key))]


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
                "this job's design is not the one its parent planned (parent -> job):\n  " + "\n  ".join(differences)
                + "\nGive the design as one file (--configfile FILE), the same for the parent and its jobs.")


check_parents_design(config)


# --- the ablation axes: declared once (values in the schema, the rest here) -------------------

Axis = namedtuple("Axis", "field label algorithms")  # TrainConfig field, label in a cell's path, where it applies
ALGORITHMS = ("ppo", "reinforce")
PPO = ("ppo",)  # REINFORCE ignores the PPO-only axes: its cells leave them out of name and config
AXES = {
    "algorithm": Axis("algorithm", "algo", ALGORITHMS),
    "lambda": Axis("lam", "lam", PPO),
    "epochs": Axis("epochs", "epochs", PPO),
    "minibatches": Axis("minibatches", "mb", PPO),
    "eps_high": Axis("clip_high", "eps_high", PPO),
    "value_clip": Axis("value_clip", "vclip", PPO),
    "target_kl": Axis("target_kl", "kl", PPO),
}

with open(workflow.source_path("../schemas/config.schema.yaml")) as schema_file:
    SCHEMA = yaml.safe_load(schema_file)
if set(SCHEMA["$defs"]["axes"]) != set(AXES):
    raise WorkflowError(
        f"the schema's axes ({', '.join(sorted(SCHEMA['$defs']['axes']))}) and AXES in common.smk "
        f"({', '.join(sorted(AXES))}) must be the same: declare an axis in both")


# --- values: canonical JSON and canonical text ------------------------------------------------

def json_type(subschema):
    """The JSON type names a schema entry allows."""
    kind = subschema.get("type", [])
    return {kind} if isinstance(kind, str) else set(kind)


FIELD_TYPES = {axis.field: json_type(SCHEMA["$defs"]["axes"][key]) for key, axis in AXES.items()}
FIELD_TYPES.update({field: json_type(entry) for field, entry in SCHEMA["$defs"]["trainer"]["properties"].items()})


def canonical(field, value):
    """A config value as the trainer reads it: 1 and 1.0 are the same number (float or int by the schema)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    return int(value) if "integer" in FIELD_TYPES[field] else float(value)


def text(value):
    """A value as it appears in a path: none, true/false, numbers without repr noise (1.0 -> 1, 0.95 -> 0.95)."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (int, float)):
        return format(value, ".12g")
    return str(value)


# --- the design: baseline, one-factor-at-a-time sweeps, full-factorial blocks -----------------

def design_points(config):
    """Every point of the design as axis -> value, the baseline first (duplicates included)."""
    baseline = config["baseline"]
    points = [dict(baseline)]
    for key, levels in config["sweeps"].items():
        points += [{**baseline, key: level} for level in levels]
    for block in config["factorial"]:
        for levels in itertools.product(*block.values()):
            points.append({**baseline, **dict(zip(block, levels))})
    return points


def cell(point, config):
    """(name, TrainConfig fields without the seed) of a design point."""
    algorithm = point["algorithm"]
    axes = [key for key, axis in AXES.items() if algorithm in axis.algorithms]
    name = "_".join(f"{AXES[key].label}~{text(canonical(AXES[key].field, point[key]))}" for key in axes)
    values = {**config["trainer"], **config["algorithms"].get(algorithm, {}),
              **{AXES[key].field: point[key] for key in axes}}
    return name, {field: canonical(field, value) for field, value in sorted(values.items())}


def expand_design(config):
    """Cell name -> its TrainConfig fields, in design order; a cell shared by two sweeps appears once."""
    cells = {}
    for point in design_points(config):
        name, values = cell(point, config)
        if cells.setdefault(name, values) != values:
            raise WorkflowError(f"two cells of the design have the name {name}: {cells[name]} and {values}")
        minibatches = values.get("minibatches", 1)
        if minibatches > values["episodes_per_iteration"]:
            raise WorkflowError(
                f"cell {name}: minibatches={minibatches} is more than episodes_per_iteration="
                f"{values['episodes_per_iteration']} (trainer or algorithms.{point['algorithm']})")
    return cells


RESULTS = os.path.normpath(config["results_dir"])
SEEDS = config["seeds"]
CELLS = expand_design(config)
BASELINE = cell(config["baseline"], config)[0]
EXPERIMENTS = config["experiments"]

wildcard_constraints:
    cell=r"[^/]+",
    seed=r"\d+",
    experiment=r"[a-z_]+",


# --- helpers of the rules ---------------------------------------------------------------------

def cell_values(wildcards):
    """The TrainConfig fields of the requested cell; a cell outside the design is an error naming the design's."""
    if wildcards.cell not in CELLS:
        raise WorkflowError(f"cell {wildcards.cell} is not in the design; its cells are:\n  " + "\n  ".join(CELLS))
    return CELLS[wildcards.cell]


def cell_json(wildcards):
    """The cell's config file content: one JSON object of TrainConfig fields, keys sorted."""
    return json.dumps(cell_values(wildcards), sort_keys=True)


# One job's time, one thread: a PPO cell does (epochs + 1) passes over each batch (sampling, then the
# epochs), REINFORCE two; the chapter's default cell (30 x 64 episodes, 4 epochs) runs in about 90 s,
# about 0.01 s per episode and pass (design.md, section 3). The estimate is tripled and rounded up.
SECONDS_PER_EPISODE_PASS, SECONDS_FIXED = 0.01, 30


def train_runtime(wildcards):
    """Minutes to allow one trainer run of the cell."""
    values = cell_values(wildcards)
    passes = values["epochs"] + 1 if values["algorithm"] == "ppo" else 2
    episodes = values["iterations"] * values["episodes_per_iteration"]
    seconds = SECONDS_FIXED + SECONDS_PER_EPISODE_PASS * episodes * passes
    return max(5, math.ceil(3 * seconds / 60))


def run_json(root, names, seeds=SEEDS):
    """root/<name>/seed~<seed>/run.json for every name and seed."""
    return [f"{root}/{name}/seed~{seed}/run.json" for name in names for seed in seeds]
