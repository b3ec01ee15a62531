# Trainer runs: one config file per cell (rewritten only when the cell's values change: they are
# the rule's params), then one job per (cell, seed), each a call of `python -m agentrl train`.


rule cell_config:
    output:
        f"{RESULTS}/configs/{{cell}}.json",
    params:
        values=cell_json,
    log:
        f"{RESULTS}/logs/configs/{{cell}}.log",
    localrule: True
    conda:
        "../../envs/agentrl.yaml"
    shell:
        "printf '%s\\n' {params.values:q} > {output:q} 2> {log:q}"


rule train:
    input:
        config=f"{RESULTS}/configs/{{cell}}.json",
        base=rules.base_agent.output[0],
    output:
        f"{RESULTS}/runs/{{cell}}/seed~{{seed}}/run.json",
    log:
        f"{RESULTS}/logs/runs/{{cell}}/seed~{{seed}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/runs/{{cell}}/seed~{{seed}}.tsv"
    threads: 1
    resources:
        runtime=train_runtime,
        mem_mb=1500,
    conda:
        "../../envs/agentrl.yaml"
    shell:
        "OMP_NUM_THREADS=1 python -m agentrl train --config {input.config:q} --seed {wildcards.seed}"
        " --out $(dirname {output:q}) --base {input.base:q} > {log:q} 2>&1"


rule all_runs:
    input:
        run_json(f"{RESULTS}/runs", CELLS),
    localrule: True
