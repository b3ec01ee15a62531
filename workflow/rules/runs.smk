# Trainer runs: one config file per cell (rewritten only when the cell's values change: they are
# the rule's params; `python -m workflow.design cell NAME` prints the same file), then one job per
# (cell, seed), each a call of `python -m agentrl train`.


rule cell_config:
    output:
        f"{RESULTS}/configs/{{cell}}.json",
    log:
        f"{RESULTS}/logs/configs/{{cell}}.log",  # empty: the job writes one small file, in-process
    localrule: True
    params:
        text=cell_file,
    run:
        write_text(output[0], params.text)  # by hand: python -m workflow.design cell NAME --configfile F


rule train:
    input:
        config=f"{RESULTS}/configs/{{cell}}.json",
        base=job_base,
        critic=critic_input,
    output:
        f"{RESULTS}/runs/{{cell}}/seed~{{seed}}/run.json",
    log:
        f"{RESULTS}/logs/runs/{{cell}}/seed~{{seed}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/runs/{{cell}}/seed~{{seed}}.tsv"
    conda:
        "../../envs/agentrl.yaml"
    threads: 1
    resources:
        runtime=train_runtime,
        mem_mb=1500,
    params:
        critic=critic_option,
        numerics=NUMERICS_VERSION,  # a new version of the numerics reruns every run
        substrate=SUBSTRATE,
    shell:
        "python -m agentrl train --config {input.config:q} --seed {wildcards.seed}"
        " --out $(dirname {output:q}) --base {input.base:q} --substrate {params.substrate}"
        " {params.critic} > {log:q} 2>&1"


rule all_runs:
    input:
        stage1_runs(CELLS),
    localrule: True
