# A sequential design (seeds: {initial, step, max}) runs in stages. Stage 1 runs every cell and experiment at
# seeds 0 to initial - 1; after each stage, the checkpoint `stage` looks at the claims (python -m analysis stage:
# group-sequential cut-offs, analysis/sequential.py) and names the cells and experiments that feed a claim still
# undecided; the next stage gives those `step` more seeds. The loop ends when every claim is decided or at `max`.
# A fixed design (a list of seeds) is one stage and has no checkpoint.
#
# Every stage's inputs follow from the checkpoints before it, so a dry run plans up to the next stage not yet
# looked at (and logs its plan), a finished design has nothing to do, and a stage killed half-way resumes.

import json

PLANNED = set()  # stages whose plan was logged (input functions run more than once)


def stage_plan(stage):
    """The plan the checkpoint of `stage` wrote: {seeds, sources} of the next stage, {} when the design is done."""
    with open(checkpoints.stage.get(stage=stage).output[0]) as file:
        return json.load(file)["next"]


def sources_at(stage):
    """Cell or experiment -> the seeds it has in stage `stage` (from 1): the first stage's, raised by each plan."""
    seeds = {name: PLAN.looks[0] for name in [*CELLS, *EXPERIMENTS]}
    for done in range(1, stage):
        plan = stage_plan(done)
        if not plan:
            raise WorkflowError(f"stage {stage} is not planned: the design ended at stage {done}")
        seeds.update({name: plan["seeds"] for name in plan["sources"]})
    return seeds


def runs_of(seeds):
    """The run.json of every cell and experiment at its seeds."""
    return [path for name, n in seeds.items()
            for path in run_json(f"{RESULTS}/runs" if name in CELLS else f"{RESULTS}/experiments", [name],
                                 PLAN.seeds[:n])]


def stage_runs(wildcards):
    """The runs the look after this stage reads; logs the stage's plan once (a dry run shows it)."""
    stage = int(wildcards.stage)
    if not 1 <= stage <= len(PLAN.looks):
        raise WorkflowError(f"stage {stage} is not a stage of this design: it has stages 1 to {len(PLAN.looks)}")
    seeds, before = sources_at(stage), sources_at(stage - 1) if stage > 1 else {}
    grown = [name for name in seeds if seeds[name] != before.get(name, 0)]
    if stage not in PLANNED:
        PLANNED.add(stage)
        new = sum(seeds[name] - before.get(name, 0) for name in grown)
        cells, experiments = [n for n in grown if n in CELLS], [n for n in grown if n not in CELLS]
        logger.info(f"stage {stage} of at most {len(PLAN.looks)}: {len(cells)} cells and {len(experiments)} "
                    f"experiments to {PLAN.looks[stage - 1]} seeds, {new} runs added\n  cells: "
                    + (", ".join(cells) or "none") + "\n  experiments: " + (", ".join(experiments) or "none"))
    return runs_of(seeds)


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
    """Every run of the design, at the seeds its last stage gave each cell and experiment."""
    return runs_of(sources_at(final_stage()))


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
        runs=stage_runs,
        previous=previous_look,
    output:
        stage_file("{stage}"),
    params:
        looks=lambda wildcards: looks_option(int(wildcards.stage)),
        baseline=BASELINE,
    log:
        f"{RESULTS}/logs/stages/stage~{{stage}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/stages/stage~{{stage}}.tsv"
    localrule: True  # the plan steers the submitting Snakemake; the look takes seconds
    conda:
        "../../envs/analysis.yaml"
    shell:
        "OMP_NUM_THREADS=1 python -m analysis stage --run-files {input.runs:q} --baseline {params.baseline:q}"
        f" {{params.looks}} --step {PLAN.step} --out {{output:q}} > {{log:q}} 2>&1"
