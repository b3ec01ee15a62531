# The base agent: pretrained once (cached by agentrl under $AGENTRL_CACHE_DIR or ~/.cache/agentrl)
# and exported to one file that every trainer run and experiment starts from.


rule base_agent:
    output:
        f"{RESULTS}/base_agent.pt",
    log:
        f"{RESULTS}/logs/base_agent.log",
    benchmark:
        f"{RESULTS}/benchmarks/base_agent.tsv"
    conda:
        "../../envs/agentrl.yaml"
    threads: 1
    resources:
        runtime=30,
        mem_mb=1000,
    params:
        numerics=NUMERICS_VERSION,  # a new version of the numerics remakes it
        substrate=SUBSTRATE,
    shell:
        "python -m agentrl base-agent --out {output:q} --substrate {params.substrate} > {log:q} 2>&1"
