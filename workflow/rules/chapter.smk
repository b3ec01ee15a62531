# The chapter's experiments outside the trainer (agentrl.chapter.experiments): one job per (experiment, seed).


rule experiment:
    input:
        base=experiment_base,
    output:
        f"{RESULTS}/experiments/{{experiment}}/seed~{{seed}}/run.json",
    log:
        f"{RESULTS}/logs/experiments/{{experiment}}/seed~{{seed}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/experiments/{{experiment}}/seed~{{seed}}.tsv"
    conda:
        "../../envs/agentrl.yaml"
    threads: 1
    # runtime in minutes: the slowest experiment (sixteen_epochs) took at most 172 s a seed in the published runs
    # (substrate `larger`)
    resources:
        runtime=5,
        mem_mb=2500,
    params:
        numerics=NUMERICS_VERSION,  # a new version of the numerics remakes it
        substrate=SUBSTRATE,
    shell:
        "python -m agentrl experiment {wildcards.experiment} --seed {wildcards.seed}"
        " --out $(dirname {output:q}) --base {input.base:q} --substrate {params.substrate} > {log:q} 2>&1"


rule all_experiments:
    input:
        stage1_runs(EXPERIMENTS),
    localrule: True
