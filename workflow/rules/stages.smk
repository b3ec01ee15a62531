# A sequential design (seeds: {initial, step, max}) runs in stages. Stage 1 runs every cell and experiment at
# seeds 0 to initial - 1; after each stage, the checkpoint `stage` looks at the claims (python -m analysis stage:
# group-sequential cut-offs, analysis/sequential.py) and names the cells and experiments that feed a claim still
# undecided; the next stage gives those `step` more seeds. The loop ends when every claim is decided or at `max`.
# A fixed design (a list of seeds) is one stage and has no checkpoint.
#
# Every stage's inputs follow from the checkpoints before it, so a dry run plans up to the next stage not yet
# looked at (and logs its plan), a finished design has nothing to do, and a stage killed half-way resumes.
# A look reads the stage's runs from run directories and the published records (workflow/state.py), and belongs to
# its basis (the design, the claims and the code deciding them, the numerics version): a new basis is a new basis
# file, which every look and the aggregation take as input, so they are remade. A look of another basis is never
# read: until it is remade the design ends at it (a dry run plans up to it), and Snakemake plans its dependents again
# once it is. A look of this basis that names a cell or experiment the design does not have stops the workflow,
# naming it.

import json

from workflow.state import check_look, superseded

PLANNED = set()  # stages whose plan was logged (input functions run more than once)


def stage_plan(stage):
    """The plan the checkpoint of `stage` wrote: {seeds, sources} of the next stage, {} when the design is done."""
    path = checkpoints.stage.get(stage=stage).output[0]  # an existing look, even one about to be remade
    with open(path) as file:
        look = json.load(file)
    if look.get("basis") != digest(BASIS) and superseded(path, BASIS_FILE):
        return {}  # about to be remade, never read: its dependents are planned again once it is
    try:
        return check_look(look, path, digest(BASIS), [*CELLS, *EXPERIMENTS])
    except ValueError as error:
        raise WorkflowError(str(error)) from None


def sources_at(stage):
    """Cell or experiment -> the seeds it has in stage `stage` (from 1): the first stage's, raised by each plan."""
    seeds = {name: PLAN.looks[0] for name in [*CELLS, *EXPERIMENTS]}
    for done in range(1, stage):
        plan = stage_plan(done)
        if not plan:
            raise WorkflowError(f"stage {stage} is not planned: the design ended at stage {done}")
        seeds.update({name: plan["seeds"] for name in plan["sources"]})
    return seeds


def stage_runs(wildcards):
    """The runs the look after this stage reads: (run.json files, the analysis options that read them and the records'
    runs); logs the stage's plan once (a dry run shows it)."""
    stage = int(wildcards.stage)
    if not 1 <= stage <= len(PLAN.looks):
        raise WorkflowError(f"stage {stage} is not a stage of this design: it has stages 1 to {len(PLAN.looks)}")
    seeds, before = sources_at(stage), sources_at(stage - 1) if stage > 1 else {}
    grown = [name for name in seeds if seeds[name] != before.get(name, 0)]
    if stage not in PLANNED:
        PLANNED.add(stage)
        new = sum(seeds[name] - before.get(name, 0) for name in grown)
        added = {name: PLAN.seeds[before.get(name, 0) : seeds[name]] for name in grown}
        made = [path for path in split_runs(added, run_path, PUBLISHED)[0] if not os.path.exists(path)]
        cells, experiments = [n for n in grown if n in CELLS], [n for n in grown if n not in CELLS]
        logger.info(
            f"stage {stage} of at most {len(PLAN.looks)}: {len(cells)} cells and {len(experiments)} "
            f"experiments to {PLAN.looks[stage - 1]} seeds, {new} runs added, {len(made)} to make "
            "(the others are published or here)\n  cells: "
            + (", ".join(cells) or "none")
            + "\n  experiments: "
            + (", ".join(experiments) or "none")
        )
    return runs_of(seeds)


def stage_files(wildcards):
    """The run.json files the look after this stage reads."""
    return stage_runs(wildcards)[0]


def stage_file(stage):
    """The file the look after `stage` writes (the checkpoint's output)."""
    return f"{RESULTS}/stages/stage~{stage}.json"


def previous_look(wildcards):
    """The look before this stage's (none before stage 1): a run that changes under it reruns every later look."""
    stage = int(wildcards.stage)
    return [stage_file(stage - 1)] if stage > 1 else []


def final_stage():
    """The stage that ends the design: the first whose plan is empty (a fixed design: 1)."""
    stage = 1
    while PLAN.sequential and stage_plan(stage):
        stage += 1
    return stage


def final_runs(wildcards=None):
    """Every run of the design, at the seeds its last stage gave each cell and experiment: (run.json files, the analysis
    options that read them and the records' runs)."""
    return runs_of(sources_at(final_stage()))


def final_files(wildcards=None):
    """The run.json files of final_runs (the aggregation's and rule all's inputs)."""
    return final_runs()[0]


def final_look(wildcards):
    """The look that ended a sequential design (none for a fixed one)."""
    return [stage_file(final_stage())] if PLAN.sequential else []


def looks_option(stage):
    """The analysis' options for the looks of stages 1 to `stage`: their seeds and the design's last look."""
    return f"--looks {' '.join(map(str, PLAN.looks[:stage]))} --max-seeds {PLAN.max_seeds}"


def final_looks(wildcards):
    """The aggregation's looks options: a sequential design's looks up to its last stage; none for a fixed one."""
    return looks_option(final_stage()) if PLAN.sequential else ""


checkpoint stage:
    input:
        runs=stage_files,
        previous=previous_look,
        basis=BASIS_FILE,
    output:
        stage_file("{stage}"),
    log:
        f"{RESULTS}/logs/stages/stage~{{stage}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/stages/stage~{{stage}}.tsv"
    localrule: True  # the plan steers the submitting Snakemake; the look takes seconds
    conda:
        "../../envs/analysis.yaml"
    params:
        runs=lambda wildcards: stage_runs(wildcards)[1],
        looks=lambda wildcards: looks_option(int(wildcards.stage)),
        baseline=BASELINE,
        basis=digest(BASIS),
    shell:
        "OMP_NUM_THREADS=1 python -m analysis stage {params.runs} --baseline {params.baseline:q} --basis {params.basis}"
        f" {{params.looks}} --step {PLAN.step} --out {{output:q}} > {{log:q}} 2>&1"
