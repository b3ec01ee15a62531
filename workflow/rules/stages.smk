# A staged design (seeds: {initial, step, max}, or a budgeted one: {initial, max, policy, batch, budget}) runs in
# stages. Stage 1 runs every cell and experiment at seeds 0 to initial - 1; after each stage, the checkpoint `stage`
# decides the ledger on every seed (python -m analysis stage, analysis/ledger/stages.py) and gives the next stage's
# seeds to the cells and experiments that feed a claim still open and projected to a verdict within `max` seeds:
# `step` more each ('every source'), or a batch priced by the design's cost table, each source its own ('greedy').
# The loop ends when no claim asks for seeds, at `max`, or when the budget is spent. The stages are a plan and a
# budget: the ledger's promise holds at any stage.
# A fixed design (a list of seeds) is one stage and has no checkpoint.
#
# Every stage's inputs follow from the checkpoints before it, so a dry run plans up to the next stage not yet
# looked at (and logs its plan and the batch's job-seconds), a finished design has nothing to do, and a stage killed
# half-way resumes.
# A look reads the stage's runs from run directories and the published records (workflow/state.py), and belongs to
# its basis (the design, the claims and the code deciding them, the numerics version, a budgeted design's cost table):
# a new basis is a new basis file, which every look and the aggregation take as input, so they are remade. A look of
# another basis is never read: until it is remade the design ends at it (a dry run plans up to it), and Snakemake
# plans its dependents again once it is. A look of this basis that names a cell or experiment the design does not have
# stops the workflow, naming it.

from workflow.plan import DesignError, added_runs, final_stage, look_file, read_look, seeds_at_stage, stage_summary

PLANNED = set()  # stages whose plan was logged (input functions run more than once)


def look_of(stage):
    """The look after `stage` (workflow/plan.py); {} when it is about to be remade."""
    path = checkpoints.stage.get(stage=stage).output[0]  # an existing look, even one about to be remade
    try:
        return read_look(path, digest(BASIS), BASIS_FILE, [*CELLS, *EXPERIMENTS])
    except ValueError as error:
        raise WorkflowError(str(error)) from None


def sources_at(stage):
    """Cell or experiment -> the seeds it has at stage `stage` (from 1)."""
    try:
        return seeds_at_stage(PLAN, [*CELLS, *EXPERIMENTS], stage, look_of)
    except DesignError as error:
        raise WorkflowError(str(error)) from None


def stage_runs(wildcards):
    """The runs the look after this stage reads: (run.json files, the analysis options that read them and the records'
    runs); logs the stage's plan once (a dry run shows it)."""
    stage = int(wildcards.stage)
    try:
        PLAN.check_stage(stage)
    except DesignError as error:
        raise WorkflowError(str(error)) from None
    seeds = sources_at(stage)
    if stage not in PLANNED:
        PLANNED.add(stage)
        added = added_runs(PLAN, seeds, sources_at(stage - 1) if stage > 1 else {})
        made = [run_of(path) for path in split_runs(added, run_path, PUBLISHED)[0] if not os.path.exists(path)]
        logger.info(stage_summary(PLAN, stage, added, seeds, CELLS, made, look_of(stage - 1) if stage > 1 else {}))
    return runs_of(seeds)


def stage_files(wildcards):
    """The run.json files the look after this stage reads."""
    return stage_runs(wildcards)[0]


def previous_look(wildcards):
    """The look before this stage's (none before stage 1): a run that changes under it reruns every later look."""
    stage = int(wildcards.stage)
    return [look_file(RESULTS, stage - 1)] if stage > 1 else []


def final_runs(wildcards=None):
    """Every run of the design, at the seeds its last stage gave each cell and experiment and every other seed held for
    them: (run.json files, the analysis options that read them and the records' runs)."""
    return runs_of(sources_at(final_stage(PLAN, look_of)), final=True)


def final_files(wildcards=None):
    """The run.json files of final_runs (the aggregation's and rule all's inputs)."""
    return final_runs()[0]


def final_look(wildcards):
    """The look that ended a staged design (none for a fixed one)."""
    return [look_file(RESULTS, final_stage(PLAN, look_of))] if PLAN.staged else []


checkpoint stage:
    input:
        runs=stage_files,
        previous=previous_look,
        basis=BASIS_FILE,
    output:
        look_file(RESULTS, "{stage}"),
    log:
        f"{RESULTS}/logs/stages/stage~{{stage}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/stages/stage~{{stage}}.tsv"
    localrule: True  # the plan steers the submitting Snakemake; the look takes seconds
    conda:
        "../../envs/analysis.yaml"
    params:
        runs=lambda wildcards: stage_runs(wildcards)[1],
        plan=lambda wildcards: PLAN.option(int(wildcards.stage), RESULTS),
        baseline=BASELINE,
        basis=digest(BASIS),
    shell:
        "OMP_NUM_THREADS=1 python -m analysis stage {params.runs} --baseline {params.baseline:q} --basis {params.basis}"
        " {params.plan} --out {output:q} > {log:q} 2>&1"
