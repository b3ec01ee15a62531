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
        refused=REFUSED,  # why this CPU may not continue the design's runs, '' where it may (rules/common.smk)
    shell:
        (
            "python -m agentrl base-agent --out {output:q} --substrate {params.substrate} > {log:q} 2>&1"
            if not REFUSED
            else "echo {params.refused:q} | tee {log:q} >&2; exit 1"
        )
