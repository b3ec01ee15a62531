# The base agent: pretrained once (cached by agentrl under $AGENTRL_CACHE_DIR or ~/.cache/agentrl)
# and exported to one file that every trainer run and experiment starts from.


rule base_agent:
    output:
        f"{RESULTS}/base_agent.pt",
    params:
        numerics=NUMERICS_VERSION,  # a new version of the numerics remakes it
    log:
        f"{RESULTS}/logs/base_agent.log",
    benchmark:
        f"{RESULTS}/benchmarks/base_agent.tsv"
    threads: 1
    resources:
        runtime=30,
        mem_mb=1000,
    conda:
        "../../envs/agentrl.yaml"
    shell:
        "OMP_NUM_THREADS=1 python -m agentrl base-agent --out {output:q} > {log:q} 2>&1"
